-- How many debits have changed each balance (issue 16, D66). Every
-- transaction that writes a faucet's payouts debits the faucet's balance
-- of their coin (D3), so the sum of a faucet's counts changes with every
-- payout committed, and never goes back: a node keeps the faucet's latest
-- payouts in memory and serves them while that sum is the one it read
-- them under. drip's debit statements count themselves; a trigger counts
-- any other update that lowers a balance, such as those of the previous
-- release, whose nodes keep paying while a cluster is upgraded one node
-- at a time. (Counting every debit in the trigger cost PostgreSQL a
-- function call per faucet debited: spread, 64 faucets a batch, was a
-- fifth to a third slower.)
ALTER TABLE balances ADD COLUMN debits BIGINT NOT NULL DEFAULT 0;

CREATE FUNCTION balances_count_debit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.debits := OLD.debits + 1;
  RETURN NEW;
END $$;

-- WHEN keeps the function from running for a credit, or a debit that
-- counted itself.
CREATE TRIGGER balances_count_debits BEFORE UPDATE OF amount ON balances
  FOR EACH ROW WHEN (NEW.amount < OLD.amount AND NEW.debits = OLD.debits) EXECUTE FUNCTION balances_count_debit();
