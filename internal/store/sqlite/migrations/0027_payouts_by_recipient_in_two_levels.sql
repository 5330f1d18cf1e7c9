-- A faucet's payouts by recipient in two levels (issue 16, D71), in place
-- of payouts_faucet_recipient, an index over every payout by faucet,
-- recipient and time. Once recipients have history each has leaf pages of
-- its own there, so a batch of 64 payouts wrote about 64 pages of it to
-- the log at every commit, where an empty database's packed entries took a
-- handful: all of SQLite's cost of 10M payouts stored (BENCHMARKS.md,
-- round twenty-one).
--
-- The recent level: payouts_block_recipient, the same key led by the
-- payout's block, its id >> 16 (65,536 consecutive ids). With one writer,
-- ids are given in order (PayoutIDsNext) and a payout is never deleted
-- (payouts_kept, below), so a new payout always enters the last block,
-- whose part of the index is small whatever the history.
--
-- The compacted level: payouts_by_recipient, a copy of each finished
-- block's payouts by faucet, recipient and time, written in that order by
-- the compactor (compact.go), a page a recipient a block rather than a
-- page a payout. payout_blocks.done is its watermark: every payout of a
-- block below it is in the copy, moved in the transaction that copied the
-- block's last rows.
--
-- A read by recipient reads the copy below the watermark and the recent
-- level's blocks from the watermark to the last (one or two). The copy
-- carries coin and amount, so a send limit's window (D41) is counted from
-- it alone.
CREATE TABLE payouts_by_recipient (
  faucet_id INTEGER NOT NULL,
  recipient_id INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  payout_id INTEGER NOT NULL,
  coin TEXT NOT NULL,
  amount INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, recipient_id, created_at, payout_id)
) WITHOUT ROWID;

-- The payouts already stored, read in the order of the old index, so the
-- copy is written from its start to its end and nothing is sorted.
INSERT INTO payouts_by_recipient (faucet_id, recipient_id, created_at, payout_id, coin, amount)
SELECT faucet_id, recipient_id, created_at, id, coin, amount FROM payouts INDEXED BY payouts_faucet_recipient
ORDER BY faucet_id, recipient_id, created_at, id;

CREATE TABLE payout_blocks (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  done INTEGER NOT NULL CHECK (done >= 0)
);
-- Every block below the last is copied; the last is copied too, and is
-- copied again (INSERT OR IGNORE) once it is finished.
INSERT INTO payout_blocks (id, done) SELECT 1, COALESCE(MAX(id), 0) >> 16 FROM payouts;

DROP INDEX payouts_faucet_recipient;
CREATE INDEX payouts_block_recipient ON payouts (id >> 16, faucet_id, recipient_id, created_at);

-- A deleted payout would stay in the copy, and an id given again would
-- enter a block already copied: no statement of drip deletes one, and
-- SQLite now refuses it as PostgreSQL does (D64).
CREATE TRIGGER payouts_kept BEFORE DELETE ON payouts
BEGIN
  SELECT RAISE(ABORT, 'payouts are never deleted: the ledger and its indexes by recipient name them (D64, D71)');
END;
