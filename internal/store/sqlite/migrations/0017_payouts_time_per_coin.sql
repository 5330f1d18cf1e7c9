-- A faucet's payouts keep one time-ordered index, per coin (D65). Every
-- payout inserted into payouts_faucet_time at its faucet's place, so a
-- batch over many faucets wrote one more page per faucet to the log (and
-- the checkpointer copied it back). The lists, windows and statistics of
-- all a faucet's coins read payouts_faucet_coin_time one coin at a time
-- instead; a faucet pays in few coins.
DROP INDEX payouts_faucet_time;
