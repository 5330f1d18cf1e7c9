package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/dripfaucet/drip/internal/store"
)

func (q *querier) BalancesLock(ctx context.Context, keys []store.BalanceKey) (map[store.BalanceKey]int64, error) {
	rows := make([]creditRow, len(keys))
	for i, k := range keys {
		rows[i] = creditRow{AccountID: k.Account, Coin: k.Coin}
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	out := make(map[store.BalanceKey]int64, len(keys))
	err = q.list(ctx, q.q.BalancesLock, []any{string(body)}, func(r Rows) error {
		var k store.BalanceKey
		var amount int64
		err := r.Scan(&k.Account, &k.Coin, &amount)
		out[k] = amount
		return err
	})
	return out, err
}

func (q *querier) BalancesDebit(ctx context.Context, debits map[store.BalanceKey]int64) error {
	rows, err := balanceRows(debits)
	if err != nil {
		return err
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	n, err := q.exec(ctx, q.q.BalancesDebit, string(body))
	if err != nil {
		return err
	}
	if n != int64(len(rows)) {
		// Some balance could not cover its debit. The caller's transaction
		// must roll back: the debits that did apply are not undone here.
		return fmt.Errorf("%s: %w", q.q.BalancesDebit.name, store.ErrInsufficientFunds)
	}
	return nil
}

func (q *querier) PayoutIDsNext(ctx context.Context, n int) (transferIDs, payoutIDs []int64, err error) {
	transferIDs, payoutIDs = make([]int64, 0, n), make([]int64, 0, n)
	err = q.list(ctx, q.q.PayoutIDsNext, []any{n}, func(r Rows) error {
		var t, p int64
		err := r.Scan(&t, &p)
		transferIDs, payoutIDs = append(transferIDs, t), append(payoutIDs, p)
		return err
	})
	if err == nil && len(payoutIDs) != n {
		err = fmt.Errorf("%s: reserved %d ids of %d", q.q.PayoutIDsNext.name, len(payoutIDs), n)
	}
	return transferIDs, payoutIDs, err
}

// The rows of the batch statements, as their JSON array parameters carry them.
type (
	transferRow struct {
		ID          int64  `json:"id"`
		Coin        string `json:"coin"`
		FromAccount int64  `json:"from_account"`
		ToAccount   int64  `json:"to_account"`
		Amount      int64  `json:"amount"`
	}
	payoutRow struct {
		ID          int64  `json:"id"`
		FaucetID    int64  `json:"faucet_id"`
		RecipientID int64  `json:"recipient_id"`
		TransferID  int64  `json:"transfer_id"`
		ToGiven     string `json:"to_given"`
		Coin        string `json:"coin"`
		Amount      int64  `json:"amount"`
		IPAddress   string `json:"ip_address"`
		Referral    string `json:"referral"`
	}
	creditRow struct {
		AccountID int64  `json:"account_id"`
		Coin      string `json:"coin"`
		Amount    int64  `json:"amount"`
	}
	eventRow struct {
		ID       string `json:"id"`
		FaucetID int64  `json:"faucet_id"`
		Type     string `json:"type"`
		Data     string `json:"data"`
	}
)

func (q *querier) PayoutsInsert(ctx context.Context, b *store.PayoutBatch) error {
	at := micros(b.CreatedAt)
	var calls []call
	add := func(s stmt, rows any, stamp any) error {
		c, err := jsonCall(s, rows, stamp)
		calls = append(calls, c)
		return err
	}
	if len(b.Payouts) > 0 {
		transfers := make([]transferRow, len(b.Payouts))
		payouts := make([]payoutRow, len(b.Payouts))
		for i, bp := range b.Payouts {
			p := &bp.Payout
			transfers[i] = transferRow{bp.TransferID, p.Coin, bp.From, bp.To, p.Amount}
			payouts[i] = payoutRow{p.ID, p.FaucetID, p.RecipientID, bp.TransferID, p.To, p.Coin, p.Amount, p.IPAddress, p.Referral}
		}
		credits, err := balanceRows(b.Credits)
		if err != nil {
			return err
		}
		if err := errors.Join(add(q.q.TransfersInsertJSON, transfers, at), add(q.q.PayoutsInsertJSON, payouts, at),
			add(q.q.BalancesCreditJSON, credits, nil)); err != nil {
			return err
		}
	}
	// A key's spend is added once per batch, guarded by its cap (D36).
	for _, sp := range b.Spends {
		dayRow, sum := q.spendCalls(sp.KeyID, sp.Day, sp.Micros, sp.CapMicros)
		calls = append(calls, dayRow, sum)
	}
	// After the payouts: an idempotency row refers to its payout. A key
	// used already (by another node) fails the batch with ErrConflict.
	if len(b.Idempotency) > 0 {
		rows := make([]idempotencyRow, len(b.Idempotency))
		for i, r := range b.Idempotency {
			rows[i] = idempotencyRow{r.FaucetID, r.Key, r.RequestHash, r.PayoutID, r.Coin, r.Balance, r.PayoutUserHash, r.RateRemaining}
		}
		if err := add(q.q.IdempotencyInsertJSON, rows, at); err != nil {
			return err
		}
	}
	if len(b.Notifications) > 0 {
		rows := make([]notificationRow, len(b.Notifications))
		for i, n := range b.Notifications {
			rows[i] = notificationRow{n.FaucetID, n.Kind, n.Coin, n.Threshold, n.Balance}
		}
		if err := add(q.q.NotificationsInsertJSON, rows, at); err != nil {
			return err
		}
	}
	if len(b.Events) > 0 {
		events := make([]eventRow, len(b.Events))
		for i, e := range b.Events {
			events[i] = eventRow{e.ID, e.FaucetID, e.Type, string(e.Data)}
		}
		if err := add(q.q.EventsInsertJSON, events, at); err != nil {
			return err
		}
	}
	return q.execAll(ctx, calls)
}

// call is one statement of execAll. none, when set, is the error of the
// statement changing no row.
type call struct {
	s    stmt
	args []any
	none error
}

// execAll runs statements in order, stopping at the first that fails: on
// an engine that pipelines them (Pipeliner), in one round trip, else one
// at a time. A statement that changed no row where that is an error
// (call.none) fails the whole once all have run.
func (q *querier) execAll(ctx context.Context, calls []call) error {
	queries, args := make([]string, len(calls)), make([][]any, len(calls))
	for i, c := range calls {
		queries[i], args[i] = c.s.sql, c.args
	}
	run := execEach(q.c)
	if p, ok := q.c.(Pipeliner); ok {
		run = p.ExecAll
	}
	n, failed, err := run(ctx, queries, args)
	if err != nil {
		return q.fail(calls[failed].s, err)
	}
	for i, c := range calls {
		if n[i] == 0 && c.none != nil {
			return fmt.Errorf("%s: %w", c.s.name, c.none)
		}
	}
	return nil
}

// execEach is Pipeliner.ExecAll for a connection that cannot pipeline:
// the statements one round trip each.
func execEach(c Conn) func(ctx context.Context, queries []string, args [][]any) ([]int64, int, error) {
	return func(ctx context.Context, queries []string, args [][]any) ([]int64, int, error) {
		n := make([]int64, len(queries))
		for i, query := range queries {
			var err error
			if n[i], err = c.Exec(ctx, query, args[i]...); err != nil {
				return nil, i, err
			}
		}
		return n, len(queries) - 1, nil
	}
}

// balanceRows orders per-balance amounts (all positive) by account and
// coin: every statement that changes several balances touches them in this
// one order, so concurrent writers cannot deadlock.
func balanceRows(amounts map[store.BalanceKey]int64) ([]creditRow, error) {
	rows := make([]creditRow, 0, len(amounts))
	for k, amount := range amounts {
		if amount <= 0 {
			return nil, fmt.Errorf("store: balance change of %d: amount must be positive", amount)
		}
		rows = append(rows, creditRow{AccountID: k.Account, Coin: k.Coin, Amount: amount})
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].AccountID < rows[j].AccountID || rows[i].AccountID == rows[j].AccountID && rows[i].Coin < rows[j].Coin
	})
	return rows, nil
}

// execJSON runs a batch statement over rows given as a JSON array ($1)
// and, when at is not nil, the batch's timestamp ($2).
func (q *querier) execJSON(ctx context.Context, s stmt, rows any, at any) error {
	c, err := jsonCall(s, rows, at)
	if err != nil {
		return err
	}
	_, err = q.exec(ctx, c.s, c.args...)
	return err
}

// jsonCall is the call of a batch statement as execJSON runs it.
func jsonCall(s stmt, rows any, at any) (call, error) {
	body, err := json.Marshal(rows)
	if err != nil {
		return call{}, err
	}
	args := []any{string(body)}
	if at != nil {
		args = append(args, at)
	}
	return call{s: s, args: args}, nil
}
