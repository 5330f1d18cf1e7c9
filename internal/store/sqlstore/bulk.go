package sqlstore

import (
	"context"
	"fmt"
	"math"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// A transaction loads payouts in bulk for drip bench, which asserts
// store.BulkLoader; the product's interfaces do not carry it.
var _ store.BulkLoader = (*querier)(nil)

func (q *querier) PayoutBulkLoad(ctx context.Context, p *store.PayoutBulkLoadParams) error {
	if p.Count <= 0 || p.Amount <= 0 || p.Count > math.MaxInt64/p.Amount {
		return fmt.Errorf("store: bulk load of %d payouts of %d: count and amount must be positive and their product fit", p.Count, p.Amount)
	}
	f, err := q.FaucetGetByID(ctx, p.FaucetID)
	if err != nil {
		return err
	}
	total, at := p.Count*p.Amount, micros(p.CreatedAt)
	// The deposit that funds the load, faucet first (see the SQL file).
	if _, err := q.BalanceCredit(ctx, f.AccountID, p.Coin, total); err != nil {
		return err
	}
	if _, err := q.BalanceCredit(ctx, drip.AccountDeposits, p.Coin, -total); err != nil {
		return err
	}
	if _, err := q.TransferInsert(ctx, &store.Transfer{Coin: p.Coin, From: drip.AccountDeposits, To: f.AccountID,
		Amount: total, Kind: "deposit", CreatedAt: p.CreatedAt}); err != nil {
		return err
	}
	var before int64
	if err := q.scanRow(ctx, q.q.PayoutBulkLoadBefore, nil, &before); err != nil {
		return err
	}
	n, err := q.exec(ctx, q.q.PayoutBulkLoadTransfers, p.Coin, f.AccountID, p.Amount, p.Count,
		p.FirstRecipientID, p.LastRecipientID, at)
	if err != nil {
		return err
	}
	if n != p.Count {
		// No recipient in the range: nothing would balance the deposit.
		return fmt.Errorf("store: bulk load inserted %d of %d transfers: no user has an id in [%d, %d]: %w",
			n, p.Count, p.FirstRecipientID, p.LastRecipientID, store.ErrNotFound)
	}
	if n, err = q.exec(ctx, q.q.PayoutBulkLoadPayouts, p.FaucetID, before, f.AccountID); err != nil {
		return err
	}
	if n != p.Count {
		return fmt.Errorf("store: bulk load inserted %d payouts for %d transfers", n, p.Count)
	}
	if _, err := q.exec(ctx, q.q.PayoutBulkLoadCredits, before, f.AccountID); err != nil {
		return err
	}
	// A database that has long held these payouts has them in its copies
	// (SQLite's, D71 and D72): the load copies them, and any payout before
	// them not yet copied, and moves each watermark to the last block.
	for _, s := range []stmt{q.q.PayoutBulkLoadByRecipient, q.q.PayoutBulkLoadWatermark,
		q.q.PayoutBulkLoadByFaucet, q.q.PayoutBulkLoadFaucetWatermark} {
		if s.sql == "" {
			continue
		}
		if _, err := q.exec(ctx, s); err != nil {
			return err
		}
	}
	// And in the kept statistics (D73), a range of ids at a time: a fold
	// sorts its range's payouts.
	if err := q.statsFoldAll(ctx, 1<<16); err != nil {
		return err
	}
	_, err = q.BalanceDebit(ctx, f.AccountID, p.Coin, total)
	return err
}
