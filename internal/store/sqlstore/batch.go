package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dripfaucet/drip/internal/store"
)

func (q *querier) PayoutsOpen(ctx context.Context, p *store.PayoutsOpenParams) (*store.PayoutBooks, error) {
	// One lock order for every transaction: faucets by ascending id, then
	// balances by ascending account and coin.
	faucets, keys, n := slices.Sorted(slices.Values(p.Faucets)), slices.Clone(p.Balances), p.IDs
	slices.SortFunc(keys, compareBalanceKeys)
	b := &store.PayoutBooks{Balances: make(map[store.BalanceKey]int64, len(keys)), Windows: make([]store.PayoutCount, len(p.Windows))}
	calls := make([]call, 0, len(faucets)+len(keys)+len(p.Windows)+1)
	locked := 0
	for _, id := range faucets {
		calls = append(calls, call{s: q.q.FaucetLock, args: []any{id}, scan: func(r Rows) error {
			locked++
			var id int64
			return r.Scan(&id)
		}})
	}
	for _, k := range keys {
		calls = append(calls, call{s: q.q.BalanceLock, args: []any{k.Account, k.Coin}, scan: func(r Rows) error {
			var amount int64
			err := r.Scan(&amount)
			b.Balances[k] = amount
			return err
		}})
	}
	for i := range p.Windows {
		calls = append(calls, q.windowCall(&p.Windows[i], &b.Windows[i]))
	}
	if n > 0 {
		b.TransferIDs, b.PayoutIDs = make([]int64, 0, n), make([]int64, 0, n)
		calls = append(calls, call{s: q.q.PayoutIDsNext, args: []any{n}, scan: func(r Rows) error {
			var t, p int64
			err := r.Scan(&t, &p)
			b.TransferIDs, b.PayoutIDs = append(b.TransferIDs, t), append(b.PayoutIDs, p)
			return err
		}})
	}
	if err := q.execAll(ctx, calls); err != nil {
		return nil, err
	}
	if locked != len(faucets) {
		return nil, fmt.Errorf("%s: %w", q.q.FaucetLock.name, store.ErrNotFound)
	}
	if len(b.PayoutIDs) != n {
		return nil, fmt.Errorf("%s: reserved %d ids of %d", q.q.PayoutIDsNext.name, len(b.PayoutIDs), n)
	}
	return b, nil
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
	// The senders' debits first, each refused past its balance: a guard
	// that fails the batch should the books have gone stale.
	debits, err := balanceRows(b.Debits)
	if err != nil {
		return err
	}
	for _, d := range debits {
		calls = append(calls, call{s: q.q.BalanceDebit, args: []any{d.AccountID, d.Coin, d.Amount},
			want: 1, short: store.ErrInsufficientFunds})
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

// call is one statement of execAll. scan, when set, reads the rows it
// returns. short, when set, is the error of the statement changing fewer
// than want rows.
type call struct {
	s     stmt
	args  []any
	scan  func(Rows) error
	want  int64
	short error
}

// execAll runs statements in order, stopping at the first that fails: on
// an engine that pipelines them (Pipeliner), in one round trip, else one
// at a time. A statement that changed fewer rows than it must
// (call.short) fails the whole once all have run.
func (q *querier) execAll(ctx context.Context, calls []call) error {
	if len(calls) == 0 {
		return nil
	}
	statements := make([]Statement, len(calls))
	for i, c := range calls {
		statements[i] = Statement{SQL: c.s.sql, Args: c.args, Scan: c.scan}
	}
	run := runEach(q.c)
	if p, ok := q.c.(Pipeliner); ok {
		run = p.Pipeline
	}
	n, failed, err := run(ctx, statements)
	if err != nil {
		return q.fail(calls[failed].s, err)
	}
	for i, c := range calls {
		if c.short != nil && n[i] < c.want {
			return fmt.Errorf("%s: %w", c.s.name, c.short)
		}
	}
	return nil
}

// runEach is Pipeliner.Pipeline for a connection that cannot pipeline:
// the statements one round trip each.
func runEach(c Conn) func(ctx context.Context, statements []Statement) ([]int64, int, error) {
	return func(ctx context.Context, statements []Statement) ([]int64, int, error) {
		n := make([]int64, len(statements))
		for i, st := range statements {
			var err error
			if st.Scan == nil {
				n[i], err = c.Exec(ctx, st.SQL, st.Args...)
			} else {
				err = scanAll(ctx, c, st)
			}
			if err != nil {
				return nil, i, err
			}
		}
		return n, len(statements) - 1, nil
	}
}

// scanAll runs a statement with Scan, reading every row it returns.
func scanAll(ctx context.Context, c Conn, st Statement) error {
	rows, err := c.Query(ctx, st.SQL, st.Args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := st.Scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// balanceRows orders per-balance amounts (all positive) by account and
// coin: every statement that changes several balances touches them in this
// one order, so concurrent writers cannot deadlock.
func balanceRows(amounts map[store.BalanceKey]int64) ([]creditRow, error) {
	keys := slices.SortedFunc(maps.Keys(amounts), compareBalanceKeys)
	rows := make([]creditRow, len(keys))
	for i, k := range keys {
		if amounts[k] <= 0 {
			return nil, fmt.Errorf("store: balance change of %d: amount must be positive", amounts[k])
		}
		rows[i] = creditRow{AccountID: k.Account, Coin: k.Coin, Amount: amounts[k]}
	}
	return rows, nil
}

// compareBalanceKeys is the lock order of balances: by account, then coin.
func compareBalanceKeys(a, b store.BalanceKey) int {
	return cmp.Or(cmp.Compare(a.Account, b.Account), strings.Compare(a.Coin, b.Coin))
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
