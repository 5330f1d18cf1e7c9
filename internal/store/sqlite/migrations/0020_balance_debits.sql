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
ALTER TABLE balances ADD COLUMN debits INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER balances_count_debits AFTER UPDATE OF amount ON balances
WHEN NEW.amount < OLD.amount AND NEW.debits = OLD.debits
BEGIN UPDATE balances SET debits = debits + 1 WHERE account_id = NEW.account_id AND coin = NEW.coin; END;
