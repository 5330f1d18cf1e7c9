-- How many recipients a faucet paid in a coin, kept (D73): the users'
-- page showed it by counting the faucet's kept sums in that coin at every
-- view, about 45 ns a recipient, 45 ms at a million of them (BENCHMARKS.md,
-- round thirty-three). Now it reads one row, and adds the recipients paid
-- since the mark that the sums do not hold, as before.
--
-- The trigger counts the recipients whose sums a statement first inserts,
-- which only a fold does, so the count moves with the sums and the mark
-- in the fold's transaction. It is a trigger, not a statement of the
-- fold, so that a fold of the previous release counts too: its nodes fold
-- while a cluster is upgraded one node at a time (docs/deploy.md). It runs
-- once a statement, over the sums the statement inserted (an upsert's
-- transition table holds those, not the sums it added to).
--
-- A second trigger takes the sums a statement deletes off the counts, so
-- that the previous release's drip admin stats rebuild, which empties the
-- sums but knows nothing of the counts, leaves them right too, during the
-- upgrade or after going back to the previous release. SQLite, one node,
-- has no such window, and a DELETE trigger there would cost the rebuild
-- SQLite's emptying of a whole table without visiting its rows (D73).
CREATE TABLE stats_user_counts (
  faucet_id BIGINT NOT NULL,
  coin TEXT NOT NULL,
  recipients BIGINT NOT NULL,
  PRIMARY KEY (faucet_id, coin)
);

CREATE FUNCTION stats_users_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO stats_user_counts (faucet_id, coin, recipients)
  SELECT faucet_id, coin, COUNT(*) FROM inserted GROUP BY faucet_id, coin
  ON CONFLICT (faucet_id, coin) DO UPDATE SET recipients = stats_user_counts.recipients + excluded.recipients;
  RETURN NULL;
END $$;

-- The triggers are created before the sums are counted: creating one
-- waits for a fold in progress and holds off the next until the migration
-- commits, so the count below, a statement of its own that sees what is
-- committed when it starts (READ COMMITTED, the transactions' level),
-- counts every sum a fold inserted before it (TestMigrationCountsBesideAFold).
CREATE TRIGGER stats_users_counted AFTER INSERT ON stats_users
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION stats_users_counted();

CREATE FUNCTION stats_users_uncounted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE stats_user_counts c SET recipients = c.recipients - d.n
  FROM (SELECT faucet_id, coin, COUNT(*) AS n FROM deleted GROUP BY faucet_id, coin) AS d
  WHERE c.faucet_id = d.faucet_id AND c.coin = d.coin;
  DELETE FROM stats_user_counts WHERE recipients = 0;
  RETURN NULL;
END $$;

CREATE TRIGGER stats_users_uncounted AFTER DELETE ON stats_users
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION stats_users_uncounted();

INSERT INTO stats_user_counts (faucet_id, coin, recipients)
SELECT faucet_id, coin, COUNT(*) FROM stats_users GROUP BY faucet_id, coin;
