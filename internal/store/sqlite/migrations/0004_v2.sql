-- The v2 interface: faucet settings (D38) and low-balance alert (D43),
-- idempotent sends (D35), daily USD caps (D36), owner notifications (D43),
-- listing approval (D44), and the indexes of the faucet's journal reads.

ALTER TABLE faucets ADD COLUMN settings TEXT NOT NULL
  DEFAULT '{"faucet_description":"","timer_minutes":60,"currencies_selected":[],"categories_selected":[]}';
ALTER TABLE faucets ADD COLUMN low_balance TEXT NOT NULL DEFAULT '{"enabled":false,"thresholds":{}}';

-- A paid v2 send under an idempotency key, written in the payout's
-- transaction; the primary key is what stops a second payout (D35).
CREATE TABLE idempotency_keys (
  faucet_id        INTEGER NOT NULL REFERENCES faucets (id),
  idem_key         TEXT NOT NULL,
  request_hash     TEXT NOT NULL,
  payout_id        INTEGER NOT NULL REFERENCES payouts (id),
  coin             TEXT NOT NULL,
  balance          INTEGER NOT NULL,
  payout_user_hash TEXT NOT NULL,
  rate_remaining   REAL NOT NULL,
  created_at       INTEGER NOT NULL,
  PRIMARY KEY (faucet_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- USD value of a key's paid sends per UTC day (D36), in millionths.
CREATE TABLE key_spend (
  key_id INTEGER NOT NULL REFERENCES api_keys (id),
  day    INTEGER NOT NULL, -- days since 1970-01-01 UTC
  micros INTEGER NOT NULL CHECK (micros >= 0),
  PRIMARY KEY (key_id, day)
);

-- Emails owed to owners (D43): an outbox, leased by the delivery worker.
CREATE TABLE notifications (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id       INTEGER NOT NULL REFERENCES faucets (id),
  kind            TEXT NOT NULL,
  coin            TEXT NOT NULL,
  threshold       INTEGER NOT NULL,
  balance         INTEGER NOT NULL,
  created_at      INTEGER NOT NULL,
  sent_at         INTEGER,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error      TEXT NOT NULL DEFAULT '',
  channel         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX notifications_faucet ON notifications (faucet_id, id);
CREATE INDEX notifications_due ON notifications (next_attempt_at) WHERE sent_at IS NULL;

-- Listing approval (D44): the operator's cost per coin, and the requests.
CREATE TABLE listing_costs (
  coin       TEXT PRIMARY KEY REFERENCES coins (symbol),
  amount     INTEGER NOT NULL CHECK (amount > 0),
  updated_at INTEGER NOT NULL
);
CREATE TABLE listing_requests (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id          INTEGER NOT NULL REFERENCES faucets (id),
  coin               TEXT NOT NULL REFERENCES coins (symbol),
  amount             INTEGER NOT NULL CHECK (amount > 0),
  transfer_id        INTEGER NOT NULL REFERENCES transfers (id),
  status             TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
  refund_transfer_id INTEGER REFERENCES transfers (id),
  created_at         INTEGER NOT NULL,
  decided_at         INTEGER
);
-- One open (pending or approved) request per faucet, held by the database.
CREATE UNIQUE INDEX listing_requests_open ON listing_requests (faucet_id) WHERE status <> 'rejected';
CREATE INDEX listing_requests_faucet ON listing_requests (faucet_id, id);

-- A faucet's transactions read its side of the journal.
CREATE INDEX transfers_from ON transfers (from_account, coin, id);
CREATE INDEX transfers_to ON transfers (to_account, coin, id);
