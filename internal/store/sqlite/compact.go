package sqlite

import (
	"context"
	"database/sql"
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
// and no chunk holds the writer for more than a few milliseconds.

const (
	// compactChunk is how many payouts a transaction copies.
	compactChunk = 2048
	// compactEvery is how often the compactor looks for a finished block;
	// at 10,000 payouts a second a block finishes every 6.5 s.
	compactEvery = time.Second
)

type compactor struct {
	ticking
	db *sql.DB

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
// faucet first, sorted from the chunk's 2,048.
type blockKey struct{ recipient, faucet, at, id int64 }

var (
	keyFirst = blockKey{math.MinInt64, math.MinInt64, math.MinInt64, math.MinInt64}
	keyLast  = blockKey{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}
)

func startCompactor(db *sql.DB) *compactor {
	c := &compactor{db: db, block: -1}
	c.start(compactEvery, c.tick)
	return c
}

// tick copies chunks until the watermark is at the last block. An error
// (another process holding the file's lock past the busy timeout, the
// disk full) leaves the block for the next tick: reads stay correct,
// searching one block more.
func (c *compactor) tick(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		more, err := c.step(ctx)
		cancel()
		if err != nil || !more {
			return
		}
	}
}

// step copies the next chunk of the block at the watermark, if a block
// after it has begun, and reports whether it did.
func (c *compactor) step(ctx context.Context) (bool, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var done, last int64
	if err := tx.QueryRowContext(ctx,
		`SELECT done, (SELECT COALESCE(MAX(id), 0) >> 16 FROM payouts) FROM payout_blocks`).Scan(&done, &last); err != nil {
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
	err = tx.QueryRowContext(ctx, `SELECT recipient_id, faucet_id, created_at, id FROM payouts
		WHERE id >> 16 = ?1 AND (recipient_id, faucet_id, created_at, id) > (?2, ?3, ?4, ?5)
		ORDER BY recipient_id, faucet_id, created_at, id LIMIT 1 OFFSET ?6`,
		done, c.after.recipient, c.after.faucet, c.after.at, c.after.id, compactChunk-1).
		Scan(&upto.recipient, &upto.faucet, &upto.at, &upto.id)
	switch {
	case err == nil:
		end = false
	case err != sql.ErrNoRows:
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO payouts_by_recipient
		(faucet_id, recipient_id, created_at, payout_id, coin, amount)
		SELECT faucet_id, recipient_id, created_at, id, coin, amount FROM payouts
		WHERE id >> 16 = ?1 AND (recipient_id, faucet_id, created_at, id) > (?2, ?3, ?4, ?5)
			AND (recipient_id, faucet_id, created_at, id) <= (?6, ?7, ?8, ?9)
		ORDER BY faucet_id, recipient_id, created_at, id`,
		done, c.after.recipient, c.after.faucet, c.after.at, c.after.id,
		upto.recipient, upto.faucet, upto.at, upto.id); err != nil {
		return false, err
	}
	if end {
		if _, err := tx.ExecContext(ctx, `UPDATE payout_blocks SET done = done + 1 WHERE done = ?1`, done); err != nil {
			return false, err
		}
	}
	if err := tx.Commit(); err != nil {
		return false, err
	}
	c.after = upto
	if end {
		c.block = -1
	}
	return true, nil
}
