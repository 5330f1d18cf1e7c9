-- The cache generation in two counters (issue 16, D63). key_gen counts
-- changes to what authenticates a send: a key, its faucet, and the
-- owner's standing; recipient_gen counts changes to what a destination
-- resolves to: a user and the addresses that name them. A node's cache
-- of faucets and keys is tagged with key_gen, its cache of recipients
-- with recipient_gen, so a new user no longer empties every node's
-- faucets and keys, nor a faucet's new settings every recipient.
-- A change to a user's row raises both: the owner of a faucet is a user,
-- and a cached faucet carries its owner's status. gen is still raised by
-- every change, as before: nodes of the previous release read it while
-- their cluster is upgraded one node at a time.
ALTER TABLE cache_generation ADD COLUMN key_gen BIGINT NOT NULL DEFAULT 1;
ALTER TABLE cache_generation ADD COLUMN recipient_gen BIGINT NOT NULL DEFAULT 1;

DROP TRIGGER users_cache_generation ON users;
DROP TRIGGER user_addresses_cache_generation ON user_addresses;
DROP TRIGGER faucets_cache_generation ON faucets;
DROP TRIGGER api_keys_cache_generation ON api_keys;
DROP FUNCTION cache_generation_bump();

CREATE FUNCTION cache_generation_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE cache_generation SET gen = gen + 1, key_gen = key_gen + 1 WHERE id = 1;
  RETURN NULL;
END $$;
CREATE FUNCTION cache_generation_recipients() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE cache_generation SET gen = gen + 1, recipient_gen = recipient_gen + 1 WHERE id = 1;
  RETURN NULL;
END $$;
CREATE FUNCTION cache_generation_both() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE cache_generation SET gen = gen + 1, key_gen = key_gen + 1, recipient_gen = recipient_gen + 1 WHERE id = 1;
  RETURN NULL;
END $$;

CREATE TRIGGER users_cache_generation_insert
  AFTER INSERT ON users FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_recipients();
CREATE TRIGGER users_cache_generation
  AFTER DELETE OR UPDATE OF account_id, username, email, email_verified, status, payout_user_hash
  ON users FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_both();
CREATE TRIGGER user_addresses_cache_generation
  AFTER INSERT OR DELETE OR UPDATE
  ON user_addresses FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_recipients();
CREATE TRIGGER faucets_cache_generation
  AFTER DELETE OR UPDATE
  ON faucets FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_keys();
CREATE TRIGGER api_keys_cache_generation
  AFTER DELETE OR UPDATE OF faucet_id, prefix, key_hash, scopes, expires_at, ip_whitelist, daily_usd_cap_micros, revoked_at
  ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_keys();
