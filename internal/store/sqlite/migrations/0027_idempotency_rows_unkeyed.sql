-- A paid v2 send's idempotency row keeps no foreign keys either (issue 16,
-- D64), as its payout's rows have not since migration 0025: its faucet and
-- its payout, each a search the one writer ran for every idempotent
-- payout. The ledger writes the row in the payout's transaction, naming
-- the faucet it read and the payout it has just written; payouts are never
-- deleted (below), and reconcile reports an idempotency row whose payout
-- is missing or belongs to another faucet (D3).
-- The same edit of the table's definition as migration 0025 (see there):
-- the same work on any size of database. TestPayoutRecordsUnkeyed checks
-- the result.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
SET sql = replace(replace(sql,
  ' REFERENCES faucets (id)', ''),
  ' REFERENCES payouts (id)', '')
WHERE type = 'table' AND name = 'idempotency_keys';
PRAGMA writable_schema = RESET;

-- Payouts are never deleted: no statement of drip deletes one, and now the
-- database refuses it, so the payout an idempotency row names stays there.
-- (Idempotency rows themselves are pruned after D35's retention.)
CREATE TRIGGER payouts_kept BEFORE DELETE ON payouts
BEGIN SELECT RAISE(ABORT, 'payouts rows are never deleted: idempotency keys name them'); END;
