package ledger

import (
	"context"
	"errors"

	"github.com/dripfaucet/drip/internal/store"
)

// Report is the outcome of Reconcile. It is clean when every list is empty.
type Report struct {
	// CoinSums lists coins whose balances do not sum to zero.
	CoinSums []store.CoinSum `json:"coin_sums"`
	// Accounts lists balances that differ from the sum of their journal
	// entries, or are negative where they may not be.
	Accounts []store.AccountMismatch `json:"accounts"`
	// Payouts lists payouts whose journal transfer is missing or disagrees,
	// or whose faucet or recipient is missing, and the payouts that
	// idempotency keys name but that are missing or of another faucet or
	// coin (D64); on SQLite, those missing from the copies of payouts by
	// recipient (D71) or by faucet (D72), or disagreeing with them.
	Payouts []int64 `json:"payouts"`
	// Events lists, on SQLite, the seqs of events missing from the copy of
	// events by faucet or disagreeing with it (D72): their faucet's feed
	// would miss them. Always empty on PostgreSQL, which keeps no copy.
	Events []int64 `json:"events"`
	// Statistics lists the faucets whose statistics' sums disagree with
	// their payouts (D73): their owners would read wrong statistics. The
	// sums hold no money; drip admin stats rebuild folds them again.
	Statistics []int64 `json:"statistics"`
}

// OK reports whether the ledger holds its invariant.
func (r *Report) OK() bool {
	return len(r.CoinSums) == 0 && len(r.Accounts) == 0 && len(r.Payouts) == 0 && len(r.Events) == 0 && len(r.Statistics) == 0
}

// Reconcile checks D3 in one consistent read: per coin the balances sum to
// zero, every balance equals the sum of its journal entries, no balance but
// system:deposits is negative, and every payout matches its transfer. It
// checks what is kept beside the ledger too: SQLite's copies of payouts
// and events (D71, D72) and the statistics' sums (D73).
func (l *Ledger) Reconcile(ctx context.Context) (*Report, error) {
	// Each check is one statement, so each sees one snapshot on both engines
	// without holding the writer: payouts go on while reconcile reads.
	sums, err1 := l.store.ReconcileCoinSums(ctx)
	accounts, err2 := l.store.ReconcileAccounts(ctx)
	payouts, err3 := l.store.ReconcilePayouts(ctx)
	events, err4 := l.store.ReconcileEvents(ctx)
	stats, err5 := l.store.ReconcileStatistics(ctx)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return nil, err
	}
	return &Report{CoinSums: nonNil(sums), Accounts: nonNil(accounts), Payouts: nonNil(payouts), Events: nonNil(events),
		Statistics: nonNil(stats)}, nil
}

// nonNil keeps empty lists as [] rather than null in JSON output.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
