-- The users' page (StatsUsers, D73) by rank: a faucet's recipients in a
-- coin by their kept total, largest first. A page is then read from the
-- top of the rank and the recipients with payouts not folded yet, not
-- from every recipient the faucet ever paid (about 1 s a view at a
-- million of them). Each fold moves the entries of the sums it changes.
CREATE INDEX stats_users_rank ON stats_users (faucet_id, coin, amount DESC, recipient_id);
