package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"
)

// The compactor keeps the second level of a faucet's payouts by recipient
// (D71, migration 0027): it copies each finished block of payouts (2^16
// consecutive ids, id >> 16 in the SQL) into payouts_by_recipient, and
// moves the watermark payout_blocks.done past the block in the
// transaction that copies its last rows. Reads are correct whatever
// it has done: a read searches the copy below the watermark and every
// block from the watermark on. Keeping up keeps those blocks one or two.
//
// It writes through the writer's pool, one transaction a chunk, so the
// payout batches queue with it in the pool rather than on the file's lock,
// and no chunk holds the writer for more than a few milliseconds. Its
// statements are prepared once with the writer's (compactStatements):
// prepared at every tick, they were a third of its CPU, spent while the
// payout batches waited for the pool's one connection (BENCHMARKS.md,
// round twenty-seven).

// It keeps the second level of a faucet's payouts and events too (D72,
// migration 0029): it copies each finished block of 256 payouts (id >> 8)
// into payouts_by_faucet and of 256 events (seq >> 8) into
// events_by_faucet, a run of whole blocks a transaction, and moves the
// watermark faucet_blocks.payouts_done or events_done past the run in the
// same transaction, so a copy holds exactly the blocks below its watermark.
// A read of a faucet's payouts or events searches each block from the
// watermark on; running often keeps those few.

const (
	// compactChunk is how many payouts a transaction copies (D71). Each
	// chunk holds the writer while it copies, and a finished block is
	// copied in a run of chunks, so the chunk bounds what a payout batch
	// can wait for the compactor. At 2,048 a chunk held the writer 5-10 ms,
	// 32 in a row every few seconds of hot payouts; at 512, about a
	// quarter of that, and hot's p99 over its p50 fell from about 3.3 to
	// 2.7 over HTTP. The copy itself costs more a payout in smaller
	// chunks where they share fewer pages of the copy (BENCHMARKS.md,
	// round thirty-one).
	compactChunk = 512
	// faucetBlocksRun is how many blocks of a faucet level (D72) a
	// transaction copies at most: 4,096 rows.
	faucetBlocksRun = 16
	// compactEvery is how often the compactor runs. A faucet level's
	// reads search the blocks that finished since its last run: at 15,000
	// payouts a second, six of 256. A payout block (D71) finishes every
	// 4 s at that rate.
	compactEvery = 100 * time.Millisecond
)

// faucetLevel is one level of D72: the SQL that reads its watermark and
// last block, copies the blocks [?1, ?2) of its rows into its copy, and
// moves the watermark from ?1 to ?2. The copy is read from the recent
// level's index, which holds every column of the copy, block by block in
// the copy's order: no table row is read and nothing is sorted.
type faucetLevel struct {
	name, last, copy, done string
}

var faucetLevels = []faucetLevel{
	{
		name: "payouts",
		last: `SELECT payouts_done, (SELECT COALESCE(MAX(id), 0) >> 8 FROM payouts) FROM faucet_blocks`,
		copy: `INSERT INTO payouts_by_faucet (faucet_id, coin, created_at, payout_id)
			SELECT faucet_id, coin, created_at, id FROM payouts INDEXED BY payouts_block_faucet
			WHERE id >> 8 >= ?1 AND id >> 8 < ?2 ORDER BY id >> 8, faucet_id, coin, created_at, id`,
		done: `UPDATE faucet_blocks SET payouts_done = ?2 WHERE payouts_done = ?1`,
	},
	{
		name: "events",
		last: `SELECT events_done, (SELECT COALESCE(MAX(seq), 0) >> 8 FROM events) FROM faucet_blocks`,
		copy: `INSERT INTO events_by_faucet (faucet_id, seq)
			SELECT faucet_id, seq FROM events INDEXED BY events_block_faucet
			WHERE seq >> 8 >= ?1 AND seq >> 8 < ?2 ORDER BY seq >> 8, faucet_id, seq`,
		done: `UPDATE faucet_blocks SET events_done = ?2 WHERE events_done = ?1`,
	},
}

// The statements of compactor.step.
const (
	payoutBlocksLast = `SELECT done, (SELECT COALESCE(MAX(id), 0) >> 16 FROM payouts) FROM payout_blocks`
	// payoutChunkEnd is the compactChunk-th key after the cursor (?6 is
	// compactChunk-1).
	payoutChunkEnd = `SELECT recipient_id, faucet_id, created_at, id FROM payouts
		WHERE id >> 16 = ?1 AND (recipient_id, faucet_id, created_at, id) > (?2, ?3, ?4, ?5)
		ORDER BY recipient_id, faucet_id, created_at, id LIMIT 1 OFFSET ?6`
	payoutChunkCopy = `INSERT OR IGNORE INTO payouts_by_recipient
		(faucet_id, recipient_id, created_at, payout_id, coin, amount)
		SELECT faucet_id, recipient_id, created_at, id, coin, amount FROM payouts
		WHERE id >> 16 = ?1 AND (recipient_id, faucet_id, created_at, id) > (?2, ?3, ?4, ?5)
			AND (recipient_id, faucet_id, created_at, id) <= (?6, ?7, ?8, ?9)
		ORDER BY faucet_id, recipient_id, created_at, id`
	payoutBlockDone = `UPDATE payout_blocks SET done = done + 1 WHERE done = ?1`
)

// compactStatements are every statement the compactor runs, which Open
// prepares on the writer's pool.
func compactStatements() []string {
	out := []string{payoutBlocksLast, payoutChunkEnd, payoutChunkCopy, payoutBlockDone}
	for _, l := range faucetLevels {
		out = append(out, l.last, l.copy, l.done)
	}
	return out
}

type compactor struct {
	ticking
	ps *prepared // the writer's pool and its statements

	// The cursor: the last key copied of block, the next chunk's start.
	// Only the compactor's goroutine touches it. It is lost with the
	// process; the next copies the block from its start, and what is
	// already in the copy is kept (INSERT OR IGNORE).
	block int64
	after blockKey
}

// blockKey is a payout's place in a block's part of payouts_block_recipient:
// recipient, faucet, time, id (migration 0028). A chunk is a range of that
// order, read from the index; its rows are inserted in the copy's order,
// faucet first, sorted from the chunk's compactChunk.
type blockKey struct{ recipient, faucet, at, id int64 }

var (
	keyFirst = blockKey{math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64}
	keyLast  = blockKey{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}
)

// newCompactor is a compactor writing through ps's pool, its cursor at no
// block; startCompactor runs it, a test steps it.
func newCompactor(ps *prepared) *compactor { return &compactor{ps: ps, block: -1} }

func startCompactor(ps *prepared) *compactor {
	c := newCompactor(ps)
	c.start(compactEvery, c.tick)
	return c
}

// tick copies the faucet levels' finished blocks, then chunks of payout
// blocks, until each watermark is at its last block. An error (another
// process holding the file's lock past the busy timeout, the disk full)
// leaves the blocks for the next tick: reads stay correct, searching more
// blocks.
func (c *compactor) tick(stop <-chan struct{}) {
	faucets := func(ctx context.Context) (bool, error) {
		return copyFaucetBlocks(ctx, c.ps, faucetLevels, faucetBlocksRun)
	}
	if repeat(stop, faucets) {
		repeat(stop, c.step)
	}
}

// repeat calls step, each call with a deadline of its own, until it
// reports nothing more to do or an error; it reports false if stop
// closed first.
func repeat(stop <-chan struct{}, step func(context.Context) (bool, error)) bool {
	for {
		select {
		case <-stop:
			return false
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		more, err := step(ctx)
		cancel()
		if err != nil || !more {
			return true
		}
	}
}

// step copies the next chunk of the block at the watermark, if a block
// after it has begun, and reports whether it did.
func (c *compactor) step(ctx context.Context) (bool, error) {
	q, err := c.ps.begin(ctx)
	if err != nil {
		return false, err
	}
	defer q.tx.Rollback()
	var done, last int64
	if err := q.QueryRow(ctx, payoutBlocksLast).Scan(&done, &last); err != nil {
		return false, err
	}
	if done >= last {
		return false, nil // the watermark is at the block payouts enter
	}
	if c.block != done {
		c.block, c.after = done, keyFirst
	}
	// The chunk ends at the compactChunk-th key after the cursor, or at the
	// block's end, where the watermark moves.
	upto, end := keyLast, true
	err = q.QueryRow(ctx, payoutChunkEnd, done, c.after.recipient, c.after.faucet, c.after.at, c.after.id, compactChunk-1).
		Scan(&upto.recipient, &upto.faucet, &upto.at, &upto.id)
	switch {
	case err == nil:
		end = false
	case err != sql.ErrNoRows:
		return false, err
	}
	if _, err := q.Exec(ctx, payoutChunkCopy, done, c.after.recipient, c.after.faucet, c.after.at, c.after.id,
		upto.recipient, upto.faucet, upto.at, upto.id); err != nil {
		return false, err
	}
	if end {
		if _, err := q.Exec(ctx, payoutBlockDone, done); err != nil {
			return false, err
		}
	}
	if err := q.tx.Commit(); err != nil {
		return false, err
	}
	c.after = upto
	if end {
		c.block = -1
	}
	return true, nil
}

// copyFaucetBlocks copies, in one transaction, the next run of up to run
// finished blocks of each of the levels behind its last block, moves
// their watermarks, and reports whether a level is still behind. The
// watermarks are read in the transaction (a write transaction from its
// start), so two compactors copy no block twice. One transaction for
// both levels: each tick's commit is a sync the payout batches wait on.
func copyFaucetBlocks(ctx context.Context, ps *prepared, levels []faucetLevel, run int64) (behind bool, err error) {
	q, err := ps.begin(ctx)
	if err != nil {
		return false, err
	}
	defer q.tx.Rollback()
	copied := false
	for _, l := range levels {
		var done, last int64
		if err := q.QueryRow(ctx, l.last).Scan(&done, &last); err != nil {
			return false, fmt.Errorf("%s: %w", l.name, err)
		}
		if done >= last {
			continue // the watermark is at the block rows enter
		}
		upto := min(last, done+run)
		if _, err := q.Exec(ctx, l.copy, done, upto); err != nil {
			return false, fmt.Errorf("%s: copy blocks [%d, %d): %w", l.name, done, upto, err)
		}
		if _, err := q.Exec(ctx, l.done, done, upto); err != nil {
			return false, fmt.Errorf("%s: watermark: %w", l.name, err)
		}
		copied, behind = true, behind || upto < last
	}
	if !copied {
		return false, nil
	}
	return behind, q.tx.Commit()
}
