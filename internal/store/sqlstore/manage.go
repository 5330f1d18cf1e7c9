package sqlstore

import (
	"context"

	"github.com/dripfaucet/drip/internal/store"
)

// The storage of the faucet management pages (issue 11).

func (q *querier) PayoutSearch(ctx context.Context, p *store.PayoutSearchParams) ([]store.PayoutFound, error) {
	out := []store.PayoutFound{}
	args := []any{p.FaucetID, p.Coin, p.RecipientID, p.Referral, p.BeforeID, p.Limit}
	s := q.q.PayoutSearch
	if p.RecipientID != 0 {
		s = q.q.PayoutSearchByRecipient // searched by recipient, not among all the faucet's payouts
	}
	err := q.list(ctx, s, args, func(r Rows) error {
		var f store.PayoutFound
		var created int64
		err := r.Scan(&f.ID, &f.FaucetID, &f.RecipientID, &f.To, &f.Coin, &f.Amount, &f.IPAddress, &f.Referral, &created,
			&f.PayoutUserHash)
		f.CreatedAt = fromMicros(created)
		out = append(out, f)
		return err
	})
	return out, err
}
