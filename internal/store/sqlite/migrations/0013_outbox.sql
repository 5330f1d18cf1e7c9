-- The outbox (issue 12, D50, D52): what drip owes to other sites' URLs.
-- One table for every kind, so that one worker claims, leases, retries and
-- logs them alike: 'webhook', one faucet event to one endpoint; and, with
-- issue 13, 'callback', a merchant payment's callback (D55), whose columns
-- a later migration adds. A webhook row is written in the transaction that
-- writes its event, by the trigger below, so every way an event is
-- written (a payout batch, a payment alone, a refusal) fans out alike and
-- no event is ever committed without its deliveries.
--
-- state is 'pending' until a 2xx reply ('delivered') or the last attempt
-- of the schedule ('failed'). A claim leases a pending row by moving
-- next_attempt_at past the lease, so a worker that dies mid-send leaves
-- the row to be claimed again when its lease runs out (at least once).
-- attempts counts the attempts of the current schedule (a resend starts a
-- new one); tries counts every attempt ever and numbers the attempt log.
-- Times in microseconds since 1970 UTC.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  kind            TEXT NOT NULL DEFAULT 'webhook' CHECK (kind IN ('webhook', 'callback')),
  endpoint_id     INTEGER REFERENCES webhook_endpoints (id), -- webhook
  faucet_id       INTEGER REFERENCES faucets (id),           -- webhook
  event_id        TEXT REFERENCES events (id),             -- webhook
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  tries           INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_status     INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  done_at         INTEGER,
  CHECK (kind <> 'webhook' OR (endpoint_id IS NOT NULL AND faucet_id IS NOT NULL AND event_id IS NOT NULL))
);
CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX outbox_endpoint ON outbox (endpoint_id, id);

-- Every attempt of an outbox delivery (D50): when, the HTTP status (0
-- when there was no reply), how long it took, the error, and the first
-- 1 KB of the reply's body.
CREATE TABLE outbox_attempts (
  delivery_id INTEGER NOT NULL REFERENCES outbox (id),
  n           INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  status      INTEGER NOT NULL,
  latency_us  INTEGER NOT NULL,
  error       TEXT NOT NULL,
  reply       TEXT NOT NULL,
  PRIMARY KEY (delivery_id, n)
);

-- failing_since is the time of the first failed attempt since the
-- endpoint's last success, NULL while its last attempt succeeded: an
-- endpoint failing every attempt for 3 days is disabled (D52).
ALTER TABLE webhook_endpoints ADD COLUMN failing_since INTEGER;

-- detail says what a notification is about where its kind needs more
-- than a coin and amounts: the URL of a webhook endpoint disabled for
-- failing (kind 'webhook_disabled').
ALTER TABLE notifications ADD COLUMN detail TEXT NOT NULL DEFAULT '';

-- The fan-out: an event becomes one webhook delivery for each of its faucet's
-- enabled endpoints subscribed to its type, due at once.
CREATE TRIGGER events_webhook_fanout AFTER INSERT ON events BEGIN
  INSERT INTO outbox (kind, endpoint_id, faucet_id, event_id, next_attempt_at, created_at)
  SELECT 'webhook', w.id, NEW.faucet_id, NEW.id, NEW.created_at, NEW.created_at
  FROM webhook_endpoints w
  WHERE w.faucet_id = NEW.faucet_id AND w.enabled
    AND instr(',' || w.events || ',', ',' || NEW.type || ',') > 0;
END;
