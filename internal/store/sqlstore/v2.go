package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The storage of the v2 interface: idempotency keys (D35), key spend (D36),
// statistics and transactions (D37), notifications (D43), listing (D44).

func scanIdempotency(scan func(dest ...any) error) (*drip.Idempotency, error) {
	var r drip.Idempotency
	var created int64
	err := scan(&r.FaucetID, &r.Key, &r.RequestHash, &r.PayoutID, &r.Coin, &r.Balance, &r.PayoutUserHash,
		&r.RateRemaining, &created)
	if err != nil {
		return nil, err
	}
	r.CreatedAt = fromMicros(created)
	return &r, nil
}

func (q *querier) IdempotencyGet(ctx context.Context, faucetID int64, key string) (*drip.Idempotency, error) {
	return scanIdempotency(func(dest ...any) error {
		return q.scanRow(ctx, q.q.IdempotencyGet, []any{faucetID, key}, dest...)
	})
}

func (q *querier) IdempotencyGetMany(ctx context.Context, faucetID int64, keys []string) ([]drip.Idempotency, error) {
	body, err := json.Marshal(append([]string{}, keys...)) // a list, [] for none: never null
	if err != nil {
		return nil, err
	}
	var out []drip.Idempotency
	err = q.list(ctx, q.q.IdempotencyGetMany, []any{faucetID, string(body)}, func(r Rows) error {
		k, err := scanIdempotency(r.Scan)
		if err == nil {
			out = append(out, *k)
		}
		return err
	})
	return out, err
}

func (q *querier) IdempotencyInsert(ctx context.Context, r *drip.Idempotency) error {
	_, err := q.exec(ctx, q.q.IdempotencyInsert, r.FaucetID, r.Key, r.RequestHash, r.PayoutID, r.Coin, r.Balance,
		r.PayoutUserHash, r.RateRemaining, micros(r.CreatedAt))
	return err
}

func (q *querier) IdempotencyDeleteBefore(ctx context.Context, before time.Time) (int64, error) {
	return q.exec(ctx, q.q.IdempotencyDeleteBefore, micros(before))
}

func (q *querier) CacheGeneration(ctx context.Context) (store.CacheGen, error) {
	var gen store.CacheGen
	err := q.scanRow(ctx, q.q.CacheGeneration, nil, &gen.Keys, &gen.Recipients)
	return gen, err
}

func (q *querier) KeySpendGet(ctx context.Context, keyID, day int64) (int64, error) {
	var spent int64
	err := q.scanRow(ctx, q.q.KeySpendGet, []any{keyID, day}, &spent)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return spent, err
}

func (q *querier) KeySpendAdd(ctx context.Context, keyID, day, amount, capMicros int64) (int64, error) {
	dayRow, sum := q.spendCalls(keyID, day, amount, capMicros)
	if _, err := q.exec(ctx, dayRow.s, dayRow.args...); err != nil {
		return 0, err
	}
	var spent int64
	err := q.scanRow(ctx, sum.s, sum.args, &spent)
	if errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%s: %w", sum.s.name, sum.short)
	}
	return spent, err
}

// spendCalls are the statements that add amount to a key's spend of a
// day: the day's row made if missing, then the sum, which changes no row
// (ErrLimitReached) if it would pass capMicros (D36).
func (q *querier) spendCalls(keyID, day, amount, capMicros int64) (dayRow, sum call) {
	return call{s: q.q.KeySpendInit, args: []any{keyID, day}},
		call{s: q.q.KeySpendAdd, args: []any{keyID, day, amount, capMicros}, want: 1, short: store.ErrLimitReached}
}

const microsPerDay = 86_400_000_000

func (q *querier) StatsDaily(ctx context.Context, faucetID int64, since time.Time) ([]drip.DailyStat, error) {
	var out []drip.DailyStat
	err := q.list(ctx, q.q.StatsDaily, []any{faucetID, micros(since)}, func(r Rows) error {
		var s drip.DailyStat
		var day int64
		err := r.Scan(&day, &s.Coin, &s.Payouts, &s.Amount, &s.Recipients)
		s.Day = fromMicros(day * microsPerDay)
		out = append(out, s)
		return err
	})
	return out, err
}

func (q *querier) StatsUsers(ctx context.Context, p *store.PageParams) ([]drip.UserStat, int64, error) {
	var total int64
	if err := q.scanRow(ctx, q.q.StatsUsersCount, []any{p.ID, p.Coin}, &total); err != nil {
		return nil, 0, err
	}
	out := []drip.UserStat{}
	err := q.list(ctx, q.q.StatsUsers, []any{p.ID, p.Coin, p.Limit, p.Offset}, func(r Rows) error {
		var s drip.UserStat
		var last int64
		err := r.Scan(&s.PayoutUserHash, &s.Payouts, &s.Amount, &last)
		s.LastPayoutAt = fromMicros(last)
		out = append(out, s)
		return err
	})
	return out, total, err
}

func (q *querier) TransactionList(ctx context.Context, p *store.PageParams) ([]drip.Transaction, int64, error) {
	var total int64
	if err := q.scanRow(ctx, q.q.TransactionCount, []any{p.ID, p.Coin}, &total); err != nil {
		return nil, 0, err
	}
	out := []drip.Transaction{}
	err := q.list(ctx, q.q.TransactionList, []any{p.ID, p.Coin, p.Limit, p.Offset}, func(r Rows) error {
		var t drip.Transaction
		var created int64
		err := r.Scan(&t.ID, &t.Kind, &t.Coin, &t.Amount, &t.PayoutID, &created)
		t.CreatedAt = fromMicros(created)
		out = append(out, t)
		return err
	})
	return out, total, err
}

func scanNotification(scan func(dest ...any) error) (drip.Notification, error) {
	var n drip.Notification
	var created int64
	var sent *int64
	err := scan(&n.ID, &n.FaucetID, &n.Kind, &n.Coin, &n.Threshold, &n.Balance, &created, &sent, &n.Attempts,
		&n.LastError, &n.Channel, &n.Detail)
	n.CreatedAt, n.SentAt = fromMicros(created), optionalTime(sent)
	return n, err
}

func (q *querier) NotificationInsert(ctx context.Context, n *drip.Notification) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.NotificationInsert, []any{n.FaucetID, n.Kind, n.Coin, n.Threshold, n.Balance,
		micros(n.CreatedAt), n.Detail}, &id)
	return id, err
}

func (q *querier) notifications(ctx context.Context, sql stmt, args ...any) ([]drip.Notification, error) {
	out := []drip.Notification{}
	err := q.list(ctx, sql, args, func(r Rows) error {
		n, err := scanNotification(r.Scan)
		out = append(out, n)
		return err
	})
	return out, err
}

func (q *querier) NotificationListByFaucet(ctx context.Context, faucetID int64, limit int) ([]drip.Notification, error) {
	return q.notifications(ctx, q.q.NotificationListByFaucet, faucetID, limit)
}

func (q *querier) NotificationBacklog(ctx context.Context, maxAttempts int) (int64, time.Time, error) {
	var pending int64
	var oldest *int64
	if err := q.scanRow(ctx, q.q.NotificationBacklog, []any{maxAttempts}, &pending, &oldest); err != nil {
		return 0, time.Time{}, err
	}
	if oldest == nil {
		return pending, time.Time{}, nil
	}
	return pending, fromMicros(*oldest), nil
}

func (q *querier) NotificationClaim(ctx context.Context, now time.Time, lease time.Duration, maxAttempts, limit int) ([]drip.Notification, error) {
	due, err := q.notifications(ctx, q.q.NotificationDue, micros(now), maxAttempts, limit)
	if err != nil {
		return nil, err
	}
	for _, n := range due {
		if _, err := q.exec(ctx, q.q.NotificationLease, n.ID, micros(now.Add(lease))); err != nil {
			return nil, err
		}
	}
	return due, nil
}

func (q *querier) NotificationRecord(ctx context.Context, n *drip.Notification, nextAttempt time.Time) error {
	var sent any
	if n.SentAt != nil {
		sent = micros(*n.SentAt)
	}
	return q.execOne(ctx, q.q.NotificationRecord, n.ID, sent, micros(nextAttempt), n.LastError, n.Channel, n.Attempts)
}

func (q *querier) ListingCostList(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	err := q.list(ctx, q.q.ListingCostList, nil, func(r Rows) error {
		var coin string
		var amount int64
		err := r.Scan(&coin, &amount)
		out[coin] = amount
		return err
	})
	return out, err
}

func (q *querier) ListingCostSet(ctx context.Context, coin string, amount int64, at time.Time) error {
	if amount == 0 {
		_, err := q.exec(ctx, q.q.ListingCostDelete, coin)
		return err
	}
	_, err := q.exec(ctx, q.q.ListingCostSet, coin, amount, micros(at))
	return err
}

func scanListing(scan func(dest ...any) error) (drip.ListingRequest, error) {
	var l drip.ListingRequest
	var status string
	var created int64
	var decided *int64
	err := scan(&l.ID, &l.FaucetID, &l.Coin, &l.Amount, &status, &created, &decided)
	l.Status, l.CreatedAt, l.DecidedAt = drip.ListingStatus(status), fromMicros(created), optionalTime(decided)
	return l, err
}

func (q *querier) ListingRequestCreate(ctx context.Context, r *drip.ListingRequest, transferID int64) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.ListingRequestCreate, []any{r.FaucetID, r.Coin, r.Amount, transferID, micros(r.CreatedAt)}, &id)
	return id, err
}

func (q *querier) ListingRequestGet(ctx context.Context, id int64) (*drip.ListingRequest, error) {
	l, err := scanListing(func(dest ...any) error { return q.scanRow(ctx, q.q.ListingRequestGet, []any{id}, dest...) })
	if err != nil {
		return nil, err
	}
	return &l, nil
}

func (q *querier) listings(ctx context.Context, sql stmt, args ...any) ([]drip.ListingRequest, error) {
	out := []drip.ListingRequest{}
	err := q.list(ctx, sql, args, func(r Rows) error {
		l, err := scanListing(r.Scan)
		out = append(out, l)
		return err
	})
	return out, err
}

func (q *querier) ListingRequestListByFaucet(ctx context.Context, faucetID int64) ([]drip.ListingRequest, error) {
	return q.listings(ctx, q.q.ListingRequestListByFaucet, faucetID)
}

func (q *querier) ListingRequestListByStatus(ctx context.Context, status drip.ListingStatus) ([]drip.ListingRequest, error) {
	return q.listings(ctx, q.q.ListingRequestListByStatus, string(status))
}

func (q *querier) ListingRequestDecide(ctx context.Context, id int64, status drip.ListingStatus, at time.Time, refundTransferID int64) error {
	return q.execOne(ctx, q.q.ListingRequestDecide, id, string(status), micros(at), refundTransferID)
}

func (q *querier) AuditInsert(ctx context.Context, e *drip.AuditEntry) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.AuditInsert, []any{e.FaucetID, e.KeyID, e.UserID, e.Tool, string(e.Arguments), e.Result,
		e.IsError, micros(e.CreatedAt)}, &id)
	return id, err
}

func (q *querier) AuditList(ctx context.Context, faucetID int64, limit int, beforeID int64) ([]drip.AuditEntry, error) {
	out := []drip.AuditEntry{}
	err := q.list(ctx, q.q.AuditList, []any{faucetID, limit, beforeID}, func(r Rows) error {
		var e drip.AuditEntry
		var args string
		var created int64
		err := r.Scan(&e.ID, &e.FaucetID, &e.KeyID, &e.KeyPrefix, &e.UserID, &e.Username, &e.Tool, &args, &e.Result, &e.IsError, &created)
		e.Arguments, e.CreatedAt = []byte(args), fromMicros(created)
		out = append(out, e)
		return err
	})
	return out, err
}
