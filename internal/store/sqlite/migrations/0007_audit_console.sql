-- The audit log records changes made from a faucet's console pages too
-- (issue 11): such an entry names the user who made it instead of a key.
-- Exactly one of key_id and user_id is set. SQLite cannot drop a NOT NULL
-- in place, so the table is rebuilt; no table refers to it.
CREATE TABLE audit_log_new (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  faucet_id  INTEGER NOT NULL REFERENCES faucets (id),
  key_id     INTEGER REFERENCES api_keys (id),
  tool       TEXT NOT NULL,
  arguments  TEXT NOT NULL, -- JSON
  result     TEXT NOT NULL, -- what the call did, or why it failed
  is_error   BOOLEAN NOT NULL,
  created_at INTEGER NOT NULL,
  user_id    INTEGER REFERENCES users (id),
  CONSTRAINT audit_log_actor CHECK ((key_id IS NULL) <> (user_id IS NULL))
);
INSERT INTO audit_log_new (id, faucet_id, key_id, tool, arguments, result, is_error, created_at)
SELECT id, faucet_id, key_id, tool, arguments, result, is_error, created_at FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_faucet ON audit_log (faucet_id, id);
