package sqlstore

import (
	"context"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// An engine may keep a faucet's statistics as sums (D73, SQLite): the
// sums of every payout below a mark, which its statistics reads add to
// the payouts from the mark on. StatsFold moves the mark; the engine's
// folder decides when, from StatsPending and StatsReadAt.

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
// payouts [from, end) are not in the sums yet. On an engine that keeps no
// sums both are 0.
func (db *DB) StatsPending(ctx context.Context) (from, end int64, err error) {
	if db.q.StatsFoldRange.sql == "" {
		return 0, 0, nil
	}
	err = db.scanRow(ctx, db.q.StatsFoldRange, nil, &from, &end)
	return from, end, err
}

// StatsFold adds to the kept statistics the payouts from the mark on, at
// most n ids of them, in one transaction, and reports whether payouts
// remain after them. On an engine that keeps no sums it does nothing.
func (db *DB) StatsFold(ctx context.Context, n int64) (behind bool, err error) {
	if db.q.StatsFoldRange.sql == "" {
		return false, nil
	}
	err = db.transactOnce(ctx, func(tx store.Tx) error {
		var err error
		behind, err = tx.(*querier).statsFold(ctx, n)
		return err
	})
	return behind, err
}

// statsFold folds the payouts from the mark up to n ids further, or to
// the last payout, and reports whether payouts remain after them. It runs
// in a write transaction, in which every payout below the next id is
// committed.
func (q *querier) statsFold(ctx context.Context, n int64) (behind bool, err error) {
	var from, end int64
	if err := q.scanRow(ctx, q.q.StatsFoldRange, nil, &from, &end); err != nil {
		return false, err
	}
	if from >= end {
		return false, nil
	}
	upto := end
	if n < end-from {
		upto = from + n
	}
	for _, s := range []stmt{q.q.StatsFoldDays, q.q.StatsFoldDayUsers, q.q.StatsFoldUsers, q.q.StatsFoldMark} {
		if _, err := q.exec(ctx, s, upto); err != nil {
			return false, err
		}
	}
	return upto < end, nil
}

// statsFoldAll folds every payout from the mark on, n ids a step, in the
// transaction of q (the bulk load's, which stores payouts as a database
// that has long held them holds them).
func (q *querier) statsFoldAll(ctx context.Context, n int64) error {
	if q.q.StatsFoldRange.sql == "" {
		return nil
	}
	for {
		behind, err := q.statsFold(ctx, n)
		if err != nil || !behind {
			return err
		}
	}
}
