package sqlstore

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The store's part for the wallet pages (issue 11): the payouts a user
// received, the faucets that paid them, and unlinking an address.

// PayoutListByRecipient merges the user's payouts from each faucet that
// paid them (D67). Each faucet's part is a range of
// payouts_faucet_recipient, which the payout path writes anyway, rather
// than of an index of the journal by receiving account, which cost every
// payout a page write of its own once recipients have history. A part
// takes at most a page of rows, none older than the page's oldest so far.
func (q *querier) PayoutListByRecipient(ctx context.Context, p *store.PayoutListByRecipientParams) ([]store.ReceivedPayout, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	// The cursor: the time and id of the payout the page comes after.
	at, id := int64(math.MaxInt64), int64(math.MaxInt64)
	if p.Before != 0 {
		err := q.scanRow(ctx, q.q.PayoutListByRecipientCursor, []any{p.Before, p.UserID}, &at)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil // not a payout to this user: nothing comes after it
		}
		if err != nil {
			return nil, err
		}
		id = p.Before
	}
	faucets := []int64{p.FaucetID}
	if p.FaucetID == 0 {
		payers, err := q.FaucetListPayers(ctx, p.UserID)
		if err != nil {
			return nil, err
		}
		faucets = faucets[:0]
		for _, f := range payers {
			faucets = append(faucets, f.ID)
		}
	}
	var out []store.ReceivedPayout
	oldest := int64(math.MinInt64) // the page's oldest time once it is full
	for _, faucet := range faucets {
		err := q.list(ctx, q.q.PayoutListByRecipient, []any{faucet, p.UserID, p.Coin, oldest, at, id, p.Limit}, func(r Rows) error {
			var rp store.ReceivedPayout
			var created int64
			if err := r.Scan(&rp.ID, &rp.FaucetID, &rp.RecipientID, &rp.To, &rp.Coin, &rp.Amount, &rp.IPAddress, &rp.Referral,
				&created, &rp.FaucetName); err != nil {
				return err
			}
			rp.CreatedAt = fromMicros(created)
			out = append(out, rp)
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(out, func(a, b store.ReceivedPayout) int { return drip.NewestFirst(a.Payout, b.Payout) })
		if len(out) >= p.Limit {
			out = out[:p.Limit]
			oldest = micros(out[len(out)-1].CreatedAt)
		}
	}
	return out, nil
}

func (q *querier) FaucetListPayers(ctx context.Context, userID int64) ([]drip.Faucet, error) {
	return q.listFaucets(ctx, q.q.FaucetListPayers, userID)
}

func (q *querier) UserAddressRemove(ctx context.Context, userID int64, coin, address string) error {
	return q.execOne(ctx, q.q.UserAddressRemove, userID, coin, address)
}
