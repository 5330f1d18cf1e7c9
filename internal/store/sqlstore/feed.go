package sqlstore

import (
	"context"
	"strings"

	"github.com/dripfaucet/drip/internal/store"
)

// EventFeed reads one stretch of a faucet's events feed (D59), as
// store.Reader documents.
func (q *querier) EventFeed(ctx context.Context, p *store.EventFeedParams) ([]store.EventAt, error) {
	var out []store.EventAt
	args := []any{p.FaucetID, p.After.TxID, p.After.Seq, strings.Join(p.Types, ","), p.Limit}
	err := q.list(ctx, q.q.EventFeed, args, func(r Rows) error {
		var e store.EventAt
		var data *string
		var created int64
		err := r.Scan(&e.Position.TxID, &e.Position.Seq, &e.Event.ID, &e.Event.FaucetID, &e.Event.Type, &data, &created)
		if data != nil {
			e.Event.Data = []byte(*data)
		}
		e.Event.CreatedAt = fromMicros(created)
		out = append(out, e)
		return err
	})
	return out, err
}
