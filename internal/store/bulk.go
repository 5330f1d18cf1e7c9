package store

import (
	"context"
	"time"
)

// BulkLoader is implemented by the transactions (Tx) of stores that can
// write payouts in bulk. It is not part of the product: payouts are
// written by the ledger (PayoutsInsert). drip bench's growth run, which
// needs millions of stored payouts in minutes, asserts it on its Tx.
type BulkLoader interface {
	// PayoutBulkLoad stores p.Count payouts at once, each with its
	// transfer, together with the deposit that funds them and the balances
	// they move, so the ledger still reconciles (D3). ErrNotFound when no
	// user has an id in the recipients' range.
	PayoutBulkLoad(ctx context.Context, p *PayoutBulkLoadParams) error
}

// PayoutBulkLoadParams describe a bulk load: Count payouts of Amount each
// from the faucet, paid round-robin in id order to the users whose ids lie
// in [FirstRecipientID, LastRecipientID], all created at CreatedAt.
type PayoutBulkLoadParams struct {
	FaucetID         int64
	FirstRecipientID int64
	LastRecipientID  int64
	Coin             string
	Amount           int64
	Count            int64
	CreatedAt        time.Time
}
