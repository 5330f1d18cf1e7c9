package sqlstore

import (
	"context"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The store's part for the operator pages (issue 11, item 6): the
// operator log, the user search, marking an email verified, a coin's
// minimum payout and the ledger's totals.

func (q *querier) OperatorLogAdd(ctx context.Context, e *store.OperatorLogEntry) (int64, error) {
	var id int64
	err := q.scanRow(ctx, q.q.OperatorLogAdd, []any{e.OperatorID, e.Action, e.Target, string(e.Detail), micros(e.CreatedAt)}, &id)
	return id, err
}

func (q *querier) OperatorLogList(ctx context.Context, p *store.OperatorLogListParams) ([]store.OperatorLogEntry, error) {
	var out []store.OperatorLogEntry
	err := q.list(ctx, q.q.OperatorLogList, []any{p.BeforeID, p.Limit}, func(r Rows) error {
		var e store.OperatorLogEntry
		var detail string
		var created int64
		err := r.Scan(&e.ID, &e.OperatorID, &e.Operator, &e.Action, &e.Target, &detail, &created)
		e.Detail, e.CreatedAt = []byte(detail), fromMicros(created)
		out = append(out, e)
		return err
	})
	return out, err
}

// likeEscaper makes a query match itself literally inside a LIKE pattern
// whose escape character is the backslash.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

func (q *querier) UserSearch(ctx context.Context, p *store.UserSearchParams) ([]drip.User, error) {
	var out []drip.User
	pattern := likeEscaper.Replace(strings.ToLower(p.Query))
	err := q.list(ctx, q.q.UserSearch, []any{pattern, p.Limit, p.Offset}, func(r Rows) error {
		u, err := scanUser(r.Scan)
		if err == nil {
			out = append(out, *u)
		}
		return err
	})
	return out, err
}

func (q *querier) UserSetEmailVerified(ctx context.Context, id int64) error {
	return q.execOne(ctx, q.q.UserSetEmailVerified, id)
}

func (q *querier) CoinSetMinPayout(ctx context.Context, symbol string, minPayout int64) error {
	return q.execOne(ctx, q.q.CoinSetMinPayout, symbol, minPayout)
}

func (q *querier) BalanceTotals(ctx context.Context) ([]store.BalanceTotal, error) {
	var out []store.BalanceTotal
	err := q.list(ctx, q.q.BalanceTotals, nil, func(r Rows) error {
		var b store.BalanceTotal
		err := r.Scan(&b.Coin, &b.Holder, &b.Accounts, &b.Amount)
		out = append(out, b)
		return err
	})
	return out, err
}
