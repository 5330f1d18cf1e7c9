-- The journal's references are checked once per statement (issue 16,
-- D64). A foreign key checks the row it names for every row inserted,
-- and locks that row (FOR KEY SHARE), which writes to it: a batch of
-- payouts took three checks per transfer and a lock, and a WAL record,
-- on the account row of every recipient. The same rule is now one query
-- per INSERT over the rows it inserted (a transition table): the
-- database still refuses a transfer of an unknown coin or between
-- unknown accounts, with foreign_key_violation as before. No lock is
-- needed because the rows named are never deleted (below), as
-- transfers themselves are never changed (transfers_append_only).
ALTER TABLE transfers
  DROP CONSTRAINT transfers_coin_fkey,
  DROP CONSTRAINT transfers_from_account_fkey,
  DROP CONSTRAINT transfers_to_account_fkey;

CREATE FUNCTION transfers_name_known_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE bad RECORD;
BEGIN
  -- Each row's references are looked up by primary key (OFFSET 0 keeps
  -- each EXISTS a subplan run per row): a join, which the planner is free
  -- to choose for a transition table it has no statistics for, scanned
  -- every account once per batch.
  SELECT t.id, t.coin, t.from_account, t.to_account INTO bad FROM inserted t
  WHERE NOT EXISTS (SELECT 1 FROM coins c WHERE c.symbol = t.coin OFFSET 0)
     OR NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.from_account OFFSET 0)
     OR NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.to_account OFFSET 0)
  LIMIT 1;
  IF FOUND THEN
    RAISE EXCEPTION 'transfer % names an unknown coin or account (coin %, from %, to %)',
      bad.id, bad.coin, bad.from_account, bad.to_account
      USING ERRCODE = 'foreign_key_violation';
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER transfers_name_known_rows AFTER INSERT ON transfers
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION transfers_name_known_rows();

-- The rows the journal names are never deleted: no statement of drip
-- deletes an account or a coin, and the database refuses it.
CREATE FUNCTION named_by_the_journal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION '% rows are never deleted: the journal names them', TG_TABLE_NAME; END;
$$;
CREATE TRIGGER accounts_kept BEFORE DELETE OR TRUNCATE ON accounts
FOR EACH STATEMENT EXECUTE FUNCTION named_by_the_journal();
CREATE TRIGGER coins_kept BEFORE DELETE OR TRUNCATE ON coins
FOR EACH STATEMENT EXECUTE FUNCTION named_by_the_journal();
