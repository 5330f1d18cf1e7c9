-- A faucet's payouts and events in two levels (issue 16, D72), in place of
-- payouts_faucet_coin_time (faucet, coin, time, id) and events_feed
-- (faucet, txid, seq), indexes over every payout and every event led by
-- the faucet. A batch that pays from many faucets wrote a leaf page of
-- each for every faucet it paid, one page of each a payout at every
-- commit: a third of the ledger's time a payout in spread (BENCHMARKS.md,
-- round twenty-four).
--
-- The recent level: the same keys led by a small block, id >> 8 (256
-- consecutive payout ids) and seq >> 8 (256 consecutive events). A block's
-- part of an index holds at most 256 entries, two or three pages, and a
-- batch's payouts take one or two blocks, so a batch writes those few pages
-- whichever faucets it pays. With one writer, payout ids and event seqs are
-- given in order, and neither is ever deleted (payouts_kept, events_kept),
-- so a new payout or event always enters the last block.
--
-- The compacted level: payouts_by_faucet and events_by_faucet, copies of
-- every payout and event of a block below the watermark
-- (faucet_blocks.payouts_done, events_done), keyed by faucet as the
-- dropped indexes were and written in that order by the compactor
-- (compact.go), a page a faucet a copy rather than a page a payout. The
-- compactor copies whole blocks and moves the watermark in the same
-- transaction, so a copy holds exactly the blocks below its watermark:
-- a read takes the copy's range and each block's from the watermark to the
-- last, and no row is in both. A copy holds the old index's key alone, so
-- the compactor fills it from the recent level's index, reading no table
-- row; a read that needs more of a payout finds its row by id, as it did
-- from the old index.
CREATE TABLE payouts_by_faucet (
  faucet_id INTEGER NOT NULL,
  coin TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  payout_id INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, coin, created_at, payout_id)
) WITHOUT ROWID;

CREATE TABLE events_by_faucet (
  faucet_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, seq)
) WITHOUT ROWID;

-- Every block below the last is copied; the last stays in the recent
-- level, which new payouts and events enter.
CREATE TABLE faucet_blocks (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  payouts_done INTEGER NOT NULL CHECK (payouts_done >= 0),
  events_done INTEGER NOT NULL CHECK (events_done >= 0)
);
INSERT INTO faucet_blocks (id, payouts_done, events_done)
SELECT 1, (SELECT COALESCE(MAX(id), 0) >> 8 FROM payouts), (SELECT COALESCE(MAX(seq), 0) >> 8 FROM events);

-- The rows already stored, read in the order of the old indexes, so each
-- copy is written from its start to its end and nothing is sorted.
INSERT INTO payouts_by_faucet (faucet_id, coin, created_at, payout_id)
SELECT faucet_id, coin, created_at, id FROM payouts INDEXED BY payouts_faucet_coin_time
WHERE id >> 8 < (SELECT payouts_done FROM faucet_blocks)
ORDER BY faucet_id, coin, created_at, id;

INSERT INTO events_by_faucet (faucet_id, seq)
SELECT faucet_id, seq FROM events INDEXED BY events_feed
WHERE seq >> 8 < (SELECT events_done FROM faucet_blocks)
ORDER BY faucet_id, txid, seq;

DROP INDEX payouts_faucet_coin_time;
DROP INDEX events_feed;
CREATE INDEX payouts_block_faucet ON payouts (id >> 8, faucet_id, coin, created_at, id);
CREATE INDEX events_block_faucet ON events (seq >> 8, faucet_id, seq);

-- A deleted event would stay in its copy: no statement of drip deletes
-- one, and SQLite refuses it as it refuses a deleted payout (D71).
CREATE TRIGGER events_kept BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'events are never deleted: their copy by faucet names them (D72)');
END;
