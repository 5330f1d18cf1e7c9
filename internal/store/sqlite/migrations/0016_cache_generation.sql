-- The cache generation (issue 16, D63): one number that every change to
-- what a send reads before the ledger (a key, its faucet and owner, a
-- recipient and the addresses that name it) raises in its own
-- transaction. A node serves those reads from memory only while the
-- number it read after the request arrived is the one it cached them
-- under, so a rotated key, a revoked key or a suspension is refused at
-- once (D13, D14), as when nothing was cached.
-- Columns a send does not read (a password, a TOTP step, a key's last
-- use) do not raise it: logins and key use must not empty the caches.
CREATE TABLE cache_generation (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  gen INTEGER NOT NULL
);
INSERT INTO cache_generation (id, gen) VALUES (1, 1);

CREATE TRIGGER users_cache_generation_insert AFTER INSERT ON users
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
CREATE TRIGGER users_cache_generation_delete AFTER DELETE ON users
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
CREATE TRIGGER users_cache_generation_update
  AFTER UPDATE OF account_id, username, email, email_verified, status, payout_user_hash ON users
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;

CREATE TRIGGER user_addresses_cache_generation_insert AFTER INSERT ON user_addresses
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
CREATE TRIGGER user_addresses_cache_generation_delete AFTER DELETE ON user_addresses
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
CREATE TRIGGER user_addresses_cache_generation_update AFTER UPDATE ON user_addresses
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;

CREATE TRIGGER faucets_cache_generation_delete AFTER DELETE ON faucets
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
CREATE TRIGGER faucets_cache_generation_update AFTER UPDATE ON faucets
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;

CREATE TRIGGER api_keys_cache_generation_delete AFTER DELETE ON api_keys
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
CREATE TRIGGER api_keys_cache_generation_update
  AFTER UPDATE OF faucet_id, prefix, key_hash, scopes, expires_at, ip_whitelist, daily_usd_cap_micros, revoked_at ON api_keys
BEGIN UPDATE cache_generation SET gen = gen + 1 WHERE id = 1; END;
