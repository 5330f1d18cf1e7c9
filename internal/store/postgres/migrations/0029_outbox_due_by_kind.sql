-- The outbox's due rows by kind, and a disabled endpoint's deliveries
-- parked out of the due range (D52), as SQLite's migration 0030. Every
-- claim names its kind, and a claim walked the due rows in time order
-- until it had its page: the merchant callbacks' claim walked every due
-- webhook delivery, and the webhook claim every pending delivery of a
-- disabled endpoint (due, but skipped), ten times a second a worker. A
-- disabled endpoint's pending deliveries now wait at the largest time
-- (WebhookEndpointSetEnabled parks them, and enabling makes them due at
-- once), so no claim reads them.
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (kind, next_attempt_at) WHERE state = 'pending';
UPDATE outbox SET next_attempt_at = 9223372036854775807
WHERE kind = 'webhook' AND state = 'pending' AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE NOT enabled);
