-- The ledger and its owners (D1-D4). Timestamps: INTEGER Unix microseconds, UTC.

CREATE TABLE secrets (
  name  TEXT PRIMARY KEY,
  value BLOB NOT NULL
);

CREATE TABLE coins (
  symbol     TEXT PRIMARY KEY CHECK (symbol = upper(symbol)),
  name       TEXT NOT NULL,
  active     BOOLEAN NOT NULL DEFAULT TRUE,
  min_payout INTEGER NOT NULL DEFAULT 1 CHECK (min_payout > 0),
  position   INTEGER NOT NULL
);
INSERT INTO coins (symbol, name, position) VALUES
  ('BTC', 'Bitcoin', 1), ('ETH', 'Ethereum', 2), ('DOGE', 'Dogecoin', 3), ('LTC', 'Litecoin', 4),
  ('BCH', 'Bitcoin Cash', 5), ('DASH', 'Dash', 6), ('DGB', 'DigiByte', 7), ('TRX', 'Tron', 8),
  ('USDT', 'Tether', 9), ('BNB', 'Binance Coin', 10), ('SOL', 'Solana', 11), ('XRP', 'Ripple', 12);

CREATE TABLE accounts (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  kind       TEXT NOT NULL CHECK (kind IN ('system', 'user', 'faucet')),
  created_at INTEGER NOT NULL
);
-- Fixed system accounts: 1 system:deposits, 2 system:listing.
INSERT INTO accounts (id, kind, created_at) VALUES (1, 'system', 0), (2, 'system', 0);

CREATE TABLE users (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id       INTEGER NOT NULL UNIQUE REFERENCES accounts (id),
  username         TEXT NOT NULL UNIQUE,
  email            TEXT NOT NULL UNIQUE,
  password_hash    TEXT NOT NULL DEFAULT '',
  email_verified   BOOLEAN NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('active', 'suspended')),
  payout_user_hash TEXT UNIQUE,
  created_at       INTEGER NOT NULL
);

CREATE TABLE user_addresses (
  coin       TEXT NOT NULL REFERENCES coins (symbol),
  address    TEXT NOT NULL,
  user_id    INTEGER NOT NULL REFERENCES users (id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (coin, address)
);
CREATE INDEX user_addresses_user ON user_addresses (user_id);

CREATE TABLE faucets (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  owner_id         INTEGER NOT NULL REFERENCES users (id),
  account_id       INTEGER NOT NULL UNIQUE REFERENCES accounts (id),
  name             TEXT NOT NULL,
  domain           TEXT NOT NULL,
  url              TEXT NOT NULL,
  api_key_hash     TEXT NOT NULL UNIQUE,
  pending_key_hash TEXT UNIQUE,
  ip_whitelist     TEXT NOT NULL,
  limits           TEXT NOT NULL,
  rules            TEXT NOT NULL,
  created_at       INTEGER NOT NULL
);
CREATE INDEX faucets_owner ON faucets (owner_id);

-- The database itself keeps balances from going negative (D2); only
-- system:deposits, the mirror of the outside world, may.
CREATE TABLE balances (
  account_id INTEGER NOT NULL REFERENCES accounts (id),
  coin       TEXT NOT NULL REFERENCES coins (symbol),
  amount     INTEGER NOT NULL,
  PRIMARY KEY (account_id, coin),
  CONSTRAINT balance_not_negative CHECK (amount >= 0 OR account_id = 1)
);

-- The journal: one row per double-entry transfer, append-only.
CREATE TABLE transfers (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  coin         TEXT NOT NULL REFERENCES coins (symbol),
  from_account INTEGER NOT NULL REFERENCES accounts (id),
  to_account   INTEGER NOT NULL REFERENCES accounts (id),
  amount       INTEGER NOT NULL CHECK (amount > 0),
  kind         TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  CHECK (from_account <> to_account)
);
CREATE TRIGGER transfers_append_only_update BEFORE UPDATE ON transfers
BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END;
CREATE TRIGGER transfers_append_only_delete BEFORE DELETE ON transfers
BEGIN SELECT RAISE(ABORT, 'transfers are append-only'); END;

CREATE TABLE payouts (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id    INTEGER NOT NULL REFERENCES faucets (id),
  recipient_id INTEGER NOT NULL REFERENCES users (id),
  transfer_id  INTEGER NOT NULL UNIQUE REFERENCES transfers (id),
  to_given     TEXT NOT NULL,
  coin         TEXT NOT NULL,
  amount       INTEGER NOT NULL,
  ip_address   TEXT NOT NULL,
  referral     TEXT NOT NULL,
  created_at   INTEGER NOT NULL
);
CREATE INDEX payouts_faucet ON payouts (faucet_id, id);
CREATE INDEX payouts_faucet_coin ON payouts (faucet_id, coin, id);
CREATE INDEX payouts_faucet_time ON payouts (faucet_id, created_at);
CREATE INDEX payouts_faucet_recipient ON payouts (faucet_id, recipient_id, created_at);
CREATE INDEX payouts_faucet_ip ON payouts (faucet_id, ip_address, created_at);

-- Facts for webhook delivery, written in the transaction that caused them (D50, D51).
CREATE TABLE events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT, -- delivery and listing order
  id         TEXT NOT NULL UNIQUE,
  faucet_id  INTEGER NOT NULL REFERENCES faucets (id),
  type       TEXT NOT NULL,
  data       TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX events_faucet ON events (faucet_id, seq);

-- Blacklist refusals, feeding other faucets' negative rank of the user (D42).
CREATE TABLE refusals (
  user_id    INTEGER NOT NULL REFERENCES users (id),
  faucet_id  INTEGER NOT NULL REFERENCES faucets (id),
  created_at INTEGER NOT NULL
);
CREATE INDEX refusals_user ON refusals (user_id, created_at);
