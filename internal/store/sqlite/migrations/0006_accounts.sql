-- Accounts and the web console (issue 11, D10, D15): the operator role,
-- the TOTP second factor, server-side sessions, single-use account tokens,
-- recovery codes and each user's security log. Times are microseconds
-- since 1970 in UTC; 0 in a *_at column that may be unset means "never".

-- totp_secret is AES-256-GCM ciphertext (base64), never the secret
-- itself; set and not enabled, it is an enrolment awaiting its first
-- code. totp_last_step is the last TOTP time step accepted, which a
-- conditional update only ever raises, so a code is accepted once on
-- every node.
ALTER TABLE users ADD COLUMN operator BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN totp_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN totp_enabled BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE users ADD COLUMN totp_last_step INTEGER NOT NULL DEFAULT 0;

-- A session is found by the SHA-256 of its token; the token itself is
-- only ever in the user's cookie.
CREATE TABLE sessions (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  token_hash   TEXT NOT NULL UNIQUE,
  user_id      INTEGER NOT NULL REFERENCES users (id),
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL, -- the absolute timeout
  verified_at  INTEGER NOT NULL DEFAULT 0, -- second factor (or, without one, the login) last passed
  ip           TEXT NOT NULL,
  user_agent   TEXT NOT NULL,
  revoked_at   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_user ON sessions (user_id, id);

-- Emailed single-use links, found by the SHA-256 of their token.
CREATE TABLE account_tokens (
  token_hash TEXT PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users (id),
  kind       TEXT NOT NULL CHECK (kind IN ('verify_email', 'reset_password', 'change_email')),
  new_email  TEXT NOT NULL DEFAULT '', -- change_email: the address it verifies
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX account_tokens_user ON account_tokens (user_id);

CREATE TABLE recovery_codes (
  user_id   INTEGER NOT NULL REFERENCES users (id),
  code_hash TEXT NOT NULL, -- SHA-256 of the normalized code
  used_at   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, code_hash)
);

CREATE TABLE security_log (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id    INTEGER NOT NULL REFERENCES users (id),
  kind       TEXT NOT NULL,
  ip         TEXT NOT NULL,
  detail     TEXT NOT NULL, -- never a secret
  created_at INTEGER NOT NULL
);
CREATE INDEX security_log_user ON security_log (user_id, id);
