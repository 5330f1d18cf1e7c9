package sqlstore

import (
	"context"
	"time"
)

// The reads and writes of a faucet's API keys page (issue 11).

func (q *querier) FaucetKeyPending(ctx context.Context, id int64) (bool, error) {
	var pending bool
	err := q.scanRow(ctx, q.q.FaucetKeyPending, []any{id}, &pending)
	return pending, err
}

func (q *querier) KeyTouch(ctx context.Context, id int64, at time.Time) error {
	_, err := q.exec(ctx, q.q.KeyTouch, id, micros(at))
	return err
}
