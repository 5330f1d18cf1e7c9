-- How many debits have changed each balance (issue 16, D66). Every
-- transaction that writes a faucet's payouts debits the faucet's balance
-- of their coin (D3), so the sum of a faucet's counts changes with every
-- payout committed, and never goes back: a node keeps the faucet's latest
-- payouts in memory and serves them while that sum is the one it read
-- them under.
ALTER TABLE balances ADD COLUMN debits BIGINT NOT NULL DEFAULT 0;
