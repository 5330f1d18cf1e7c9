-- The recent level of a faucet's payouts by recipient (D71) led by the
-- recipient after the block: payouts_block_recipient on (block,
-- recipient, faucet, time) in place of (block, faucet, recipient, time).
--
-- Every reader of the recent level names both the faucet and the
-- recipient (windows, a wallet's page, the faucets that paid a user), so
-- either order serves it with the same search. What differs is the pages
-- a batch writes. Led by the faucet, a batch that pays from many faucets
-- wrote a leaf page of the last block's part for each faucet, one more
-- page a payout at each commit, even when it paid a run of neighbouring
-- recipients. Led by the recipient, payouts to the same or neighbouring
-- recipients share pages whichever faucets pay them; payouts to scattered
-- recipients cost what they cost before. (BENCHMARKS.md, round
-- twenty-three: spread, 100 faucets, 5-10% less CPU a payout.)
DROP INDEX payouts_block_recipient;
CREATE INDEX payouts_block_recipient ON payouts (id >> 16, recipient_id, faucet_id, created_at);
