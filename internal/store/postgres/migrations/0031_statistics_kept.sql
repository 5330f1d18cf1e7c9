-- A faucet's statistics kept as sums (D73), as SQLite's migration 0032
-- keeps them: the sums of every payout whose id is below the mark
-- stats_mark.folded, to which a read adds the faucet's payouts from the
-- mark on.
--
-- Here payout ids come from a sequence and transactions commit in
-- another order, so the mark may only pass ids that are settled: the
-- horizon stats_horizon is an id, next_id, every id below which was taken
-- by a transaction whose xid is below xid, and once no transaction below
-- xid runs (the snapshot's xmin is past it), every id below next_id is
-- committed or never will be. A payout's transaction locks its faucet and
-- balances, which gives it an xid, before it takes its ids
-- (PayoutsOpen), and the horizon takes its xid after reading the
-- sequence, in a transaction of its own (sqlstore's StatsFold).

CREATE TABLE stats_users (
  faucet_id BIGINT NOT NULL,
  coin TEXT NOT NULL,
  recipient_id BIGINT NOT NULL,
  payouts BIGINT NOT NULL,
  amount BIGINT NOT NULL,
  last_at BIGINT NOT NULL,
  PRIMARY KEY (faucet_id, coin, recipient_id)
);

CREATE TABLE stats_days (
  faucet_id BIGINT NOT NULL,
  day BIGINT NOT NULL,
  coin TEXT NOT NULL,
  payouts BIGINT NOT NULL,
  amount BIGINT NOT NULL,
  recipients BIGINT NOT NULL,
  PRIMARY KEY (faucet_id, day, coin)
);

CREATE TABLE stats_day_users (
  faucet_id BIGINT NOT NULL,
  day BIGINT NOT NULL,
  coin TEXT NOT NULL,
  recipient_id BIGINT NOT NULL,
  PRIMARY KEY (faucet_id, day, coin, recipient_id)
);

CREATE TABLE stats_mark (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  folded BIGINT NOT NULL CHECK (folded >= 0)
);
INSERT INTO stats_mark (id, folded) VALUES (1, 0);

CREATE TABLE stats_horizon (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  next_id BIGINT NOT NULL,
  xid xid8 NOT NULL
);
INSERT INTO stats_horizon (id, next_id, xid) VALUES (1, 0, '0');
