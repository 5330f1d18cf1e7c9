-- Queries shared by both engines, written for PostgreSQL ($1 placeholders);
-- the SQLite driver rewrites $N to ?N, SQLite's numbered form. An engine
-- overrides a query by defining the same name in its own queries.sql.
-- Timestamps are BIGINT Unix microseconds, UTC by construction (D30).

-- name: SecretGet
SELECT value FROM secrets WHERE name = $1;

-- name: SecretInit
INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING;

-- name: CoinList
SELECT symbol, name, active, min_payout FROM coins ORDER BY position;

-- name: CoinSetActive
UPDATE coins SET active = $2 WHERE symbol = $1;

-- name: AccountCreate
INSERT INTO accounts (kind, created_at) VALUES ($1, $2) RETURNING id;

-- name: UserColumns
id, account_id, username, email, password_hash, email_verified, status, COALESCE(payout_user_hash, ''), created_at,
operator, totp_secret, totp_enabled, totp_last_step

-- name: UserGetByID
SELECT {{UserColumns}} FROM users WHERE id = $1;

-- name: UserGetByUsername
SELECT {{UserColumns}} FROM users WHERE username = $1;

-- name: UserGetByEmail
SELECT {{UserColumns}} FROM users WHERE email = $1;

-- name: UserGetByPayoutHash
SELECT {{UserColumns}} FROM users WHERE payout_user_hash = $1;

-- name: UserGetByAddress
SELECT {{UserColumns}} FROM users WHERE id = (SELECT user_id FROM user_addresses WHERE coin = $1 AND address = $2);

-- name: UserCreate
INSERT INTO users (account_id, username, email, password_hash, email_verified, status, created_at)
VALUES ($1, $2, $3, $4, $5, 'active', $6) RETURNING id;

-- name: UserSetPayoutHash
UPDATE users SET payout_user_hash = $2 WHERE id = $1;

-- name: UserSetStatus
UPDATE users SET status = $2 WHERE id = $1;

-- name: UserSetPassword
UPDATE users SET password_hash = $2 WHERE id = $1;

-- name: UserSetEmail
UPDATE users SET email = $2, email_verified = $3 WHERE id = $1;

-- name: UserSetOperator
UPDATE users SET operator = $2 WHERE id = $1;

-- name: UserSetTOTP
UPDATE users SET totp_secret = $2, totp_enabled = $3 WHERE id = $1;

-- The replay guard of TOTP codes: only a later step is accepted, by one
-- conditional update, so two nodes given the same code cannot both take it.
-- name: UserAcceptTOTPStep
UPDATE users SET totp_last_step = $2 WHERE id = $1 AND totp_last_step < $2;

-- name: UserAddressAdd
INSERT INTO user_addresses (coin, address, user_id, created_at) VALUES ($1, $2, $3, $4);

-- name: UserAddressList
SELECT coin, address FROM user_addresses WHERE user_id = $1 ORDER BY coin, address;

-- name: UserAddressOwners
-- An address's owners in every coin, from user_addresses_address: the key
-- (coin, address) cannot serve it, and without that index every address
-- was read (SQLite 0031, PostgreSQL 0030).
SELECT coin, user_id FROM user_addresses WHERE address = $1 ORDER BY coin;

-- name: FaucetColumns
id, owner_id, (SELECT status FROM users WHERE users.id = faucets.owner_id), account_id, name, domain, url,
ip_whitelist, limits, rules, created_at, settings, low_balance

-- name: FaucetGetByID
SELECT {{FaucetColumns}} FROM faucets WHERE id = $1;

-- name: FaucetGetByKeyHash
SELECT {{FaucetColumns}} FROM faucets WHERE api_key_hash = $1
UNION ALL
SELECT {{FaucetColumns}} FROM faucets WHERE pending_key_hash = $1
LIMIT 1;

-- name: FaucetListByOwner
SELECT {{FaucetColumns}} FROM faucets WHERE owner_id = $1 ORDER BY id;

-- name: FaucetCreate
INSERT INTO faucets (owner_id, account_id, name, domain, url, api_key_hash, ip_whitelist, limits, rules, created_at)
VALUES ($1, $2, $3, $4, $5, $6, '[]', '[]', $7, $8) RETURNING id;

-- name: FaucetSetPendingKey
UPDATE faucets SET pending_key_hash = $2 WHERE id = $1;

-- name: FaucetConfirmKey
UPDATE faucets SET api_key_hash = pending_key_hash, pending_key_hash = NULL
WHERE id = $1 AND pending_key_hash IS NOT NULL;

-- name: FaucetUpdateSettings
UPDATE faucets SET name = $2, domain = $3, url = $4, ip_whitelist = $5, limits = $6, rules = $7,
  settings = $8, low_balance = $9
WHERE id = $1;

-- name: FaucetListListed
SELECT {{FaucetColumns}} FROM faucets
WHERE id IN (SELECT faucet_id FROM listing_requests WHERE status = 'approved') ORDER BY id;

-- name: FaucetLock
-- FOR NO KEY UPDATE: it excludes another lock of the faucet and any update
-- of its row (settings, limits), but not the FOR KEY SHARE that inserting a
-- payout of the faucet takes for its foreign key, so a node paying the
-- faucet without this lock never deadlocks with one holding it.
SELECT id FROM faucets WHERE id = $1 FOR NO KEY UPDATE;

-- name: BalanceGet
SELECT amount FROM balances WHERE account_id = $1 AND coin = $2;

-- The debits each balance has taken (migration 0020, D66), by coin: a
-- faucet's payouts list kept on each node is served only while no count
-- has passed the list's.
-- name: BalanceDebits
SELECT coin, debits FROM balances WHERE account_id = $1 AND ($2 = '' OR coin = $2) ORDER BY coin;

-- name: BalanceList
SELECT b.coin, b.amount FROM balances b JOIN coins c ON c.symbol = b.coin
WHERE b.account_id = $1 ORDER BY c.position;

-- A debit counts itself (debits, D66), so that migration 0020's trigger,
-- which counts a debit that did not, is not run.
-- name: BalanceDebit
UPDATE balances SET amount = amount - $3, debits = debits + 1
WHERE account_id = $1 AND coin = $2 AND amount >= $3
RETURNING amount;

-- name: BalanceCredit
INSERT INTO balances (account_id, coin, amount) VALUES ($1, $2, $3)
ON CONFLICT (account_id, coin) DO UPDATE SET amount = balances.amount + excluded.amount
RETURNING amount;

-- BalanceLock reads a balance and holds it to the end of the
-- transaction, found by the primary key whatever the planner knows of the
-- table (a cached plan of a join with the batch's JSON rows chose a full
-- scan of balances once the table had outgrown its statistics), locked in
-- the batch's order (D5). A batch of one row runs it (and FaucetLock,
-- BalanceDebit); a batch of more runs the set forms of the per-row locks
-- and debits instead (FaucetsLockRows, BalancesLockRows,
-- BalancesDebitRows; rowCalls), each engine's own: PostgreSQL's queries.sql, whose
-- rows each search their own index (LATERAL) in the batch's order, as the
-- reads that lock nothing do here (IdempotencyBoundRows and the windows).
-- name: BalanceLock
SELECT account_id, coin, amount, debits FROM balances WHERE account_id = $1 AND coin = $2 FOR UPDATE;

-- Other batch writes take their rows as one array parameter a column
-- (below), so a batch of any size is one statement.

-- PayoutIDsNext reserves a batch's $1 transfer and payout ids, as runs of
-- consecutive ids: each row is a run's first transfer id, first payout id
-- and length. Here each id is a sequence's own (other nodes draw from the
-- same sequences at once), so each run is one id long. Each sequence is
-- looked up once (a scalar subquery: an InitPlan), not once per id: that
-- catalog search was 7% of PostgreSQL's work for a payout.
-- name: PayoutIDsNext
SELECT nextval((SELECT pg_get_serial_sequence('transfers', 'id')::regclass)),
  nextval((SELECT pg_get_serial_sequence('payouts', 'id')::regclass)), 1
FROM generate_series(1, $1);

-- The four statements of a payout batch's rows (PayoutsInsert) take each
-- column as an array parameter, decoded in binary (SQLite, which binds no
-- arrays, has its own, over drip_rows). They took the rows as one JSON array,
-- which PostgreSQL parsed as text for every batch and read field by
-- field: jsonb_in alone was 8% of its work for a payout.
-- name: TransfersInsertRows
INSERT INTO transfers (id, coin, from_account, to_account, amount, kind, created_at)
SELECT r.id, r.coin, r.from_account, r.to_account, r.amount, 'payout', $6
FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])
  AS r(id, coin, from_account, to_account, amount);

-- name: PayoutsInsertRows
INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
SELECT r.id, r.faucet_id, r.recipient_id, r.transfer_id, r.to_given, r.coin, r.amount, r.ip_address, r.referral, $10
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::bigint[],
  $8::text[], $9::text[])
  AS r(id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral);

-- name: BalancesCreditRows
INSERT INTO balances (account_id, coin, amount)
SELECT r.account_id, r.coin, r.amount
FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS r(account_id, coin, amount)
ON CONFLICT (account_id, coin) DO UPDATE SET amount = balances.amount + excluded.amount;

-- name: EventsInsertRows
INSERT INTO events (id, faucet_id, type, data, created_at)
SELECT r.id, r.faucet_id, r.type, r.data, $5
FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS r(id, faucet_id, type, data);

-- name: TransferInsert
INSERT INTO transfers (coin, from_account, to_account, amount, kind, created_at)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING id;

-- name: PayoutInsert
INSERT INTO payouts (faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id;

-- name: PayoutColumns
id, faucet_id, recipient_id, to_given, coin, amount, ip_address, referral, created_at

-- The reads of a faucet's payouts in every coin are merges of one range
-- of payouts_faucet_coin_time per coin of the catalogue (D68): no index
-- orders a faucet's payouts by time alone, because such an index cost
-- every payout a page of its own at its faucet's place. Every payout's
-- coin is in the catalogue (its transfer's coin references it), and the
-- coins the faucet never paid in cost an empty probe each. SQLite's forms,
-- without LATERAL, are in its queries.sql.
-- name: PayoutList
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at
FROM coins c CROSS JOIN LATERAL (
  SELECT {{PayoutColumns}} FROM payouts WHERE faucet_id = $1 AND coin = c.symbol ORDER BY created_at DESC, id DESC LIMIT $2
) AS p
ORDER BY p.created_at DESC, p.id DESC LIMIT $2;

-- name: PayoutListByCoin
SELECT {{PayoutColumns}} FROM payouts WHERE faucet_id = $1 AND coin = $2 ORDER BY created_at DESC, id DESC LIMIT $3;

-- name: PayoutExists
SELECT COUNT(*) FROM payouts WHERE id = $1;

-- name: PayoutWindowFaucet
-- A faucet-wide window: '' for every coin, each one's range summed.
SELECT CAST(COALESCE(SUM(w.n), 0) AS BIGINT), CAST(COALESCE(SUM(w.total), 0) AS BIGINT)
FROM coins c CROSS JOIN LATERAL (
  SELECT COUNT(*) AS n, SUM(amount) AS total FROM payouts
  WHERE faucet_id = $1 AND coin = c.symbol AND created_at >= $2
) AS w
WHERE $3 = '' OR c.symbol = $3;

-- The per-recipient and per-IP windows of a batch, one for each recipient
-- or claimer IP it pays (sqlstore.windowCalls), in one statement of each
-- kind instead of one a window: the arrays' rows are the window's index,
-- its faucet, start, coin ('' for every coin) and recipient or IP, and
-- each gets its count from an index scan of its own (LATERAL).
-- The window's start is given as a row comparison with the recipient (or
-- the IP) ahead of the time, a form only payouts_faucet_recipient (or
-- payouts_faucet_ip) can search. Written "created_at >= since", the
-- planner saw payouts_faucet_time (faucet_id, created_at), an index since
-- dropped (D68), as just as good on a table not yet analyzed, and kept
-- that generic plan: every window then read all the faucet's payouts
-- since its start, and the ledger's limited benchmark paid 870 payouts/s
-- against 7,000 unlimited.
-- name: PayoutWindowsRecipientRows
SELECT w.i, c.n, c.total
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[]) AS w(i, faucet_id, since, coin, recipient_id)
CROSS JOIN LATERAL (
  SELECT COUNT(*) AS n, CAST(COALESCE(SUM(p.amount), 0) AS BIGINT) AS total FROM payouts p
  WHERE p.faucet_id = w.faucet_id AND p.recipient_id = w.recipient_id
    AND (p.recipient_id, p.created_at) >= (w.recipient_id, w.since) AND (w.coin = '' OR p.coin = w.coin)
) AS c;

-- name: PayoutWindowsIPRows
SELECT w.i, c.n, c.total
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[]) AS w(i, faucet_id, since, coin, ip_address)
CROSS JOIN LATERAL (
  SELECT COUNT(*) AS n, CAST(COALESCE(SUM(p.amount), 0) AS BIGINT) AS total FROM payouts p
  WHERE p.faucet_id = w.faucet_id AND p.ip_address = w.ip_address AND p.ip_address <> ''
    AND (p.ip_address, p.created_at) >= (w.ip_address, w.since) AND (w.coin = '' OR p.coin = w.coin)
) AS c;

-- name: PayoutBulkLoadBefore
-- PayoutBulkLoad (drip bench's growth run) credits the faucet first, which
-- holds its balance row until commit: no other payout of the faucet can add
-- a transfer while the load picks its own as those above this id.
SELECT CAST(COALESCE(MAX(id), 0) AS BIGINT) FROM transfers;

-- name: PayoutBulkLoadTransfers
WITH RECURSIVE seq (n) AS (
  SELECT CAST(0 AS BIGINT)
  UNION ALL
  SELECT n + 1 FROM seq WHERE n + 1 < CAST($4 AS BIGINT)
),
recipients AS (
  SELECT account_id, ROW_NUMBER() OVER (ORDER BY id) - 1 AS k
  FROM users WHERE id BETWEEN $5 AND $6
)
INSERT INTO transfers (coin, from_account, to_account, amount, kind, created_at)
SELECT CAST($1 AS TEXT), CAST($2 AS BIGINT), r.account_id, CAST($3 AS BIGINT), 'payout', CAST($7 AS BIGINT)
FROM seq JOIN recipients r ON r.k = seq.n % (SELECT COUNT(*) FROM recipients)
ORDER BY seq.n;

-- name: PayoutBulkLoadPayouts
INSERT INTO payouts (faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
SELECT CAST($1 AS BIGINT), u.id, t.id, u.username, t.coin, t.amount, '', '', t.created_at
FROM transfers t JOIN users u ON u.account_id = t.to_account
WHERE t.id > $2 AND t.from_account = $3 AND t.kind = 'payout'
ORDER BY t.id;

-- name: PayoutBulkLoadCredits
INSERT INTO balances (account_id, coin, amount)
SELECT t.to_account, t.coin, CAST(SUM(t.amount) AS BIGINT) FROM transfers t
WHERE t.id > $1 AND t.from_account = $2 AND t.kind = 'payout'
GROUP BY t.to_account, t.coin
ON CONFLICT (account_id, coin) DO UPDATE SET amount = balances.amount + excluded.amount;

-- name: EventInsert
INSERT INTO events (id, faucet_id, type, data, created_at) VALUES ($1, $2, $3, $4, $5);

-- name: EventGet
SELECT id, faucet_id, type, data, created_at FROM events WHERE id = $1;

-- EventProbe settles a commit whose outcome is unknown (D6), in a
-- transaction that always rolls back: inserting an id that a transaction
-- still in progress inserted waits for that transaction to end, and then
-- inserts nothing (0 rows) exactly when it committed.
-- name: EventProbe
INSERT INTO events (id, faucet_id, type, data, created_at) VALUES ($1, $2, 'probe', '{}', 0)
ON CONFLICT (id) DO NOTHING;

-- name: Ping
SELECT 1;

-- name: CacheGeneration
SELECT key_gen, recipient_gen FROM cache_generation WHERE id = 1;

-- name: EventList
SELECT id, faucet_id, type, data, created_at FROM events WHERE faucet_id = $1 ORDER BY seq DESC LIMIT $2;

-- EventFeed is one read of a faucet's feed (D59): the events after the
-- position ($2, $3) in (txid, seq) order, of every type, with the data of
-- those whose type is in the comma-separated list $4. Only events of
-- transactions below the snapshot's xmin are read: those transactions
-- have all ended, and every transaction still to commit has a larger id,
-- so nothing can later appear before what this read returns.
-- pg_current_snapshot() is the statement's own snapshot, the one the
-- rows are read with.
-- name: EventFeed
SELECT txid, seq, id, faucet_id, type,
  CASE WHEN strpos(',' || $4 || ',', ',' || type || ',') > 0 THEN data END, created_at
FROM events
WHERE faucet_id = $1 AND (txid, seq) > ($2, $3) AND txid < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY txid, seq LIMIT $5;

-- name: KeyColumns
id, faucet_id, prefix, scopes, expires_at, ip_whitelist, daily_usd_cap_micros, revoked_at, created_at, last_used_at

-- name: KeyCreate
INSERT INTO api_keys (faucet_id, prefix, key_hash, scopes, expires_at, ip_whitelist, daily_usd_cap_micros, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;

-- name: KeyGetByID
SELECT {{KeyColumns}} FROM api_keys WHERE id = $1;

-- name: KeyGetByHash
SELECT {{KeyColumns}} FROM api_keys WHERE key_hash = $1;

-- name: KeyListByFaucet
SELECT {{KeyColumns}} FROM api_keys WHERE faucet_id = $1 ORDER BY id;

-- name: KeyRevoke
UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL;

-- name: IdempotencyColumns
faucet_id, idem_key, request_hash, payout_id, coin, balance, payout_user_hash, rate_remaining, created_at

-- name: IdempotencyGet
SELECT {{IdempotencyColumns}} FROM idempotency_keys WHERE faucet_id = $1 AND idem_key = $2;

-- IdempotencyGetMany: $2 is a JSON list of keys.
-- name: IdempotencyGetMany
SELECT {{IdempotencyColumns}} FROM idempotency_keys
WHERE faucet_id = $1 AND idem_key = ANY (ARRAY(SELECT jsonb_array_elements_text($2::jsonb)));

-- name: IdempotencyInsert
INSERT INTO idempotency_keys ({{IdempotencyColumns}}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: IdempotencyBoundRows
-- A row for each of the batch's keys that a payout of its faucet has bound
-- already (PayoutsOpen), each looked up by the primary key. OFFSET 0 keeps
-- the subquery a search per key rather than a join the planner may turn
-- into a scan of the table (TestSetFormsSearchTheirIndex in the postgres package).
SELECT k.faucet_id, k.idem_key
FROM unnest($1::bigint[], $2::text[]) AS r(faucet_id, idem_key)
CROSS JOIN LATERAL (
  SELECT faucet_id, idem_key FROM idempotency_keys WHERE faucet_id = r.faucet_id AND idem_key = r.idem_key OFFSET 0
) AS k;

-- name: IdempotencyInsertRows
INSERT INTO idempotency_keys ({{IdempotencyColumns}})
SELECT r.faucet_id, r.idem_key, r.request_hash, r.payout_id, r.coin, r.balance, r.payout_user_hash, r.rate_remaining, $9
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::float8[])
  AS r(faucet_id, idem_key, request_hash, payout_id, coin, balance, payout_user_hash, rate_remaining);

-- name: IdempotencyDeleteBefore
DELETE FROM idempotency_keys WHERE created_at < $1;

-- name: KeySpendGet
SELECT micros FROM key_spend WHERE key_id = $1 AND day = $2;

-- name: KeySpendInit
INSERT INTO key_spend (key_id, day, micros) VALUES ($1, $2, 0) ON CONFLICT (key_id, day) DO NOTHING;

-- name: KeySpendAdd
UPDATE key_spend SET micros = micros + $3 WHERE key_id = $1 AND day = $2 AND micros + $3 <= $4 RETURNING micros;

-- Statistics. Days are UTC: created_at is Unix microseconds.

-- name: StatsDaily
-- The statistics (D73): the kept sums of every payout below the mark
-- stats_mark.folded, and the faucet's payouts from the mark on, read from
-- the payouts' key (faucet_id + 0 keeps the planner off the faucet's
-- indexes, which would read its whole history to find them; the upper
-- bound, never reached, makes the generic plan take the ids from the mark
-- for a short range, where it took "id >= mark" for a third of the table
-- and scanned it: 85 ms at 1M payouts, 2 ms with the bound). The days
-- from the first midnight at or after since come from those; the part of
-- a day before it (since is not a midnight) from the faucet's payouts of
-- that part of a day, one range of payouts_faucet_coin_time per coin
-- (D68). A payout not folded yet counts its recipient for its day only if
-- the day's kept recipients do not hold them.
WITH edge AS (SELECT (CAST($2 AS BIGINT) + 86399999999) / 86400000000 * 86400000000 AS at),
pending AS (
  SELECT created_at / 86400000000 AS day, coin, amount, recipient_id FROM payouts
  WHERE id >= (SELECT folded FROM stats_mark) AND id < (SELECT folded FROM stats_mark) + 4611686018427387904 AND faucet_id + 0 = $1 AND created_at >= (SELECT at FROM edge))
SELECT day, coin, CAST(SUM(n) AS BIGINT), CAST(SUM(total) AS BIGINT), CAST(SUM(recipients) AS BIGINT) FROM (
  SELECT day, coin, payouts AS n, amount AS total, recipients FROM stats_days
  WHERE faucet_id = $1 AND day >= (SELECT at FROM edge) / 86400000000
  UNION ALL
  SELECT r.day, r.coin, COUNT(*), SUM(r.amount), COUNT(DISTINCT CASE WHEN NOT EXISTS (
      SELECT 1 FROM stats_day_users k WHERE k.faucet_id = $1 AND k.day = r.day AND k.coin = r.coin AND k.recipient_id = r.recipient_id)
    THEN r.recipient_id END)
  FROM pending r GROUP BY r.day, r.coin
  UNION ALL
  SELECT d.day, c.symbol, d.n, d.total, d.recipients FROM coins c CROSS JOIN LATERAL (
    SELECT created_at / 86400000000 AS day, COUNT(*) AS n, SUM(amount) AS total, COUNT(DISTINCT recipient_id) AS recipients
    FROM payouts WHERE faucet_id = $1 AND coin = c.symbol AND created_at >= $2 AND created_at < (SELECT at FROM edge)
    GROUP BY created_at / 86400000000) AS d
) AS a
GROUP BY day, coin ORDER BY 1 DESC, 2;

-- name: StatsUsers
-- The users' page reads the sums by rank (stats_users_rank, migration
-- 0032): a page of the final order is among the first $3 + $4 of the
-- kept sums and the recipients paid since the mark, since a recipient
-- outside both keeps their kept total, which every one of those first
-- ranks, ties by recipient included, has reached already. So it reads
-- those, not every recipient the faucet paid. Each is looked up by the
-- key (the LIMIT keeps the lookup a nested loop: the generic plan
-- guesses a tenth of the sums for the ranked ones, and joined them by
-- hashing every sum of the faucet's coin).
WITH pending AS MATERIALIZED (
  SELECT recipient_id, amount, created_at FROM payouts
  WHERE id >= (SELECT folded FROM stats_mark) AND id < (SELECT folded FROM stats_mark) + 4611686018427387904 AND faucet_id + 0 = $1 AND coin = $2),
ranked AS (
  SELECT recipient_id FROM (SELECT recipient_id FROM stats_users WHERE faucet_id = $1 AND coin = $2
    ORDER BY amount DESC, recipient_id LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT)) AS top
  UNION
  SELECT recipient_id FROM pending)
SELECT u.payout_user_hash, s.n, s.total, s.last_at FROM (
  SELECT recipient_id, CAST(SUM(n) AS BIGINT) AS n, CAST(SUM(total) AS BIGINT) AS total, MAX(last_at) AS last_at FROM (
    SELECT r.recipient_id, k.payouts AS n, k.amount AS total, k.last_at FROM ranked r CROSS JOIN LATERAL (
      SELECT payouts, amount, last_at FROM stats_users
      WHERE faucet_id = $1 AND coin = $2 AND recipient_id = r.recipient_id LIMIT 1) AS k
    UNION ALL
    SELECT recipient_id, 1, amount, created_at FROM pending) AS r
  GROUP BY recipient_id
) s JOIN users u ON u.id = s.recipient_id
ORDER BY s.total DESC, s.recipient_id LIMIT $3 OFFSET $4;

-- name: StatsUsersCount
-- The recipients of the kept sums are counted as the folds insert their
-- sums (migration 0033's triggers: stats_user_counts), and those paid
-- since the mark that the sums do not hold are added.
SELECT COALESCE((SELECT recipients FROM stats_user_counts WHERE faucet_id = $1 AND coin = $2), 0) + (
  SELECT COUNT(DISTINCT p.recipient_id) FROM payouts p
  WHERE p.id >= (SELECT folded FROM stats_mark) AND p.id < (SELECT folded FROM stats_mark) + 4611686018427387904 AND p.faucet_id + 0 = $1 AND p.coin = $2
    AND NOT EXISTS (SELECT 1 FROM stats_users k WHERE k.faucet_id = $1 AND k.coin = $2 AND k.recipient_id = p.recipient_id));

-- The fold (StatsFold, D73): the mark, the horizon's next id and whether
-- the horizon is settled (no transaction below its xid runs), the mark
-- locked so that two nodes' folders take turns; then the payouts of every
-- faucet from the mark up to the id $1 (not included, at most the
-- horizon's), read by id, added to the kept sums, and the mark moved to
-- $1. The days' sums count a recipient only if the day's recipients do
-- not hold them yet, so they are added before the recipients.
-- name: StatsFoldRange
SELECT m.folded, h.next_id, pg_snapshot_xmin(pg_current_snapshot()) > h.xid
FROM stats_mark m CROSS JOIN stats_horizon h FOR UPDATE OF m;

-- The statements that add the range are written once for both engines
-- (SQLite keeps its own StatsFoldRange, without the horizon).
--
-- StatsFoldDays looks each payout's recipient up among its day's by the
-- key. OFFSET 0 keeps PostgreSQL from planning the lookup as a hash of
-- every faucet's recipients of every day kept, which it chose for tables
-- not analyzed yet (after drip bench's load; a new deployment's, before
-- autovacuum first looks): a fold's cost then grew with the days kept
-- (25-34 ms for 768 ids at 30,000 rows, 2.0-2.4 ms by the key;
-- BENCHMARKS.md, round thirty-four; TestStatisticsFoldLooksUpDayUsers).
-- LIMIT 1 because SQLite's OFFSET needs a LIMIT; neither changes what
-- EXISTS answers.
-- name: StatsFoldDays
INSERT INTO stats_days (faucet_id, day, coin, payouts, amount, recipients)
SELECT p.faucet_id, p.created_at / 86400000000, p.coin, COUNT(*), SUM(p.amount), COUNT(DISTINCT CASE WHEN NOT EXISTS (
    SELECT 1 FROM stats_day_users k WHERE k.faucet_id = p.faucet_id AND k.day = p.created_at / 86400000000
      AND k.coin = p.coin AND k.recipient_id = p.recipient_id LIMIT 1 OFFSET 0)
  THEN p.recipient_id END)
FROM payouts p WHERE p.id >= (SELECT folded FROM stats_mark) AND p.id < $1
GROUP BY p.faucet_id, p.created_at / 86400000000, p.coin
ON CONFLICT (faucet_id, day, coin) DO UPDATE SET payouts = stats_days.payouts + excluded.payouts,
  amount = stats_days.amount + excluded.amount, recipients = stats_days.recipients + excluded.recipients;

-- name: StatsFoldDayUsers
INSERT INTO stats_day_users (faucet_id, day, coin, recipient_id)
SELECT faucet_id, created_at / 86400000000, coin, recipient_id FROM payouts
WHERE id >= (SELECT folded FROM stats_mark) AND id < $1
ORDER BY 1, 2, 3, 4
ON CONFLICT DO NOTHING;

-- name: StatsFoldUsers
INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at)
SELECT faucet_id, coin, recipient_id, COUNT(*), SUM(amount), MAX(created_at) FROM payouts
WHERE id >= (SELECT folded FROM stats_mark) AND id < $1
GROUP BY faucet_id, coin, recipient_id
ON CONFLICT (faucet_id, coin, recipient_id) DO UPDATE SET payouts = stats_users.payouts + excluded.payouts,
  amount = stats_users.amount + excluded.amount,
  last_at = CASE WHEN excluded.last_at > stats_users.last_at THEN excluded.last_at ELSE stats_users.last_at END;

-- name: StatsFoldMark
UPDATE stats_mark SET folded = $1;

-- Reconcile's check of the statistics (D73): the faucets whose kept sums
-- disagree with their payouts below the mark, in one statement and so one
-- snapshot, in which the mark and the sums moved together. The payouts
-- are grouped once, by faucet, day, coin and recipient (the day's
-- recipients), and those groups summed again for the users' and the
-- days' sums; the users' are counted by faucet and coin for the counts of
-- recipients. A row on either side only is a mismatch.
-- name: ReconcileStatistics
WITH p AS MATERIALIZED (
  SELECT faucet_id, created_at / 86400000000 AS day, coin, recipient_id, COUNT(*) AS n, SUM(amount) AS total, MAX(created_at) AS last_at
  FROM payouts WHERE id < (SELECT folded FROM stats_mark)
  GROUP BY faucet_id, created_at / 86400000000, coin, recipient_id),
u AS (SELECT faucet_id, coin, recipient_id, SUM(n) AS n, SUM(total) AS total, MAX(last_at) AS last_at FROM p GROUP BY faucet_id, coin, recipient_id),
d AS (SELECT faucet_id, day, coin, SUM(n) AS n, SUM(total) AS total, COUNT(*) AS recipients FROM p GROUP BY faucet_id, day, coin),
c AS (SELECT faucet_id, coin, COUNT(*) AS recipients FROM u GROUP BY faucet_id, coin)
SELECT COALESCE(u.faucet_id, s.faucet_id) FROM u FULL JOIN stats_users s
  ON s.faucet_id = u.faucet_id AND s.coin = u.coin AND s.recipient_id = u.recipient_id
WHERE u.faucet_id IS NULL OR s.faucet_id IS NULL OR s.payouts <> u.n OR s.amount <> u.total OR s.last_at <> u.last_at
UNION
SELECT COALESCE(d.faucet_id, s.faucet_id) FROM d FULL JOIN stats_days s
  ON s.faucet_id = d.faucet_id AND s.day = d.day AND s.coin = d.coin
WHERE d.faucet_id IS NULL OR s.faucet_id IS NULL OR s.payouts <> d.n OR s.amount <> d.total OR s.recipients <> d.recipients
UNION
SELECT COALESCE(p.faucet_id, s.faucet_id) FROM p FULL JOIN stats_day_users s
  ON s.faucet_id = p.faucet_id AND s.day = p.day AND s.coin = p.coin AND s.recipient_id = p.recipient_id
WHERE p.faucet_id IS NULL OR s.faucet_id IS NULL
UNION
SELECT COALESCE(c.faucet_id, s.faucet_id) FROM c FULL JOIN stats_user_counts s
  ON s.faucet_id = c.faucet_id AND s.coin = c.coin
WHERE c.faucet_id IS NULL OR s.faucet_id IS NULL OR s.recipients <> c.recipients
ORDER BY 1;

-- drip admin stats rebuild: the mark back to 0 (first, so that a fold of
-- another node waits for this transaction or ends before it) and the sums
-- emptied; the folder folds every payout again, and the reads stay exact
-- meanwhile (they add the payouts from the mark on).
-- name: StatsRebuildUsers
DELETE FROM stats_users;

-- name: StatsRebuildDays
DELETE FROM stats_days;

-- name: StatsRebuildDayUsers
DELETE FROM stats_day_users;

-- name: StatsRebuildUserCounts
DELETE FROM stats_user_counts;

-- What the folder looks at: the mark, and the id the next payout takes.
-- name: StatsPending
SELECT folded, COALESCE(pg_sequence_last_value(pg_get_serial_sequence('payouts', 'id')::regclass), 0) + 1 FROM stats_mark;

-- An account's journal in one coin, newest first: by time, then by
-- transfer id. The journal's two indexes hold every transfer but payouts
-- (D67, D70), so a faucet's payouts are read from the faucet's payouts in
-- that coin (payouts_faucet_coin_time, in the order of their time; the
-- payout row is its transfer's record, and reconcile reports one that
-- disagrees, D3). The condition on kind is what lets each engine use the
-- partial indexes. An account receives no payout it could list: a
-- faucet's account is never paid one, and a user's wallet lists its
-- payouts from payouts (PayoutListByRecipient). A user's account pays no
-- payout, so for it the third part is empty.
-- Each part takes at most the page's end (limit + offset) in the page's
-- order, so each engine reads a large faucet's payouts from its index
-- backwards and stops there: PostgreSQL's generic plan otherwise sorted
-- all of them for every page (BENCHMARKS.md, round twenty).
-- name: TransactionList
SELECT * FROM (
  SELECT t.id, t.kind, t.coin, -t.amount AS amount, CAST(0 AS BIGINT) AS payout_id, t.created_at FROM transfers t
  WHERE t.from_account = $1 AND t.kind <> 'payout' AND t.coin = $2
  ORDER BY t.created_at DESC, t.id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT)) AS paid
UNION ALL
SELECT * FROM (
  SELECT t.id, t.kind, t.coin, t.amount, CAST(0 AS BIGINT), t.created_at FROM transfers t
  WHERE t.to_account = $1 AND t.kind <> 'payout' AND t.coin = $2
  ORDER BY t.created_at DESC, t.id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT)) AS received
UNION ALL
SELECT * FROM (
  SELECT p.transfer_id, 'payout', p.coin, -p.amount, p.id, p.created_at FROM payouts p
  WHERE p.faucet_id = (SELECT f.id FROM faucets f WHERE f.account_id = $1) AND p.coin = $2
  ORDER BY p.created_at DESC, p.transfer_id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT)) AS paid_out
ORDER BY 6 DESC, 1 DESC LIMIT $3 OFFSET $4;

-- name: TransactionCount
SELECT (SELECT COUNT(*) FROM transfers WHERE from_account = $1 AND kind <> 'payout' AND coin = $2)
  + (SELECT COUNT(*) FROM transfers WHERE to_account = $1 AND kind <> 'payout' AND coin = $2)
  + (SELECT COUNT(*) FROM payouts WHERE faucet_id = (SELECT f.id FROM faucets f WHERE f.account_id = $1) AND coin = $2);

-- name: NotificationColumns
id, faucet_id, kind, coin, threshold, balance, created_at, sent_at, attempts, last_error, channel, detail

-- name: NotificationInsert
INSERT INTO notifications (faucet_id, kind, coin, threshold, balance, created_at, next_attempt_at, detail)
VALUES ($1, $2, $3, $4, $5, $6, $6, $7) RETURNING id;

-- name: NotificationsInsertRows
INSERT INTO notifications (faucet_id, kind, coin, threshold, balance, created_at, next_attempt_at)
SELECT r.faucet_id, r.kind, r.coin, r.threshold, r.balance, $6, $6
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) AS r(faucet_id, kind, coin, threshold, balance);

-- name: NotificationListByFaucet
-- The low-balance alerts only: what /api/v2/low-balance-notification shows.
SELECT {{NotificationColumns}} FROM notifications WHERE faucet_id = $1 AND kind = 'low_balance' ORDER BY id DESC LIMIT $2;

-- name: NotificationDue
SELECT {{NotificationColumns}} FROM notifications
WHERE sent_at IS NULL AND next_attempt_at <= $1 AND attempts < $2
ORDER BY next_attempt_at, id LIMIT $3
FOR UPDATE SKIP LOCKED;

-- name: NotificationBacklog
SELECT COUNT(*), MIN(created_at) FROM notifications WHERE sent_at IS NULL AND attempts < $1;

-- name: NotificationLease
UPDATE notifications SET next_attempt_at = $2 WHERE id = $1;

-- name: NotificationRecord
UPDATE notifications SET sent_at = $2, attempts = $6, next_attempt_at = $3, last_error = $4, channel = $5
WHERE id = $1;

-- name: ListingCostList
SELECT coin, amount FROM listing_costs ORDER BY coin;

-- name: ListingCostSet
INSERT INTO listing_costs (coin, amount, updated_at) VALUES ($1, $2, $3)
ON CONFLICT (coin) DO UPDATE SET amount = excluded.amount, updated_at = excluded.updated_at;

-- name: ListingCostDelete
DELETE FROM listing_costs WHERE coin = $1;

-- name: ListingRequestColumns
id, faucet_id, coin, amount, status, created_at, decided_at

-- name: ListingRequestCreate
INSERT INTO listing_requests (faucet_id, coin, amount, transfer_id, status, created_at)
VALUES ($1, $2, $3, $4, 'pending', $5) RETURNING id;

-- name: ListingRequestGet
SELECT {{ListingRequestColumns}} FROM listing_requests WHERE id = $1;

-- name: ListingRequestListByFaucet
SELECT {{ListingRequestColumns}} FROM listing_requests WHERE faucet_id = $1 ORDER BY id DESC;

-- name: ListingRequestListByStatus
SELECT {{ListingRequestColumns}} FROM listing_requests WHERE status = $1 ORDER BY id;

-- name: ListingRequestDecide
UPDATE listing_requests SET status = $2, decided_at = $3, refund_transfer_id = NULLIF(CAST($4 AS BIGINT), 0)
WHERE id = $1 AND status = 'pending';

-- name: AuditInsert
-- The actor is a key (the tool server) or a user (the console): 0 is none.
INSERT INTO audit_log (faucet_id, key_id, user_id, tool, arguments, result, is_error, created_at)
VALUES ($1, NULLIF(CAST($2 AS BIGINT), 0), NULLIF(CAST($3 AS BIGINT), 0), $4, $5, $6, $7, $8) RETURNING id;

-- name: AuditList
-- Newest first, those before id $3 (0: from the newest), the cursor one
-- bound (as WebhookDeliveryList's) that the index search starts from.
SELECT a.id, a.faucet_id, COALESCE(a.key_id, 0), COALESCE(k.prefix, ''), COALESCE(a.user_id, 0), COALESCE(u.username, ''),
  a.tool, a.arguments, a.result, a.is_error, a.created_at
FROM audit_log a LEFT JOIN api_keys k ON k.id = a.key_id LEFT JOIN users u ON u.id = a.user_id
WHERE a.faucet_id = $1 AND a.id < CASE WHEN $3 = 0 THEN 9223372036854775807 ELSE $3 END ORDER BY a.id DESC LIMIT $2;

-- name: RefusalInsert
INSERT INTO refusals (user_id, faucet_id, created_at) VALUES ($1, $2, $3);

-- name: RefusalCountOthers
SELECT COUNT(DISTINCT faucet_id) FROM refusals WHERE user_id = $1 AND faucet_id <> $2 AND created_at >= $3;

-- name: ReconcileCoinSums
SELECT coin, CAST(SUM(amount) AS BIGINT) FROM balances GROUP BY coin HAVING SUM(amount) <> 0 ORDER BY coin;

-- name: ReconcileAccounts
-- Every balance and every journal entry in one list, summed per account
-- and coin: one pass and one sort, on both engines. Joining the balances
-- to the journal's sums instead (a FULL OUTER JOIN of a grouped CTE) made
-- SQLite compare every balance with every account's sum, no index being
-- there to search: 3.4 s at 10,000 accounts, growing with their square
-- (BENCHMARKS.md, round twenty-eight). A side with no row sums to 0.
SELECT account, coin, CAST(SUM(balance) AS BIGINT), CAST(SUM(journal) AS BIGINT) FROM (
  SELECT account_id AS account, coin, amount AS balance, 0 AS journal FROM balances
  UNION ALL
  SELECT to_account, coin, 0, amount FROM transfers
  UNION ALL
  SELECT from_account, coin, 0, -amount FROM transfers
) entries
GROUP BY account, coin
HAVING SUM(balance) <> SUM(journal) OR (SUM(balance) < 0 AND account <> 1)
ORDER BY 1, 2;

-- name: ReconcilePayouts
-- A payout's transfer, recipient and faucet must exist and agree with it,
-- and the payout an idempotency row names must exist and be of the row's
-- faucet and coin. No foreign key checks most of this as rows are written
-- (D64; SQLite's keys on an idempotency row check only that its payout
-- exists), so a missing recipient or faucet (a NULL account) is reported
-- too, and so is the id an idempotency row names wrongly.
SELECT p.id FROM payouts p LEFT JOIN transfers t ON t.id = p.transfer_id
WHERE t.id IS NULL OR t.amount <> p.amount OR t.coin <> p.coin OR t.kind <> 'payout'
   OR t.to_account IS DISTINCT FROM (SELECT account_id FROM users WHERE id = p.recipient_id)
   OR t.from_account IS DISTINCT FROM (SELECT account_id FROM faucets WHERE id = p.faucet_id)
UNION
SELECT k.payout_id FROM idempotency_keys k LEFT JOIN payouts p ON p.id = k.payout_id
WHERE p.id IS NULL OR p.faucet_id <> k.faucet_id OR p.coin <> k.coin
ORDER BY 1;

-- name: MigrationLock
SELECT pg_advisory_xact_lock(7421001);

-- name: MigrationInit
CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL);

-- name: MigrationApplied
SELECT version FROM schema_migrations ORDER BY version;

-- name: MigrationRecord
INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2);

-- Accounts and sessions (D10, D15). An unset *_at column is 0.

-- name: SessionColumns
id, user_id, created_at, last_seen_at, expires_at, verified_at, ip, user_agent, revoked_at

-- name: SessionGet
SELECT {{SessionColumns}} FROM sessions WHERE token_hash = $1;

-- name: SessionListByUser
SELECT {{SessionColumns}} FROM sessions
WHERE user_id = $1 AND revoked_at = 0 AND expires_at > $2 ORDER BY id DESC;

-- name: SessionCreate
INSERT INTO sessions (token_hash, user_id, created_at, last_seen_at, expires_at, verified_at, ip, user_agent)
VALUES ($1, $2, $3, $3, $4, $5, $6, $7) RETURNING id;

-- name: SessionTouch
UPDATE sessions SET last_seen_at = $2 WHERE id = $1 AND revoked_at = 0 AND last_seen_at < $2;

-- name: SessionRenew
UPDATE sessions SET token_hash = $2, verified_at = $3 WHERE id = $1 AND revoked_at = 0;

-- name: SessionRevoke
UPDATE sessions SET revoked_at = $3 WHERE user_id = $1 AND id = $2 AND revoked_at = 0;

-- name: SessionRevokeByUser
UPDATE sessions SET revoked_at = $3 WHERE user_id = $1 AND id <> $2 AND revoked_at = 0;

-- name: AccountTokenCreate
INSERT INTO account_tokens (token_hash, user_id, kind, new_email, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6);

-- Marks the token used and returns it in one statement: of two uses
-- racing, one updates the row and the other finds it used.
-- name: AccountTokenUse
UPDATE account_tokens SET used_at = $3
WHERE token_hash = $1 AND kind = $2 AND used_at = 0 AND expires_at > $3
RETURNING user_id, kind, new_email, created_at, expires_at, used_at;

-- name: RecoveryCodesDelete
DELETE FROM recovery_codes WHERE user_id = $1;

-- name: RecoveryCodeInsert
INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2);

-- name: RecoveryCodeUse
UPDATE recovery_codes SET used_at = $3 WHERE user_id = $1 AND code_hash = $2 AND used_at = 0;

-- name: RecoveryCodesRemaining
SELECT COUNT(*) FROM recovery_codes WHERE user_id = $1 AND used_at = 0;

-- name: SecurityLogAdd
INSERT INTO security_log (user_id, kind, ip, detail, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id;

-- name: SecurityLogList
SELECT id, user_id, kind, ip, detail, created_at FROM security_log
WHERE user_id = $1 ORDER BY id DESC LIMIT $2;

-- The faucet management pages (issue 11).

-- The cursor of PayoutSearch: the time and id of the payout $5 of the
-- faucet $1, whose page follows it, or past every payout when $5 is 0.
-- Written as one bound, never as "$5 = 0 OR ...": under that OR neither
-- engine (PostgreSQL under a prepared statement's generic plan) searches
-- the index from the cursor, so every page read the faucet's payouts from
-- the newest down to it, and the CSV export, a page of 500 at a time, took
-- a time growing with the square of the payouts (BENCHMARKS.md, round
-- twenty-eight). A payout $5 of another faucet, or none, bounds nothing
-- (NULL): the page is empty.
-- name: PayoutSearchAfter
SELECT b.created_at, b.id FROM payouts b WHERE b.id = $5 AND b.faucet_id = $1
UNION ALL SELECT 9223372036854775807, 9223372036854775807 WHERE $5 = 0

-- name: PayoutSearch
-- The owner's list of payouts and its CSV export: optional filters ('' and
-- 0 match all), newest first, and the page after the payout $5 (0: from
-- the newest). The page is a merge of one range of payouts_faucet_coin_time
-- per coin (D68), each a keyset on (created_at, id) after the payout $5
-- (PayoutSearchAfter).
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at, u.payout_user_hash
FROM coins c CROSS JOIN LATERAL (
  SELECT {{PayoutColumns}} FROM payouts
  WHERE faucet_id = $1 AND coin = c.symbol AND ($3 = 0 OR recipient_id = $3) AND ($4 = '' OR referral = $4)
    AND (created_at, id) < ({{PayoutSearchAfter}})
  ORDER BY created_at DESC, id DESC LIMIT $6
) AS p
JOIN users u ON u.id = p.recipient_id
WHERE $2 = '' OR c.symbol = $2
ORDER BY p.created_at DESC, p.id DESC LIMIT $6;

-- name: PayoutSearchByRecipient
-- PayoutSearch filtered by one recipient ($3 <> 0): the range of
-- payouts_faucet_recipient for the faucet and the recipient from the
-- cursor, where PayoutSearch's ranges by coin read every payout of the
-- faucet to find the recipient's (38-49 ms a page at 166,000 payouts).
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at, u.payout_user_hash
FROM payouts p JOIN users u ON u.id = p.recipient_id
WHERE p.faucet_id = $1 AND p.recipient_id = $3 AND ($2 = '' OR p.coin = $2) AND ($4 = '' OR p.referral = $4)
  AND (p.created_at, p.id) < ({{PayoutSearchAfter}})
ORDER BY p.created_at DESC, p.id DESC LIMIT $6;

-- A faucet's API keys page (issue 11).

-- name: FaucetKeyPending
SELECT pending_key_hash IS NOT NULL FROM faucets WHERE id = $1;

-- name: KeyTouch
UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2);

-- The wallet pages (issue 11).

-- name: PayoutListByRecipient
-- One faucet's part of a page of the payouts a wallet received (D67):
-- the range of payouts_faucet_recipient for the faucet and the user,
-- newest first, older than the cursor ($5 the cursor's time, $6 its id)
-- and no older than $4, the oldest the page can still take. '' matches
-- every coin. PayoutListByRecipient merges the faucets' parts.
-- The time's range is given as row comparisons with the recipient ahead
-- of the time, as PayoutWindowsRecipientRows does, for the same reason:
-- written on created_at alone, PostgreSQL's generic plan walked the
-- faucet's payouts by time (payouts_faucet_time, which gave the order
-- until D68 dropped it) and kept the user's. SQLite's form is in its
-- queries.sql.
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at, f.name
FROM payouts p JOIN faucets f ON f.id = p.faucet_id
WHERE p.faucet_id = $1 AND p.recipient_id = $2 AND ($3 = '' OR p.coin = $3)
  AND (p.recipient_id, p.created_at) >= ($2, $4) AND (p.recipient_id, p.created_at) <= ($2, $5)
  AND (p.created_at < $5 OR p.id < $6)
ORDER BY p.created_at DESC, p.id DESC LIMIT $7;

-- name: PayoutListByRecipientCursor
SELECT created_at FROM payouts WHERE id = $1 AND recipient_id = $2;

-- name: FaucetListPayers
-- One probe of the index payouts_faucet_recipient per faucet.
SELECT {{FaucetColumns}} FROM faucets
WHERE EXISTS (SELECT 1 FROM payouts p WHERE p.faucet_id = faucets.id AND p.recipient_id = $1)
ORDER BY name, id;

-- name: UserAddressRemove
DELETE FROM user_addresses WHERE user_id = $1 AND coin = $2 AND address = $3;

-- The operator pages (issue 11, item 6).

-- name: OperatorLogAdd
INSERT INTO operator_log (operator_id, action, target, detail, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id;

-- name: OperatorLogList
-- Newest first, those before id $1 (0: from the newest).
SELECT l.id, l.operator_id, u.username, l.action, l.target, l.detail, l.created_at
FROM operator_log l JOIN users u ON u.id = l.operator_id
WHERE l.id < CASE WHEN $1 = 0 THEN 9223372036854775807 ELSE $1 END ORDER BY l.id DESC LIMIT $2;

-- name: UserSearch
-- $1 is the lower-cased query with LIKE's wildcards escaped by a
-- backslash; usernames, emails and hashes are stored lower-case.
SELECT {{UserColumns}} FROM users
WHERE username LIKE '%' || $1 || '%' ESCAPE '\' OR email LIKE '%' || $1 || '%' ESCAPE '\'
   OR payout_user_hash LIKE '%' || $1 || '%' ESCAPE '\'
ORDER BY id LIMIT $2 OFFSET $3;

-- name: UserSetEmailVerified
UPDATE users SET email_verified = true WHERE id = $1;

-- name: CoinSetMinPayout
UPDATE coins SET min_payout = $2 WHERE symbol = $1;

-- name: BalanceTotals
-- Per coin (in the catalogue's order) and holder: accounts 1 and 2 are
-- system:deposits and system:listing; the rest are users' or faucets'.
SELECT b.coin, CASE b.account_id WHEN 1 THEN 'system:deposits' WHEN 2 THEN 'system:listing' ELSE a.kind END AS holder,
  COUNT(CASE WHEN b.amount <> 0 THEN 1 END), CAST(SUM(b.amount) AS BIGINT)
FROM balances b JOIN accounts a ON a.id = b.account_id JOIN coins c ON c.symbol = b.coin
GROUP BY c.position, b.coin, holder ORDER BY c.position, holder;

-- Webhook endpoints (issue 12, D53, D54): every statement names the
-- faucet, so an endpoint of another faucet is not found.

-- name: WebhookEndpointColumns
id, faucet_id, url, events, secret_sealed, enabled, disabled_reason, created_at, updated_at, failing_since

-- name: WebhookEndpointCreate
INSERT INTO webhook_endpoints (faucet_id, url, events, secret_sealed, enabled, disabled_reason, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id;

-- name: WebhookEndpointList
SELECT {{WebhookEndpointColumns}} FROM webhook_endpoints WHERE faucet_id = $1 ORDER BY id;

-- name: WebhookEndpointGet
SELECT {{WebhookEndpointColumns}} FROM webhook_endpoints WHERE faucet_id = $1 AND id = $2;

-- name: WebhookEndpointCount
SELECT COUNT(*) FROM webhook_endpoints WHERE faucet_id = $1;

-- name: WebhookEndpointSetSecret
UPDATE webhook_endpoints SET secret_sealed = $3, updated_at = $4 WHERE faucet_id = $1 AND id = $2;

-- name: WebhookEndpointSetEnabled
-- Enabling starts the endpoint's health afresh (D52's 3 days count anew).
UPDATE webhook_endpoints SET enabled = $3, disabled_reason = $4, updated_at = $5,
  failing_since = CASE WHEN $3 THEN NULL ELSE failing_since END
WHERE faucet_id = $1 AND id = $2;

-- name: WebhookEndpointParkDeliveries
-- Disabling an endpoint parks its pending deliveries at the largest time,
-- out of every claim's due range (OutboxClaim skips a disabled endpoint's
-- rows, but walked every one of them to do so, each claim); enabling it
-- makes the parked ones due at once ($4). A delivery in flight as the
-- endpoint is disabled takes its next time from its attempt's record, and
-- a claim skips it as before.
UPDATE outbox SET next_attempt_at = CASE WHEN $3 THEN $4 ELSE 9223372036854775807 END
WHERE endpoint_id = $2 AND faucet_id = $1 AND kind = 'webhook' AND state = 'pending'
  AND (NOT $3 OR next_attempt_at = 9223372036854775807);

-- name: WebhookEndpointDelete
DELETE FROM webhook_endpoints WHERE faucet_id = $1 AND id = $2;

-- name: WebhookEndpointDeleteAttempts
-- Before the endpoint itself: its attempts, then its deliveries.
DELETE FROM outbox_attempts WHERE delivery_id IN (SELECT id FROM outbox WHERE faucet_id = $1 AND endpoint_id = $2);

-- name: WebhookEndpointDeleteDeliveries
DELETE FROM outbox WHERE faucet_id = $1 AND endpoint_id = $2;

-- name: WebhookEndpointsHealthy
UPDATE webhook_endpoints SET failing_since = NULL
WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS t(value)) AND failing_since IS NOT NULL;

-- name: WebhookEndpointsFailing
-- Sets failing_since where unset and returns the enabled endpoints failing
-- since $3 or earlier.
UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2)
WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS t(value))
RETURNING {{WebhookEndpointColumns}};

-- Webhook deliveries (issue 12, D50, D52): the outbox's rows of kind
-- webhook, which alone have a faucet, an endpoint and an event. A
-- delivery's event gives its type (and, to the claim, its body's facts).

-- name: WebhookDeliveryColumns
d.id, d.endpoint_id, d.faucet_id, d.event_id, d.state, d.attempts, d.tries, d.next_attempt_at, d.last_status,
d.last_error, d.created_at, d.done_at, e.type

-- name: WebhookDeliveryList
-- A page of the faucet's deliveries, newest first, before the delivery $4
-- (0: from the newest); of the endpoint $2, or of every endpoint (0). The
-- two cases are two arms, of which the other's guard ($2 <> 0, $2 = 0)
-- runs nothing, and the cursor is one bound: written "($2 = 0 OR ...)"
-- and "($4 = 0 OR ...)", neither engine searched outbox_endpoint from the
-- cursor (PostgreSQL under a generic plan), and a page read every faucet's
-- deliveries from the newest down (BENCHMARKS.md, round twenty-eight).
SELECT * FROM (
  SELECT * FROM (SELECT {{WebhookDeliveryColumns}} FROM outbox d JOIN events e ON e.id = d.event_id
    WHERE $2 <> 0 AND d.endpoint_id = $2 AND d.faucet_id = $1 AND ($3 = '' OR d.state = $3)
      AND d.id < CASE WHEN $4 = 0 THEN 9223372036854775807 ELSE $4 END
    ORDER BY d.id DESC LIMIT $5) AS one
  UNION ALL
  SELECT * FROM (SELECT {{WebhookDeliveryColumns}} FROM outbox d JOIN events e ON e.id = d.event_id
    WHERE $2 = 0 AND d.faucet_id = $1 AND ($3 = '' OR d.state = $3)
      AND d.id < CASE WHEN $4 = 0 THEN 9223372036854775807 ELSE $4 END
    ORDER BY d.id DESC LIMIT $5) AS every
) AS page ORDER BY 1 DESC LIMIT $5;

-- name: WebhookDeliveryGet
SELECT {{WebhookDeliveryColumns}} FROM outbox d JOIN events e ON e.id = d.event_id
WHERE d.faucet_id = $1 AND d.id = $2;

-- name: OutboxAttemptList
SELECT delivery_id, n, at, status, latency_us, error, reply FROM outbox_attempts WHERE delivery_id = $1 ORDER BY n;

-- name: WebhookDeliveryCount
-- Of the endpoint $1, or every endpoint's (0), in two arms as
-- WebhookDeliveryList: under "($1 = 0 OR ...)" an endpoint's count read
-- every faucet's deliveries. Only webhook rows name an endpoint.
SELECT state, COUNT(*) FROM (
  SELECT state FROM outbox WHERE $1 <> 0 AND endpoint_id = $1
  UNION ALL
  SELECT state FROM outbox WHERE $1 = 0 AND kind = 'webhook'
) AS d GROUP BY state;

-- name: OutboxBacklog
SELECT COUNT(*), MIN(created_at) FROM outbox WHERE kind = $1 AND state = 'pending';

-- name: OutboxClaim
-- Leases due rows: the oldest due first, skipping rows another node's
-- claim holds (D31), and those of disabled endpoints (they wait, pending,
-- for the endpoint to be enabled again).
UPDATE outbox SET next_attempt_at = $2
WHERE id IN (
  SELECT d.id FROM outbox d
  WHERE d.kind = $4 AND d.state = 'pending' AND d.next_attempt_at <= $1
    AND (d.kind <> 'webhook' OR EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.enabled))
  ORDER BY d.next_attempt_at LIMIT $3
  FOR UPDATE OF d SKIP LOCKED)
RETURNING id;

-- name: WebhookDeliveryClaimed
-- The claimed rows, with what sending needs: the endpoint's URL and
-- sealed secret, and the event.
SELECT {{WebhookDeliveryColumns}}, w.url, w.secret_sealed, e.faucet_id, e.data, e.created_at
FROM outbox d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
WHERE d.id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS t(value))
ORDER BY d.next_attempt_at, d.id;

-- name: OutboxAttemptsInsertJSON
-- An attempt already logged under its number was recorded by a worker
-- that claimed the delivery again after this one's lease ran out: the
-- later record stands, this one is dropped (as is its delivery's update).
INSERT INTO outbox_attempts (delivery_id, n, at, status, latency_us, error, reply)
SELECT r.delivery_id, r.n, r.at, r.status, r.latency_us, r.error, r.reply
FROM jsonb_to_recordset($1::jsonb) AS r(delivery_id BIGINT, n INTEGER, at BIGINT, status INTEGER, latency_us BIGINT, error TEXT, reply TEXT)
ON CONFLICT (delivery_id, n) DO NOTHING;

-- name: OutboxRecordJSON
-- Only a delivery still as its claim found it (tries one less) is moved
-- on; one acknowledged meanwhile (a merchant verified the token while its
-- callback was in flight, D55) counts the attempt but stays delivered.
UPDATE outbox d SET attempts = r.attempts, tries = r.tries, last_status = r.last_status,
  state = CASE WHEN d.state = 'pending' THEN r.state ELSE d.state END,
  next_attempt_at = CASE WHEN d.state = 'pending' THEN r.next_attempt_at ELSE d.next_attempt_at END,
  last_error = CASE WHEN d.state = 'pending' THEN r.last_error ELSE d.last_error END,
  done_at = CASE WHEN d.state = 'pending' THEN r.done_at ELSE d.done_at END
FROM jsonb_to_recordset($1::jsonb) AS r(id BIGINT, state TEXT, attempts INTEGER, tries INTEGER, next_attempt_at BIGINT,
  last_status INTEGER, last_error TEXT, done_at BIGINT)
WHERE d.id = r.id AND d.tries = r.tries - 1;

-- name: OutboxReleaseJSON
UPDATE outbox d SET next_attempt_at = $2
FROM jsonb_to_recordset($1::jsonb) AS r(id BIGINT, tries INTEGER)
WHERE d.id = r.id AND d.tries = r.tries AND d.state = 'pending';

-- name: WebhookDeliveryInsert
INSERT INTO outbox (kind, endpoint_id, faucet_id, event_id, next_attempt_at, created_at)
SELECT 'webhook', w.id, w.faucet_id, $3, $4, $4 FROM webhook_endpoints w WHERE w.faucet_id = $1 AND w.id = $2
RETURNING id;

-- name: WebhookDeliveriesResend
-- One delivery ($2), or an endpoint's ($3) failed deliveries created in
-- [$4, $5): back to pending, a new schedule, due at $6.
UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = $6, last_error = '', done_at = NULL
WHERE faucet_id = $1 AND state <> 'pending'
  AND (($2 <> 0 AND id = $2) OR ($2 = 0 AND endpoint_id = $3 AND state = 'failed' AND created_at >= $4 AND created_at < $5));

-- Merchant checkouts (issue 13, spec 4.4, D55-D57).

-- name: CheckoutColumns
id, public_id, merchant_id, item, amount1, currency1, currency2, custom, callback_url, success_url, cancel_url, state,
created_at, quote_coin, quote_amount, quote_rate, quote_source, quote_price_at, quote_expires_at, payer_id, transfer_id,
paid_at, token_hash, token_sealed, verified_at

-- name: CheckoutCreate
INSERT INTO merchant_checkouts (public_id, merchant_id, item, amount1, currency1, currency2, custom, callback_url,
  success_url, cancel_url, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id;

-- name: CheckoutGet
SELECT {{CheckoutColumns}} FROM merchant_checkouts WHERE public_id = $1;

-- name: CheckoutList
-- Paid checkouts only: what a merchant received ($1), or what a buyer
-- paid ($1 = 0, $2), before the checkout $3 (0: from the newest). Two arms,
-- each searching its index from the cursor, as WebhookDeliveryList: under
-- the ORs both engines merged the two indexes and sorted every paid
-- checkout of the merchant for each page.
SELECT * FROM (
  SELECT * FROM (SELECT {{CheckoutColumns}} FROM merchant_checkouts
    WHERE $1 <> 0 AND merchant_id = $1 AND state = 'paid' AND id < CASE WHEN $3 = 0 THEN 9223372036854775807 ELSE $3 END
    ORDER BY id DESC LIMIT $4) AS received
  UNION ALL
  SELECT * FROM (SELECT {{CheckoutColumns}} FROM merchant_checkouts
    WHERE $1 = 0 AND payer_id = $2 AND state = 'paid' AND id < CASE WHEN $3 = 0 THEN 9223372036854775807 ELSE $3 END
    ORDER BY id DESC LIMIT $4) AS paid
) AS page ORDER BY 1 DESC LIMIT $4;

-- name: CheckoutSetQuote
UPDATE merchant_checkouts SET quote_coin = $2, quote_amount = $3, quote_rate = $4, quote_source = $5,
  quote_price_at = $6, quote_expires_at = $7
WHERE id = $1 AND state = 'open';

-- name: CheckoutPay
-- Only the quote the buyer was shown, before it expires, can be paid; a
-- second click finds the checkout paid and changes nothing.
UPDATE merchant_checkouts SET state = 'paid', payer_id = $2, transfer_id = $3, paid_at = $4, token_hash = $5,
  token_sealed = $6
WHERE id = $1 AND state = 'open' AND quote_coin = $7 AND quote_amount = $8 AND quote_expires_at > $4;

-- name: CheckoutCancel
UPDATE merchant_checkouts SET state = 'cancelled' WHERE id = $1 AND state = 'open';

-- name: CheckoutVerify
UPDATE merchant_checkouts SET verified_at = $2
WHERE token_hash = $1 AND state = 'paid' AND verified_at IS NULL
RETURNING {{CheckoutColumns}};

-- name: CallbackInsert
INSERT INTO outbox (kind, checkout_id, next_attempt_at, created_at) VALUES ('callback', $1, $2, $2) RETURNING id;

-- name: CallbackAcknowledge
-- The merchant verified the token: the callback has done its work (D55).
UPDATE outbox SET state = 'delivered', done_at = $2, last_error = 'acknowledged by the verification of its token'
WHERE kind = 'callback' AND checkout_id = $1 AND state = 'pending';

-- name: OutboxColumns
id, kind, state, attempts, tries, next_attempt_at, last_status, last_error, created_at, done_at

-- name: CallbackGet
SELECT {{OutboxColumns}} FROM outbox WHERE kind = 'callback' AND checkout_id = $1;

-- name: CallbackClaimed
-- The claimed callbacks ($1, a JSON array of ids) and their checkouts.
SELECT {{OutboxColumns}}, checkout_id FROM outbox
WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS t(value)) ORDER BY next_attempt_at, id;

-- name: CheckoutsOfCallbacks
SELECT {{CheckoutColumns}} FROM merchant_checkouts
WHERE id IN (SELECT checkout_id FROM outbox WHERE id IN (SELECT value::bigint FROM jsonb_array_elements_text($1::jsonb) AS t(value)));

-- name: CallbackResend
UPDATE outbox SET state = 'pending', attempts = 0, next_attempt_at = $2, last_error = '', done_at = NULL
WHERE kind = 'callback' AND checkout_id = $1 AND state <> 'pending';
