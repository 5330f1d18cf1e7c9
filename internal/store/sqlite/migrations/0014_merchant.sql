-- Merchant checkouts (issue 13, spec 4.4, D55-D57): one per payment form
-- posted to /merchant/webscr. public_id names it in the hosted page's URL
-- (random, so checkouts cannot be walked). amount1 is in 10^-8 of
-- currency1 (USD or a coin); currency2 is '' when the buyer chooses.
--
-- The quote held for the buyer (D57): the paying coin, the amount in its
-- smallest units (rounded up), the rate and its source, and when it
-- expires. A checkout is 'open' until paid or cancelled; paying it is one
-- transaction: the ledger transfer (transfer_id), the payer, the token
-- (D56: its hash, to find it by, and sealed by internal/seal for the
-- callback that carries it; never in the clear) and the callback's outbox
-- row (D50, D55). verified_at is when the merchant verified the token,
-- which it may do once. Times in microseconds since 1970 UTC.
CREATE TABLE merchant_checkouts (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  public_id        TEXT NOT NULL UNIQUE,
  merchant_id      INTEGER NOT NULL REFERENCES users (id),
  item             TEXT NOT NULL,
  amount1          INTEGER NOT NULL CHECK (amount1 > 0),
  currency1        TEXT NOT NULL,
  currency2        TEXT NOT NULL,
  custom           TEXT NOT NULL,
  callback_url     TEXT NOT NULL,
  success_url      TEXT NOT NULL,
  cancel_url       TEXT NOT NULL,
  state            TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'paid', 'cancelled')),
  created_at       INTEGER NOT NULL,
  quote_coin       TEXT NOT NULL DEFAULT '',
  quote_amount     INTEGER NOT NULL DEFAULT 0,
  quote_rate       TEXT NOT NULL DEFAULT '',
  quote_source     TEXT NOT NULL DEFAULT '',
  quote_price_at   INTEGER,
  quote_expires_at INTEGER,
  payer_id         INTEGER REFERENCES users (id),
  transfer_id      INTEGER REFERENCES transfers (id),
  paid_at          INTEGER,
  token_hash       TEXT UNIQUE,
  token_sealed     TEXT NOT NULL DEFAULT '',
  verified_at      INTEGER,
  CHECK (state <> 'paid' OR (payer_id IS NOT NULL AND transfer_id IS NOT NULL AND token_hash IS NOT NULL))
);
-- The merchant's payments received, and the buyer's made, newest first.
CREATE INDEX merchant_checkouts_merchant ON merchant_checkouts (merchant_id, id);
CREATE INDEX merchant_checkouts_payer ON merchant_checkouts (payer_id, id);

-- A callback row of the outbox names its checkout (D50, D55).
ALTER TABLE outbox ADD COLUMN checkout_id INTEGER REFERENCES merchant_checkouts (id);
CREATE INDEX outbox_checkout ON outbox (checkout_id);
