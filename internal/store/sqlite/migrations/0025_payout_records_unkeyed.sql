-- A payout's records keep no foreign keys on SQLite either (issue 16, D64),
-- as on PostgreSQL since its migration 0017: payouts (its faucet, recipient
-- and transfer) and events (its faucet). Each key is a search of the
-- table it names, run by the one writer for every row: four a payout,
-- 5-9% of the instructions of one (BENCHMARKS.md, round twenty).
-- The journal, transfers, keeps its keys.
--
-- SQLite cannot drop a column's REFERENCES clause; rebuilding the tables
-- would copy every payout and event at upgrade. A key is no part of the
-- stored rows, only of the table's definition, so this edits the
-- definition's text in sqlite_schema, SQLite's documented procedure for
-- removing a foreign key (lang_altertable.html, "Making Other Kinds Of
-- Table Schema Changes"): the same work on any size of database.
-- writable_schema=RESET makes this connection read the edited definitions
-- again; the triggers below change the schema's version, so every other
-- connection reads them again too. TestPayoutRecordsUnkeyed checks the
-- result, integrity_check included.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(replace(replace(sql,
  ' REFERENCES faucets (id)', ''),
  ' REFERENCES users (id)', ''),
  ' REFERENCES transfers (id)', '')
WHERE type = 'table' AND name = 'payouts';
UPDATE sqlite_schema
SET sql = replace(sql, ' REFERENCES faucets (id)', '')
WHERE type = 'table' AND name = 'events';
PRAGMA writable_schema = RESET;

-- The rows that payouts and events name are never deleted: no statement
-- of drip deletes them, and the database refuses it, so a reference that
-- was right when written stays right. (transfers are append-only since
-- migration 0001; accounts and coins keep the journal's keys.)
CREATE TRIGGER faucets_kept BEFORE DELETE ON faucets
BEGIN SELECT RAISE(ABORT, 'faucets rows are never deleted: payouts and events name them'); END;
CREATE TRIGGER users_kept BEFORE DELETE ON users
BEGIN SELECT RAISE(ABORT, 'users rows are never deleted: payouts and events name them'); END;
