-- A faucet's payouts keep one time-ordered index, per coin (D65). Every
-- payout inserted into payouts_faucet_time at its faucet's place, so a
-- batch over many faucets wrote one more index page per faucet (and its
-- WAL record). The lists, windows and statistics of all a faucet's coins
-- read payouts_faucet_coin_time one coin at a time instead; a faucet pays
-- in few coins. Without it, no cached generic plan can count a recipient's
-- window by scanning the faucet's time range either (BENCHMARKS.md, round
-- four).
DROP INDEX payouts_faucet_time;
