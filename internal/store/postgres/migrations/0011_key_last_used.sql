-- When each v2 key was last used (issue 11: the faucet's key list shows
-- it), in microseconds since 1970 UTC; NULL: never. Written at most once
-- a minute per key, so a busy key adds no write per request.
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;
