package sqlite

import (
	"context"
	"time"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// The statistics folder keeps a faucet's statistics as sums (D73,
// migration 0032): it adds the payouts from the mark on to the sums
// (sqlstore's StatsFold), a range of ids a transaction. The statistics
// reads add the payouts from the mark on to the sums, so they are exact
// whatever it has done, and read little once it has caught up.
//
// Folding costs the writer about 6 µs a payout (a sum written a
// recipient a range: BENCHMARKS.md, round twenty-nine), which a faucet
// paying at full speed would feel. So it folds when the writer has time
// to spare, fewer than statsQuiet payouts made in the last second, or
// when someone has read the statistics in the last statsReading, and then
// for at most statsTurn of each second. Under a sustained peak with no one
// reading them, the sums wait for the peak to end; a read meanwhile sums
// the payouts since the mark itself, and starts the folder.
//
// Like the compactor, it writes through the writer's pool, where the
// payout batches queue with it; a range holds the writer a few
// milliseconds.

const (
	// statsFoldRange is how many payout ids a fold's transaction adds:
	// about 6 ms of the writer's time.
	statsFoldRange = 1024
	// statsFoldEvery is how often the folder looks.
	statsFoldEvery = time.Second
	// statsQuiet is the payouts a second under which the folder takes
	// the writer to have time to spare.
	statsQuiet = 1000
	// statsReading is how long after a read of the statistics the folder
	// keeps the sums current whatever the payouts.
	statsReading = 10 * time.Minute
	// statsTurn is the most a look folds for, a tenth of the writer's time.
	statsTurn = 100 * time.Millisecond
)

type statsFolder struct {
	ticking
	db *sqlstore.DB
	// end is the id the next payout took at the last look, which tells
	// how many were made since. Only the folder's goroutine touches it.
	end int64
}

func startStatsFolder(db *sqlstore.DB) *statsFolder {
	f := &statsFolder{db: db}
	f.start(statsFoldEvery, f.tick)
	return f
}

// tick folds ranges for up to statsTurn if the folder is due. An error
// (another process holding the file's lock past the busy timeout, the
// disk full) leaves the payouts for the next look; the reads stay exact.
func (f *statsFolder) tick(stop <-chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	from, end, err := f.db.StatsPending(ctx)
	cancel()
	if err != nil {
		return
	}
	made := end - f.end
	f.end = end
	now := time.Now()
	if from >= end || !statsFoldDue(made, f.db.StatsReadAt(), now) {
		return
	}
	until := now.Add(statsTurn)
	repeat(stop, func(ctx context.Context) (bool, error) {
		behind, err := f.db.StatsFold(ctx, statsFoldRange)
		return behind && time.Now().Before(until), err
	})
}

// statsFoldDue reports whether the folder folds, made payouts having been
// made since its last look, the statistics last read at readAt.
func statsFoldDue(made int64, readAt, now time.Time) bool {
	return made < statsQuiet*int64(statsFoldEvery/time.Second) || now.Sub(readAt) < statsReading
}
