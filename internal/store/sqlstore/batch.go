package sqlstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/store"
)

func (q *querier) PayoutsOpen(ctx context.Context, p *store.PayoutsOpenParams) (*store.PayoutBooks, error) {
	// One lock order for every transaction: faucets by ascending id, then
	// balances by ascending account and coin.
	faucets, keys, n := slices.Sorted(slices.Values(p.Faucets)), slices.Clone(p.Balances), p.IDs
	slices.SortFunc(keys, compareBalanceKeys)
	b := &store.PayoutBooks{Balances: make(map[store.BalanceKey]int64, len(keys)), Windows: make([]store.PayoutCount, len(p.Windows))}
	calls := make([]call, 0, len(faucets)+len(keys)+len(p.Windows)+2)
	if p.Generation {
		calls = append(calls, call{s: q.q.CacheGeneration, scan: func(r Rows) error { return r.Scan(&b.Generation) }})
	}
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

// creditRow is one balance's change in a batch.
type creditRow struct {
	AccountID int64
	Coin      string
	Amount    int64
}

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
	if n := len(b.Payouts); n > 0 {
		// The rows column by column (rowsCalls).
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
		if calls, err = q.rowsCalls(calls, q.q.TransfersInsertRows, []column{ints("id", transferIDs), texts("coin", coins),
			ints("from_account", from), ints("to_account", to), ints("amount", amounts)}, at); err != nil {
			return err
		}
		if calls, err = q.rowsCalls(calls, q.q.PayoutsInsertRows, []column{ints("id", ids), ints("faucet_id", faucets),
			ints("recipient_id", recipients), ints("transfer_id", transferIDs), texts("to_given", given),
			texts("coin", coins), ints("amount", amounts), texts("ip_address", ips), texts("referral", referrals)}, at); err != nil {
			return err
		}
		if calls, err = q.rowsCalls(calls, q.q.BalancesCreditRows, []column{ints("account_id", accounts),
			texts("coin", creditCoins), ints("amount", creditAmounts)}); err != nil {
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
	if n := len(b.Events); n > 0 {
		ids, faucets, types, data := make([]string, n), make([]int64, n), make([]string, n), make([]string, n)
		for i, e := range b.Events {
			ids[i], faucets[i], types[i], data[i] = e.ID, e.FaucetID, e.Type, string(e.Data)
		}
		var err error
		if calls, err = q.rowsCalls(calls, q.q.EventsInsertRows, []column{texts("id", ids), ints("faucet_id", faucets),
			texts("type", types), texts("data", data)}, at); err != nil {
			return err
		}
	}
	return q.execAll(ctx, calls)
}

// column is one column of a batch statement's rows (rowsCalls): its
// name, the key of its values in the JSON of an engine without arrays,
// and its values, int64 or string.
type column struct {
	name  string
	ints  []int64
	texts []string
}

func ints(name string, v []int64) column   { return column{name: name, ints: v} }
func texts(name string, v []string) column { return column{name: name, texts: v} }

// rowsCalls appends the call of a batch statement (a *Rows query) over
// its rows, given column by column, followed by the parameters every row
// shares. An engine that binds arrays (PostgreSQL) takes each column as
// one array parameter: it decodes them in binary, where the JSON it took
// before was parsed as text for every batch (8% of its work a payout).
// Another (SQLite) takes the rows as one JSON array of objects, as
// before: one VALUES tuple a row, each value bound on its own, and a JSON
// array of arrays both measured no cheaper there.
func (q *querier) rowsCalls(calls []call, s stmt, cols []column, shared ...any) ([]call, error) {
	n := max(len(cols[0].ints), len(cols[0].texts))
	if n == 0 {
		return calls, nil
	}
	args := make([]any, 0, len(cols)+len(shared))
	if q.drv.Arrays() {
		for _, c := range cols {
			if c.ints != nil {
				args = append(args, c.ints)
			} else {
				args = append(args, c.texts)
			}
		}
		return append(calls, call{s: s, args: append(args, shared...)}), nil
	}
	body, err := rowsJSON(cols, n)
	if err != nil {
		return calls, err
	}
	return append(calls, call{s: s, args: append(append(args, string(body)), shared...)}), nil
}

// rowsJSON is n rows given column by column as a JSON array of objects,
// one key a column.
func rowsJSON(cols []column, n int) ([]byte, error) {
	body := make([]byte, 0, 32*n*len(cols))
	body = append(body, '[')
	for r := range n {
		if r > 0 {
			body = append(body, ',')
		}
		for i, c := range cols {
			if i == 0 {
				body = append(body, '{')
			} else {
				body = append(body, ',')
			}
			body = append(append(append(body, '"'), c.name...), '"', ':')
			if c.ints != nil {
				body = strconv.AppendInt(body, c.ints[r], 10)
				continue
			}
			var err error
			if body, err = appendJSONString(body, c.texts[r]); err != nil {
				return nil, err
			}
		}
		body = append(body, '}')
	}
	return append(body, ']'), nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
// ASCII, which nearly every value of a batch is (an event's data escapes
// only its quotes), is escaped here; encoding/json's reflection a value
// cost a fifth of the writer's Go time (issue 16). Anything else is left
// to encoding/json.
func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			text, err := json.Marshal(s)
			return append(b, text...), err
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"'), nil
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
