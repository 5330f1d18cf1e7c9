-- The events feed (issue 17, D59). SQLite has one writer, and a write
-- transaction holds the write lock from BEGIN IMMEDIATE to its commit,
-- so events commit in seq order and the feed reads them by seq alone.
-- txid is PostgreSQL's transaction id there (see its 0015); here it is
-- always 0, so that both engines keep one schema and one feed order,
-- (txid, seq).
ALTER TABLE events ADD COLUMN txid INTEGER NOT NULL DEFAULT 0;

DROP INDEX events_faucet;
CREATE INDEX events_feed ON events (faucet_id, txid, seq);
