-- A paid v2 send's idempotency row keeps no foreign keys either (issue 16,
-- D64), as its payout's rows have not since migration 0017: its faucet and
-- its payout. Each key is a lookup of the row it names, and the one on the
-- faucet also takes a share lock on the faucet's row, which every batch of
-- the faucet's idempotent sends then holds at once (a multixact). The
-- ledger writes the row in the payout's transaction, naming the faucet it
-- locked or read and the payout it has just written; payouts are never
-- deleted (below), and reconcile reports an idempotency row whose payout
-- is missing, another faucet's or in another coin (D3).
ALTER TABLE idempotency_keys
  DROP CONSTRAINT idempotency_keys_faucet_id_fkey,
  DROP CONSTRAINT idempotency_keys_payout_id_fkey;

-- Payouts are never deleted: no statement of drip deletes one, and now the
-- database refuses it, so the payout an idempotency row names stays there.
-- (Idempotency rows themselves are pruned after D35's retention.)
CREATE FUNCTION named_by_idempotency() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% rows are never deleted: idempotency keys name them', TG_TABLE_NAME; END;
$$;
CREATE TRIGGER payouts_kept BEFORE DELETE OR TRUNCATE ON payouts
FOR EACH STATEMENT EXECUTE FUNCTION named_by_idempotency();
