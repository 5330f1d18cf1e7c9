-- The journal's index by receiving account no longer holds payouts
-- (issue 16, D67). Every payout's transfer entered it at its recipient's
-- place, so once recipients have history each payout wrote a page of its
-- own there, as it does in payouts_faucet_recipient: with 2M payouts
-- stored, sends ran a fifth to a third slower than on an empty database,
-- and without these entries a tenth to a fifth faster than before. Its only
-- reader of payouts was the wallet's list of payouts received, which now
-- reads payouts_faucet_recipient, one range per faucet that paid the
-- user; a faucet's journal (TransactionList) takes from it only what a
-- faucet account receives, which is never a payout.
-- Nodes of the previous release, while a cluster is upgraded one node at
-- a time, still list a wallet's payouts and a faucet's journal correctly,
-- if slowly: they read the journal without this index.
DROP INDEX transfers_to;
CREATE INDEX transfers_to ON transfers (to_account, coin, id) WHERE kind <> 'payout';
