-- The cache generation (issue 16, D63): one number that every change to
-- what a send reads before the ledger (a key, its faucet and owner, a
-- recipient and the addresses that name it) raises in its own
-- transaction. A node serves those reads from memory only while the
-- number it read after the request arrived is the one it cached them
-- under, so a rotated key, a revoked key or a suspension is refused at
-- once on every node (D13, D14), as when nothing was cached.
-- Columns a send does not read (a password, a TOTP step, a key's last
-- use) do not raise it: logins and key use must not empty the caches.
CREATE TABLE cache_generation (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  gen BIGINT NOT NULL
);
INSERT INTO cache_generation (id, gen) VALUES (1, 1);

CREATE FUNCTION cache_generation_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE cache_generation SET gen = gen + 1 WHERE id = 1;
  RETURN NULL;
END $$;

CREATE TRIGGER users_cache_generation
  AFTER INSERT OR DELETE OR UPDATE OF account_id, username, email, email_verified, status, payout_user_hash
  ON users FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_bump();
CREATE TRIGGER user_addresses_cache_generation
  AFTER INSERT OR DELETE OR UPDATE
  ON user_addresses FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_bump();
CREATE TRIGGER faucets_cache_generation
  AFTER DELETE OR UPDATE
  ON faucets FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_bump();
CREATE TRIGGER api_keys_cache_generation
  AFTER DELETE OR UPDATE OF faucet_id, prefix, key_hash, scopes, expires_at, ip_whitelist, daily_usd_cap_micros, revoked_at
  ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION cache_generation_bump();
