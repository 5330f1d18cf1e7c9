-- Webhook endpoints (issue 12, D53, D54): where a faucet's events are
-- delivered. events is a comma-separated list of payout.sent,
-- payout.failed and faucet.low_balance; secret_sealed is the signing
-- secret sealed by internal/seal (purpose webhook, bound to the row's id),
-- never the secret itself. disabled_reason is '' while enabled, else why
-- it was disabled: 'owner' or 'failing' (D52). Times in microseconds since
-- 1970 UTC. A faucet's endpoints are read, and counted, by the index.
CREATE TABLE webhook_endpoints (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id       INTEGER NOT NULL REFERENCES faucets (id),
  url             TEXT NOT NULL,
  events          TEXT NOT NULL,
  secret_sealed   TEXT NOT NULL,
  enabled         BOOLEAN NOT NULL,
  disabled_reason TEXT NOT NULL DEFAULT '' CHECK (disabled_reason IN ('', 'owner', 'failing')),
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX webhook_endpoints_faucet ON webhook_endpoints (faucet_id, id);
