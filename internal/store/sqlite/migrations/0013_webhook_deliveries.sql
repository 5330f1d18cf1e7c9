-- Webhook deliveries (issue 12, D50, D52): the outbox of one faucet event
-- to one endpoint. A delivery row is written in the transaction that
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
CREATE TABLE webhook_deliveries (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint_id     INTEGER NOT NULL REFERENCES webhook_endpoints (id),
  faucet_id       INTEGER NOT NULL REFERENCES faucets (id),
  event_id        TEXT NOT NULL REFERENCES events (id),
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  tries           INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_status     INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT NOT NULL DEFAULT '',
  created_at      INTEGER NOT NULL,
  done_at         INTEGER
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);

-- Every attempt of a delivery (D50): when, the HTTP status (0 when there
-- was no reply), how long it took, the error, and the first 1 KB of the
-- reply's body.
CREATE TABLE webhook_attempts (
  delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries (id),
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

-- The fan-out: an event becomes one delivery for each of its faucet's
-- enabled endpoints subscribed to its type, due at once.
CREATE TRIGGER events_webhook_fanout AFTER INSERT ON events BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, faucet_id, event_id, next_attempt_at, created_at)
  SELECT w.id, NEW.faucet_id, NEW.id, NEW.created_at, NEW.created_at
  FROM webhook_endpoints w
  WHERE w.faucet_id = NEW.faucet_id AND w.enabled
    AND instr(',' || w.events || ',', ',' || NEW.type || ',') > 0;
END;
