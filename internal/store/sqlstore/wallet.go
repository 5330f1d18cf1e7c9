package sqlstore

import (
	"context"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The store's part for the wallet pages (issue 11): the payouts a user
// received, the faucets that paid them, and unlinking an address.

func (q *querier) PayoutListByRecipient(ctx context.Context, p *store.PayoutListByRecipientParams) ([]store.ReceivedPayout, error) {
	var out []store.ReceivedPayout
	err := q.list(ctx, q.q.PayoutListByRecipient, []any{p.AccountID, p.Coin, p.FaucetID, p.Before, p.Limit}, func(r Rows) error {
		var rp store.ReceivedPayout
		var created int64
		if err := r.Scan(&rp.ID, &rp.FaucetID, &rp.RecipientID, &rp.To, &rp.Coin, &rp.Amount, &rp.IPAddress, &rp.Referral,
			&created, &rp.TransferID, &rp.FaucetName); err != nil {
			return err
		}
		rp.CreatedAt = fromMicros(created)
		out = append(out, rp)
		return nil
	})
	return out, err
}

func (q *querier) FaucetListPayers(ctx context.Context, userID int64) ([]drip.Faucet, error) {
	return q.listFaucets(ctx, q.q.FaucetListPayers, userID)
}

func (q *querier) UserAddressRemove(ctx context.Context, userID int64, coin, address string) error {
	return q.execOne(ctx, q.q.UserAddressRemove, userID, coin, address)
}
