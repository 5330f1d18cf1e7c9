-- v2 keys (D14): scoped, optionally expiring, IP-restricted and capped;
-- stored as a SHA-256 hash of the whole key, found by that hash.
CREATE TABLE api_keys (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id            INTEGER NOT NULL REFERENCES faucets (id),
  prefix               TEXT NOT NULL UNIQUE,
  key_hash             TEXT NOT NULL UNIQUE,
  scopes               TEXT NOT NULL,            -- comma-separated, display order
  expires_at           INTEGER,                     -- NULL: never
  ip_whitelist         TEXT NOT NULL,            -- JSON list of prefixes
  daily_usd_cap_micros INTEGER NOT NULL DEFAULT 0 CHECK (daily_usd_cap_micros >= 0),
  revoked_at           INTEGER,                     -- NULL: live
  created_at           INTEGER NOT NULL
);
CREATE INDEX api_keys_faucet ON api_keys (faucet_id, id);
