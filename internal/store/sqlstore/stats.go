package sqlstore

import (
	"context"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// A faucet's statistics are kept as sums (D73): the sums of every payout
// whose id is below a mark, which the statistics reads add to the payouts
// from the mark on, so they are exact whatever the folder has done. The
// folder (StartStatsFolder) adds the payouts from the mark on to the sums,
// a range of ids a transaction (StatsFold).
//
// The mark may only pass ids that are settled. On SQLite, with one
// writer, every id below the next is committed. On PostgreSQL ids come
// from a sequence and commit in another order, so the mark stops at a
// horizon: an id every id below which was taken by a transaction older
// than the horizon's own, which StatsFold sets once the mark reaches the
// last one and uses once those transactions have all ended
// (StatsHorizonNext, StatsHorizonSet).
//
// Folding costs the writer about 8.6 µs a payout (a sum and its rank
// written a recipient a range: BENCHMARKS.md, rounds twenty-nine and
// thirty), which a faucet
// paying at full speed would feel. So the folder folds when the writer
// has time to spare, fewer than statsQuiet payouts made in the last
// second, or when this process has read the statistics in the last
// statsReading, and then for at most statsTurn of each second. Under a
// sustained peak with no one reading them, the sums wait for the peak to
// end; a read meanwhile sums the payouts since the mark itself, and
// starts the folder.

const (
	// statsFoldRange is how many payout ids a fold's transaction adds:
	// about 6.6 ms of SQLite's writer, which a payout batch may wait
	// behind.
	statsFoldRange = 768
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

// StatsDaily is querier.StatsDaily, noting when the statistics were read.
func (db *DB) StatsDaily(ctx context.Context, faucetID int64, since time.Time) ([]drip.DailyStat, error) {
	db.statsRead.Store(time.Now().UnixNano())
	return db.querier.StatsDaily(ctx, faucetID, since)
}

// StatsUsers is querier.StatsUsers, noting when the statistics were read.
func (db *DB) StatsUsers(ctx context.Context, p *store.PageParams) ([]drip.UserStat, int64, error) {
	db.statsRead.Store(time.Now().UnixNano())
	return db.querier.StatsUsers(ctx, p)
}

// StatsReadAt is when this process last read a faucet's statistics
// outside a transaction; the zero time if it never has.
func (db *DB) StatsReadAt() time.Time {
	if at := db.statsRead.Load(); at != 0 {
		return time.Unix(0, at)
	}
	return time.Time{}
}

// StatsPending reads the mark and the id the next payout will take: the
// payouts [from, end) are not in the sums yet.
func (db *DB) StatsPending(ctx context.Context) (from, end int64, err error) {
	err = db.scanRow(ctx, db.q.StatsPending, nil, &from, &end)
	return from, end, err
}

// StatsFold adds to the sums the payouts from the mark on, at most n ids
// of them, in one transaction, and reports whether settled payouts remain
// after them. Where the mark stops at a horizon, a fold that reaches it
// sets the next one, in a transaction of its own.
func (db *DB) StatsFold(ctx context.Context, n int64) (behind bool, err error) {
	var reached bool
	err = db.transactOnce(ctx, func(tx store.Tx) error {
		var err error
		behind, reached, err = tx.(*querier).statsFold(ctx, n)
		return err
	})
	if err != nil || !reached || db.q.StatsHorizonSet.sql == "" {
		return behind, err
	}
	return false, db.transactOnce(ctx, func(tx store.Tx) error {
		q := tx.(*querier)
		var next int64
		if err := q.scanRow(ctx, q.q.StatsHorizonNext, nil, &next); err != nil {
			return err
		}
		_, err := q.exec(ctx, q.q.StatsHorizonSet, next)
		return err
	})
}

// StatsRebuild empties the sums and moves the mark back to the first
// payout, in one transaction: the folder then folds every payout again.
// It is the operator's mend for sums that reconcile finds wrong, retried
// as every write is when it meets a fold of another node. On SQLite it
// holds the writer while it empties the tables, about 0.3 s a million
// rows of sums (D73), and payouts wait that long.
func (db *DB) StatsRebuild(ctx context.Context) error {
	_, err := db.transact(ctx, func(tx store.Tx) error {
		q := tx.(*querier)
		if _, err := q.exec(ctx, q.q.StatsFoldMark, 0); err != nil {
			return err
		}
		for _, s := range []stmt{q.q.StatsRebuildUsers, q.q.StatsRebuildDays, q.q.StatsRebuildDayUsers, q.q.StatsRebuildUserCounts} {
			if _, err := q.exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

// statsFold folds the settled payouts from the mark, up to n ids further,
// and reports whether settled payouts remain after them and whether it
// reached the horizon.
func (q *querier) statsFold(ctx context.Context, n int64) (behind, reached bool, err error) {
	var from, end int64
	var settled bool
	if err := q.scanRow(ctx, q.q.StatsFoldRange, nil, &from, &end, &settled); err != nil {
		return false, false, err
	}
	if !settled || from >= end {
		return false, settled, nil
	}
	upto := end
	if n < end-from {
		upto = from + n
	}
	for _, s := range []stmt{q.q.StatsFoldDays, q.q.StatsFoldDayUsers, q.q.StatsFoldUsers, q.q.StatsFoldMark} {
		if _, err := q.exec(ctx, s, upto); err != nil {
			return false, false, err
		}
	}
	return upto < end, upto == end, nil
}

// statsFoldAll folds every payout from the mark on, n ids a step, in the
// transaction of q: the bulk load's, which stores payouts as a database
// that has long held them holds them. Where the mark stops at a horizon,
// the payouts of q's own transaction are past it: the folder folds them.
func (q *querier) statsFoldAll(ctx context.Context, n int64) error {
	if q.q.StatsHorizonSet.sql != "" {
		return nil
	}
	for {
		behind, _, err := q.statsFold(ctx, n)
		if err != nil || !behind {
			return err
		}
	}
}

// statsFolder is the folder's goroutine, started by StartStatsFolder and
// stopped by Close.
type statsFolder struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
	// end is the id the next payout took at the last look, which tells
	// how many were made since. Only the folder's goroutine touches it.
	end int64
}

// StartStatsFolder starts the folder, which runs until Close. The engine
// starts it when it opens the database (a test may step StatsFold
// itself instead).
func (db *DB) StartStatsFolder() {
	f := &statsFolder{stop: make(chan struct{}), done: make(chan struct{})}
	db.folder = f
	go func() {
		defer close(f.done)
		t := time.NewTicker(statsFoldEvery)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
			}
			f.look(db)
		}
	}()
}

// halt stops the folder and waits for its look in progress to end.
func (f *statsFolder) halt() {
	f.once.Do(func() { close(f.stop) })
	<-f.done
}

// look folds ranges for up to statsTurn if the folder is due. An error
// (the database busy or away) leaves the payouts for the next look; the
// reads stay exact.
func (f *statsFolder) look(db *DB) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	from, end, err := db.StatsPending(ctx)
	if err != nil {
		return
	}
	made := end - f.end
	f.end = end
	now := time.Now()
	if from >= end || !statsFoldDue(made, db.StatsReadAt(), now) {
		return
	}
	for until := now.Add(statsTurn); time.Now().Before(until); {
		select {
		case <-f.stop:
			return
		default:
		}
		if behind, err := db.StatsFold(ctx, statsFoldRange); err != nil || !behind {
			return
		}
	}
}

// statsFoldDue reports whether the folder folds, made payouts having been
// made since its last look, the statistics last read at readAt.
func statsFoldDue(made int64, readAt, now time.Time) bool {
	return made < statsQuiet*int64(statsFoldEvery/time.Second) || now.Sub(readAt) < statsReading
}
