package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
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
	b := &store.PayoutBooks{Balances: make(map[store.BalanceKey]int64, len(keys)), Debits: make(map[store.BalanceKey]int64, len(keys)),
		Windows: make([]store.PayoutCount, len(p.Windows))}
	calls := make([]call, 0, len(faucets)+len(keys)+len(p.Windows)+len(p.Idempotency)+2)
	if p.Generation {
		calls = append(calls, call{s: q.q.CacheGeneration, scan: func(r Rows) error { return r.Scan(&b.Generation.Keys, &b.Generation.Recipients) }})
	}
	locked := 0
	calls = append(calls, q.rowCalls(q.q.FaucetLock, q.q.FaucetsLockRows, []Column{ints("id", faucets)}, call{scan: func(r Rows) error {
		locked++
		var id int64
		return r.Scan(&id)
	}})...)
	accounts, coins := make([]int64, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		accounts[i], coins[i] = k.Account, k.Coin
	}
	calls = append(calls, q.rowCalls(q.q.BalanceLock, q.q.BalancesLockRows, []Column{ints("account_id", accounts), texts("coin", coins)}, call{scan: func(r Rows) error {
		var k store.BalanceKey
		var amount, debits int64
		err := r.Scan(&k.Account, &k.Coin, &amount, &debits)
		b.Balances[k], b.Debits[k] = amount, debits
		return err
	}})...)
	calls = append(calls, q.windowCalls(p.Windows, b.Windows)...)
	if n := len(p.Idempotency); n > 0 {
		b.Bound = make(map[store.IdempotencyKey]bool, n)
		keyFaucets, keyNames := make([]int64, n), make([]string, n)
		for i, k := range p.Idempotency {
			keyFaucets[i], keyNames[i] = k.FaucetID, k.Key
		}
		c := rowsCall(q.q.IdempotencyBoundRows, []Column{ints("faucet_id", keyFaucets), texts("idem_key", keyNames)})
		c.scan = func(r Rows) error {
			var k store.IdempotencyKey
			err := r.Scan(&k.FaucetID, &k.Key)
			b.Bound[k] = true
			return err
		}
		calls = append(calls, c)
	}
	if n > 0 {
		b.TransferIDs, b.PayoutIDs = make([]int64, 0, n), make([]int64, 0, n)
		// Each row is a run of consecutive ids of both tables: its first
		// transfer and payout ids and its length (see PayoutIDsNext).
		calls = append(calls, call{s: q.q.PayoutIDsNext, args: []any{n}, scan: func(r Rows) error {
			var t, p, run int64
			if err := r.Scan(&t, &p, &run); err != nil {
				return err
			}
			if run < 1 || len(b.PayoutIDs)+int(run) > n {
				return fmt.Errorf("%s: a run of %d ids, %d reserved of %d", q.q.PayoutIDsNext.name, run, len(b.PayoutIDs), n)
			}
			for i := range run {
				b.TransferIDs, b.PayoutIDs = append(b.TransferIDs, t+i), append(b.PayoutIDs, p+i)
			}
			return nil
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

// creditRow is one balance's change in a batch.
type creditRow struct {
	AccountID int64
	Coin      string
	Amount    int64
}

func (q *querier) PayoutsInsert(ctx context.Context, b *store.PayoutBatch) error {
	at := micros(b.CreatedAt)
	var calls []call
	// The senders' debits first, each refused past its balance: a guard
	// that fails the batch should the books have gone stale.
	debits, err := balanceRows(b.Debits)
	if err != nil {
		return err
	}
	if n := len(debits); n > 0 {
		accounts, coins, amounts := make([]int64, n), make([]string, n), make([]int64, n)
		for i, d := range debits {
			accounts[i], coins[i], amounts[i] = d.AccountID, d.Coin, d.Amount
		}
		calls = append(calls, q.rowCalls(q.q.BalanceDebit, q.q.BalancesDebitRows, []Column{ints("account_id", accounts),
			texts("coin", coins), ints("amount", amounts)}, call{short: store.ErrInsufficientFunds})...)
	}
	if n := len(b.Payouts); n > 0 {
		ids, transferIDs, from, to := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		faucets, recipients, amounts := make([]int64, n), make([]int64, n), make([]int64, n)
		coins, given, ips, referrals := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		for i, bp := range b.Payouts {
			p := &bp.Payout
			ids[i], transferIDs[i], from[i], to[i] = p.ID, bp.TransferID, bp.From, bp.To
			faucets[i], recipients[i], amounts[i] = p.FaucetID, p.RecipientID, p.Amount
			coins[i], given[i], ips[i], referrals[i] = p.Coin, p.To, p.IPAddress, p.Referral
		}
		credits, err := balanceRows(b.Credits)
		if err != nil {
			return err
		}
		accounts, creditCoins, creditAmounts := make([]int64, len(credits)), make([]string, len(credits)), make([]int64, len(credits))
		for i, c := range credits {
			accounts[i], creditCoins[i], creditAmounts[i] = c.AccountID, c.Coin, c.Amount
		}
		calls = append(calls,
			rowsCall(q.q.TransfersInsertRows, []Column{ints("id", transferIDs), texts("coin", coins),
				ints("from_account", from), ints("to_account", to), ints("amount", amounts)}, at),
			rowsCall(q.q.PayoutsInsertRows, []Column{ints("id", ids), ints("faucet_id", faucets),
				ints("recipient_id", recipients), ints("transfer_id", transferIDs), texts("to_given", given),
				texts("coin", coins), ints("amount", amounts), texts("ip_address", ips), texts("referral", referrals)}, at),
			rowsCall(q.q.BalancesCreditRows, []Column{ints("account_id", accounts),
				texts("coin", creditCoins), ints("amount", creditAmounts)}))
	}
	// A key's spend is added once per batch, guarded by its cap (D36).
	for _, sp := range b.Spends {
		dayRow, sum := q.spendCalls(sp.KeyID, sp.Day, sp.Micros, sp.CapMicros)
		calls = append(calls, dayRow, sum)
	}
	// After the payouts: an idempotency row refers to its payout. A key
	// used already (by another node) fails the batch with ErrConflict.
	if n := len(b.Idempotency); n > 0 {
		faucets, payouts, balances := make([]int64, n), make([]int64, n), make([]int64, n)
		keys, hashes, coins, users := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		rates := make([]float64, n)
		for i, r := range b.Idempotency {
			faucets[i], keys[i], hashes[i], payouts[i] = r.FaucetID, r.Key, r.RequestHash, r.PayoutID
			coins[i], balances[i], users[i], rates[i] = r.Coin, r.Balance, r.PayoutUserHash, r.RateRemaining
		}
		calls = append(calls, rowsCall(q.q.IdempotencyInsertRows, []Column{ints("faucet_id", faucets), texts("idem_key", keys),
			texts("request_hash", hashes), ints("payout_id", payouts), texts("coin", coins), ints("balance", balances),
			texts("payout_user_hash", users), floats("rate_remaining", rates)}, at))
	}
	if n := len(b.Notifications); n > 0 {
		faucets, thresholds, balances := make([]int64, n), make([]int64, n), make([]int64, n)
		kinds, coins := make([]string, n), make([]string, n)
		for i, r := range b.Notifications {
			faucets[i], kinds[i], coins[i], thresholds[i], balances[i] = r.FaucetID, r.Kind, r.Coin, r.Threshold, r.Balance
		}
		calls = append(calls, rowsCall(q.q.NotificationsInsertRows, []Column{ints("faucet_id", faucets), texts("kind", kinds),
			texts("coin", coins), ints("threshold", thresholds), ints("balance", balances)}, at))
	}
	if n := len(b.Events); n > 0 {
		ids, faucets, types, data := make([]string, n), make([]int64, n), make([]string, n), make([]string, n)
		for i, e := range b.Events {
			ids[i], faucets[i], types[i], data[i] = e.ID, e.FaucetID, e.Type, string(e.Data)
		}
		calls = append(calls, rowsCall(q.q.EventsInsertRows, []Column{texts("id", ids), ints("faucet_id", faucets),
			texts("type", types), texts("data", data)}, at))
		calls = append(calls, q.fanoutCalls(ids, faucets, types, at)...)
	}
	return q.execAll(ctx, calls)
}

func ints(name string, v []int64) Column     { return Column{Name: name, Ints: v} }
func texts(name string, v []string) Column   { return Column{Name: name, Texts: v} }
func floats(name string, v []float64) Column { return Column{Name: name, Floats: v} }

// rowsCall is the call of a batch statement (a *Rows query) over rows
// given column by column, which the engine binds as the statement's
// leading parameters (Driver.BindRows) when it runs, followed by the
// parameters every row shares.
func rowsCall(s stmt, cols []Column, shared ...any) call {
	return call{s: s, rows: cols, args: shared}
}

// rowCalls runs a statement once for each of a batch's rows, given
// column by column. An engine whose SQL defines the statement's set form
// (set: SQLite's over drip_rows, PostgreSQL's over arrays) runs that once
// over all the rows, which it takes in their order; another runs the
// single-row form (one) once a row, its parameters the row's values in
// column order. A batch of one row runs the single-row form on every
// engine: for one row the set form's loop over its rows costs the engine
// more than the one statement (PostgreSQL's nested loop over unnest, round
// twenty-four in BENCHMARKS.md). c gives the calls' scan and short; a call
// with short must change each of its rows.
func (q *querier) rowCalls(one, set stmt, cols []Column, c call) []call {
	n := cols[0].Len()
	if n == 0 {
		return nil
	}
	if set.sql != "" && (n > 1 || one.sql == "") {
		c.s, c.rows, c.want = set, cols, int64(n)
		return []call{c}
	}
	calls := make([]call, n)
	for i := range calls {
		args := make([]any, len(cols))
		for j, col := range cols {
			args[j] = col.value(i)
		}
		c.s, c.args, c.want = one, args, 1
		calls[i] = c
	}
	return calls
}

// call is one statement of execAll. scan, when set, reads the rows it
// returns. short, when set, is the error of the statement changing fewer
// than want rows.
type call struct {
	s     stmt
	rows  []Column // a batch statement's rows, bound ahead of args (rowsCall)
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
		args := c.args
		if c.rows != nil {
			if err := sameLength(c.rows); err != nil {
				return fmt.Errorf("%s: %w", c.s.name, err)
			}
			bound, release := q.drv.BindRows(c.rows)
			defer release()
			args = append(bound, c.args...)
		}
		statements[i] = Statement{SQL: c.s.sql, Args: args, Scan: c.scan}
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

// sameLength checks that a batch statement's columns give every row a
// value: an engine would read the missing ones as NULL.
func sameLength(cols []Column) error {
	for _, c := range cols[1:] {
		if c.Len() != cols[0].Len() {
			return fmt.Errorf("store: column %s has %d values, %s %d", c.Name, c.Len(), cols[0].Name, cols[0].Len())
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
