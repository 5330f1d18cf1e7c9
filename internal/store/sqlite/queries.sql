-- SQLite has one writer at a time, so a write transaction already holds
-- every row it reads: no row lock is needed (and FOR UPDATE does not exist).

-- name: FaucetLock
SELECT id FROM faucets WHERE id = $1;

-- name: MigrationLock
SELECT 1;
