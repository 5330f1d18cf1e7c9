-- The events feed (issue 17, D59): GET /api/v2/events reads a faucet's
-- events in the order they became visible, so that a client paging with a
-- cursor never skips one. On PostgreSQL the identity seq is taken at
-- insert, not at commit: a transaction holding seq 5 may commit after one
-- holding seq 6, and a reader that passed 6 would never see 5. So each
-- event keeps the id of the transaction that wrote it (txid, the column's
-- default: no insert changes), the feed is ordered by (txid, seq), and it
-- reads only events whose txid is below its snapshot's xmin, the oldest
-- transaction still running: every transaction below it has ended, so no
-- event can appear later before a position the feed has handed out.
--
-- Rows written before this migration are given txid 1, below every real
-- transaction id (3 and up), in seq order: ALTER TABLE waits for every
-- transaction writing events to end, so all of them are committed. The
-- constant default makes the new column a change of the catalog only; the
-- real default then applies to new rows.
ALTER TABLE events ADD COLUMN txid xid8 NOT NULL DEFAULT '1';
ALTER TABLE events ALTER COLUMN txid SET DEFAULT pg_current_xact_id();

-- The feed's index replaces events_faucet (faucet_id, seq), which only
-- the tests' EventList read: one index on the events of a payout, as
-- before, 8 bytes wider.
DROP INDEX events_faucet;
CREATE INDEX events_feed ON events (faucet_id, txid, seq);
