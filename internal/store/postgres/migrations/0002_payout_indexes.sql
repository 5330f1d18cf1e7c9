-- Fewer indexes keyed by faucet on payouts. Every payout inserts into each
-- of them at its faucet's place, so a batch spread over many faucets dirties
-- a page per faucet per index; each one dropped here is fewer pages written
-- per commit.

-- One index serves both the newest-first listing and the time windows of
-- the owner's send limits (D41).
DROP INDEX payouts_faucet;
DROP INDEX payouts_faucet_time;
CREATE INDEX payouts_faucet_time ON payouts (faucet_id, created_at, id);

DROP INDEX payouts_faucet_coin;
CREATE INDEX payouts_faucet_coin_time ON payouts (faucet_id, coin, created_at, id);

-- Most sends carry no claimer IP; only those that do need indexing for the
-- per-IP limit, whose query states ip_address <> '' to use this index.
DROP INDEX payouts_faucet_ip;
CREATE INDEX payouts_faucet_ip ON payouts (faucet_id, ip_address, created_at) WHERE ip_address <> '';
