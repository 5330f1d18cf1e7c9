-- The audit log records changes made from a faucet's console pages too
-- (issue 11): such an entry names the user who made it instead of a key.
-- Exactly one of key_id and user_id is set.
ALTER TABLE audit_log ALTER COLUMN key_id DROP NOT NULL;
ALTER TABLE audit_log ADD COLUMN user_id BIGINT REFERENCES users (id);
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor CHECK ((key_id IS NULL) <> (user_id IS NULL));
