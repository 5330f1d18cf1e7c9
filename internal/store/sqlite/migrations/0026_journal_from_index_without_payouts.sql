-- The journal's index by paying account no longer holds payouts either
-- (issue 16, D70), as its index by receiving account has not since
-- migration 0022 (D67). Every payout's transfer entered it at its
-- faucet's place: one more index entry a payout, and in a batch that pays
-- many faucets one more page a faucet written to the log at every commit.
-- Its only reader of payouts was a faucet's journal (TransactionList),
-- which now reads a faucet's payouts from payouts_faucet_coin_time, which
-- the payout path writes anyway, in the order of their time.
-- Nodes of the previous release, while a cluster is upgraded one node at
-- a time, still list a faucet's journal correctly, if slowly: they read
-- the journal without this index.
DROP INDEX transfers_from;
CREATE INDEX transfers_from ON transfers (from_account, coin, id) WHERE kind <> 'payout';
