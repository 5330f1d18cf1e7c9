-- A payout's records keep no foreign keys (issue 16, D64). Each foreign
-- key is a lookup of the row it names, run for every row inserted: a
-- payout's payout and event rows took four, about a sixth of
-- PostgreSQL's work for a payout, and that work is done by the one
-- backend that holds a hot faucet's balance. The ledger writes only ids
-- it read in the payment's transaction or its send's cached reads (D63),
-- the rows they name are never deleted (below), and reconcile reports a
-- payout whose transfer, faucet or recipient is missing (D3). The
-- journal itself, transfers, keeps its keys: the schema still refuses a
-- transfer of an unknown coin or between unknown accounts.
ALTER TABLE payouts
  DROP CONSTRAINT payouts_faucet_id_fkey,
  DROP CONSTRAINT payouts_recipient_id_fkey,
  DROP CONSTRAINT payouts_transfer_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_faucet_id_fkey;

-- The rows that payouts and events name are never deleted: no statement
-- of drip deletes them, and the database refuses it, so a reference that
-- was right when written stays right.
CREATE FUNCTION named_by_payouts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% rows are never deleted: payouts and events name them', TG_TABLE_NAME; END;
$$;
CREATE TRIGGER faucets_kept BEFORE DELETE OR TRUNCATE ON faucets
FOR EACH STATEMENT EXECUTE FUNCTION named_by_payouts();
CREATE TRIGGER users_kept BEFORE DELETE OR TRUNCATE ON users
FOR EACH STATEMENT EXECUTE FUNCTION named_by_payouts();
CREATE TRIGGER transfers_kept BEFORE TRUNCATE ON transfers
FOR EACH STATEMENT EXECUTE FUNCTION named_by_payouts();
