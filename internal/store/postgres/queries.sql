-- PostgreSQL uses the shared queries as they are; FaucetLock's FOR NO KEY UPDATE
-- and MigrationLock's advisory lock are written for it. It adds these:

-- The set forms of a payout batch's per-row locks and debits (rowCalls,
-- issue 16 round twenty-three), one statement over the batch's rows in
-- place of one a row, for a batch of two rows or more (one row runs the
-- one-row statement, cheaper here: round twenty-four): spread's batches lock and debit a balance for each
-- of up to 64 faucets, and one-row statements cost PostgreSQL more than
-- their rows (round seventeen: 12.7 µs a payout of 64-faucet batches).
--
-- Each row is found by the primary key whatever the planner knows of the
-- table: a LATERAL subquery a row, which FOR UPDATE (or OFFSET 0) keeps
-- from being flattened into a join the planner may turn into a scan of
-- the table (TestSetFormsSearchTheirIndex). The locks are taken in the
-- rows' order, which is the batch's lock order (PayoutsOpen sorts them,
-- D5): the function scan of the arrays is the nested loop's outer side,
-- and each row's subquery locks its row before the next row is read.
-- name: FaucetsLockRows
SELECT f.id FROM unnest($1::bigint[]) AS r(id)
CROSS JOIN LATERAL (SELECT id FROM faucets WHERE id = r.id FOR NO KEY UPDATE) AS f;

-- name: BalancesLockRows
SELECT b.account_id, b.coin, b.amount, b.debits FROM unnest($1::bigint[], $2::text[]) AS r(account_id, coin)
CROSS JOIN LATERAL (
  SELECT account_id, coin, amount, debits FROM balances WHERE account_id = r.account_id AND coin = r.coin FOR UPDATE
) AS b;

-- The debits run after BalancesLockRows has locked every row in the same
-- transaction, so their order cannot deadlock. Each row is one debit: a
-- batch's rows name distinct balances (PayoutsInsert sums them). A row
-- whose balance is short changes nothing, and the batch fails on the
-- count of rows changed (ErrInsufficientFunds), as with one statement a
-- row. The debit counts itself (BalanceDebit).
-- name: BalancesDebitRows
UPDATE balances SET amount = balances.amount - d.amount, debits = balances.debits + 1
FROM (SELECT r.amount, b.ctid AS at FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS r(account_id, coin, amount)
      CROSS JOIN LATERAL (SELECT ctid FROM balances WHERE account_id = r.account_id AND coin = r.coin OFFSET 0) AS b) AS d
WHERE balances.ctid = d.at AND balances.amount >= d.amount;

-- The statistics' horizon (D73, sqlstore's StatsFold).
-- A new horizon, in a transaction of its own: the next id, read first,
-- then the xid this transaction takes in the update, after the read. A
-- payout's transaction holds an xid before it takes an id (PayoutsOpen
-- locks first), so each transaction that took an id below next_id has an
-- xid below this one.
-- name: StatsHorizonNext
SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence('payouts', 'id')::regclass), 0) + 1;

-- name: StatsHorizonSet
UPDATE stats_horizon SET next_id = $1, xid = pg_current_xact_id() WHERE next_id < $1;
