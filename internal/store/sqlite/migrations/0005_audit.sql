-- Manage calls made through the tool server (issue 4): who (key), what
-- (tool, arguments without secrets), and the outcome, for the owner to read.
CREATE TABLE audit_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id  INTEGER NOT NULL REFERENCES faucets (id),
  key_id     INTEGER NOT NULL REFERENCES api_keys (id),
  tool       TEXT NOT NULL,
  arguments  TEXT NOT NULL, -- JSON
  result     TEXT NOT NULL, -- what the call did, or why it failed
  is_error   BOOLEAN NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX audit_log_faucet ON audit_log (faucet_id, id);
