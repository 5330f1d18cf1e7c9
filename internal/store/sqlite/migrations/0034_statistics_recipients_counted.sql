-- How many recipients a faucet paid in a coin, kept (D73): the users'
-- page showed it by counting the faucet's kept sums in that coin at every
-- view, about 45 ns a recipient, 45 ms at a million of them (BENCHMARKS.md,
-- round thirty-three). Now it reads one row, and adds the recipients paid
-- since the mark that the sums do not hold, as before.
--
-- The trigger counts a recipient when their sum is first inserted, which
-- only a fold does, so the count moves with the sums and the mark in the
-- fold's transaction. It is a trigger, not a statement of the fold, so
-- that a fold of the previous release counts too: on PostgreSQL its nodes
-- fold while a cluster is upgraded one node at a time (docs/deploy.md).
-- An upsert that adds to a sum already there is an update, for which the
-- INSERT trigger does not fire. drip admin stats rebuild empties the
-- counts with the sums.
CREATE TABLE stats_user_counts (
  faucet_id INTEGER NOT NULL,
  coin TEXT NOT NULL,
  recipients INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, coin)
) WITHOUT ROWID;

CREATE TRIGGER stats_users_counted AFTER INSERT ON stats_users BEGIN
  INSERT INTO stats_user_counts (faucet_id, coin, recipients) VALUES (NEW.faucet_id, NEW.coin, 1)
  ON CONFLICT (faucet_id, coin) DO UPDATE SET recipients = recipients + 1;
END;

-- The sums a database already holds, counted in the migration's
-- transaction.
INSERT INTO stats_user_counts (faucet_id, coin, recipients)
SELECT faucet_id, coin, COUNT(*) FROM stats_users GROUP BY faucet_id, coin;
