-- A faucet's statistics kept as sums (D73), so that the statistics pages
-- and v2's /stats/daily and /stats/users read sums, not the faucet's
-- payouts: summed from its payouts at every view, they took time growing
-- with the faucet's history, about 0.6 s for the users' page at 1M
-- payouts (BENCHMARKS.md, round twenty-eight), and would pass the 5 s
-- request deadline (D6) at a few million.
--
-- The sums hold every payout below the mark stats_mark.folded (payout
-- ids, given in order by SQLite's one writer, and never deleted:
-- payouts_kept). The folder (sqlstore's stats.go) adds the payouts from
-- the mark on, in ranges of ids, and moves the mark in the same
-- transaction, so a payout is in the sums exactly when its id is below
-- the mark, at every snapshot. A read adds the sums and the faucet's
-- payouts from the mark on, found block by block in payouts_block_faucet
-- (D72): the reads are exact whatever the folder has done.
--
-- The mark starts at 0: the folder adds what a database already holds
-- after the upgrade, a range a transaction, while the reads stay exact.

-- What a faucet paid each recipient in a coin: the users' page.
CREATE TABLE stats_users (
  faucet_id INTEGER NOT NULL,
  coin TEXT NOT NULL,
  recipient_id INTEGER NOT NULL,
  payouts INTEGER NOT NULL,
  amount INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, coin, recipient_id)
) WITHOUT ROWID;

-- What a faucet paid in a coin in a UTC day (created_at / 86400000000),
-- and to how many recipients: the daily page.
CREATE TABLE stats_days (
  faucet_id INTEGER NOT NULL,
  day INTEGER NOT NULL,
  coin TEXT NOT NULL,
  payouts INTEGER NOT NULL,
  amount INTEGER NOT NULL,
  recipients INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, day, coin)
) WITHOUT ROWID;

-- Who a faucet paid in a coin in a day: a day's recipients are counted
-- once however many of its payouts, and whichever fold adds them.
CREATE TABLE stats_day_users (
  faucet_id INTEGER NOT NULL,
  day INTEGER NOT NULL,
  coin TEXT NOT NULL,
  recipient_id INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, day, coin, recipient_id)
) WITHOUT ROWID;

CREATE TABLE stats_mark (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  folded INTEGER NOT NULL CHECK (folded >= 0)
);
INSERT INTO stats_mark (id, folded) VALUES (1, 0);
