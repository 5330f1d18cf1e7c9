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
-- transition table holds those, not the sums it added to). drip admin
-- stats rebuild empties the counts with the sums.
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

-- Created before the sums are counted: it waits for a fold in progress
-- and holds off the next until the migration commits, so the count below
-- sees every sum a fold inserted before it.
CREATE TRIGGER stats_users_counted AFTER INSERT ON stats_users
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION stats_users_counted();

INSERT INTO stats_user_counts (faucet_id, coin, recipients)
SELECT faucet_id, coin, COUNT(*) FROM stats_users GROUP BY faucet_id, coin;
