package sqlite

import (
	"context"
	"time"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// The statistics folder keeps a faucet's statistics as sums (D73,
// migration 0032): every second it adds the payouts from the mark on to
// the sums (sqlstore's StatsFold), a range of ids a transaction, until
// the mark is past the last payout. The statistics reads add the payouts
// from the mark on to the sums, so they are exact whatever it has done,
// and as fast as the sums once it has caught up.
//
// Like the compactor, it writes through the writer's pool, where the
// payout batches queue with it. A range is a few milliseconds of the
// writer's time, and a second's payouts are folded together, so that a
// recipient paid often in that second is one sum written, not one a
// payout.

const (
	// statsFoldRange is how many payout ids a fold's transaction adds.
	statsFoldRange = 4096
	// statsFoldEvery is how often the folder runs.
	statsFoldEvery = time.Second
)

type statsFolder struct{ ticking }

func startStatsFolder(db *sqlstore.DB) *statsFolder {
	f := &statsFolder{}
	f.start(statsFoldEvery, func(stop <-chan struct{}) {
		repeat(stop, func(ctx context.Context) (bool, error) { return db.StatsFold(ctx, statsFoldRange) })
	})
	return f
}
