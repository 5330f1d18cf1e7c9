-- The journal's references (0018) are checked once per distinct value,
-- not once per row (issue 16, D64): a batch of a hot faucet's payouts
-- names one coin and one sender, so the three lookups a transfer took
-- become one (its recipient), and the coin's and the sender's once for the
-- whole batch. As before, each value is looked up by primary key (OFFSET 0
-- keeps each NOT EXISTS a subplan run per value, whatever the planner
-- guesses of a transition table), and an unknown one is
-- foreign_key_violation.
CREATE OR REPLACE FUNCTION transfers_name_known_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE unknown TEXT;
BEGIN
  SELECT u.what INTO unknown FROM (
    SELECT 'account ' || k.id AS what
    FROM (SELECT from_account AS id FROM inserted UNION SELECT to_account FROM inserted) k
    WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = k.id OFFSET 0)
    UNION ALL
    SELECT 'coin ' || k.coin
    FROM (SELECT DISTINCT coin FROM inserted) k
    WHERE NOT EXISTS (SELECT 1 FROM coins c WHERE c.symbol = k.coin OFFSET 0)
  ) u LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'a transfer names an unknown %', unknown USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END;
$$;
