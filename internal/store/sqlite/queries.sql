-- SQLite has one writer at a time, so a write transaction already holds
-- every row it reads: no row lock is needed (and FOR UPDATE does not exist).

-- name: FaucetLock
SELECT id FROM faucets WHERE id = $1;

-- name: MigrationLock
SELECT 1;

-- name: IdempotencyGetMany
SELECT {{IdempotencyColumns}} FROM idempotency_keys
WHERE faucet_id = $1 AND idem_key IN (SELECT value FROM json_each($2));

-- The writer's transaction holds the whole database.
-- name: BalanceLock
SELECT account_id, coin, amount, debits FROM balances WHERE account_id = $1 AND coin = $2;

-- The per-row statements of a payout batch (FaucetLock, BalanceLock,
-- BalanceDebit, the bound idempotency keys), each run once over the batch's rows in
-- drip_rows (below) instead of once a row: a batch spread over many
-- faucets ran ~50 statements of each (a batch of one row runs the
-- one-row statement, rowCalls). With one writer there is no lock
-- order to keep, and the plan cannot drift: CROSS JOIN keeps drip_rows
-- the outer loop, each of its rows finding its row by the primary key
-- (TestSetStatementsSearchByKey). UPDATE ... FROM has no CROSS JOIN, but
-- drip_rows' only way in costs 1 (rows.go), which no scan of balances
-- undercuts.
-- name: FaucetsLockRows
SELECT f.id FROM drip_rows AS r CROSS JOIN faucets AS f WHERE r.handle = $1 AND f.id = r.c0;

-- name: BalancesLockRows
SELECT b.account_id, b.coin, b.amount, b.debits FROM drip_rows AS r CROSS JOIN balances AS b
WHERE r.handle = $1 AND b.account_id = r.c0 AND b.coin = r.c1;

-- name: BalancesDebitRows
UPDATE balances SET amount = balances.amount - r.c2, debits = balances.debits + 1 FROM drip_rows AS r
WHERE r.handle = $1 AND balances.account_id = r.c0 AND balances.coin = r.c1 AND balances.amount >= r.c2;

-- name: IdempotencyBoundRows
SELECT k.faucet_id, k.idem_key FROM drip_rows AS r CROSS JOIN idempotency_keys AS k
WHERE r.handle = $1 AND k.faucet_id = r.c0 AND k.idem_key = r.c1;

-- The send limits' windows of a batch, one per recipient or claimer IP it
-- pays (sqlstore.windowCalls: c0 the window's index, c1 the faucet, c2
-- its start, c3 its coin or '' for every coin, c4 the recipient or the
-- IP), counted in one statement instead of one a window. CROSS JOIN keeps
-- drip_rows the outer loop (TestSetStatementsSearchByKey); a window with
-- no payout has no row. By recipient, each row is a search of the copy
-- below the watermark and one of each recent block (D71, below); by IP, a
-- search of payouts_faucet_ip by faucet, IP and time.
-- name: PayoutWindowsRecipientRows
WITH RECURSIVE {{PayoutBlocksRecent}}
SELECT w, COUNT(*), CAST(SUM(amount) AS BIGINT) FROM (
  SELECT r.c0 AS w, c.amount AS amount FROM drip_rows AS r CROSS JOIN payouts_by_recipient AS c
  WHERE r.handle = $1 AND c.faucet_id = r.c1 AND c.recipient_id = r.c4 AND c.created_at >= r.c2
    AND (r.c3 = '' OR c.coin = r.c3) AND c.payout_id >> 16 < (SELECT done FROM payout_blocks)
  UNION ALL
  SELECT r.c0, p.amount FROM drip_rows AS r CROSS JOIN blocks AS b CROSS JOIN payouts AS p
  WHERE r.handle = $1 AND p.id >> 16 = +b.n AND p.faucet_id = r.c1 AND p.recipient_id = r.c4
    AND p.created_at >= r.c2 AND (r.c3 = '' OR p.coin = r.c3)
)
GROUP BY w;

-- name: PayoutWindowsIPRows
SELECT r.c0, COUNT(*), CAST(SUM(p.amount) AS BIGINT) FROM drip_rows AS r CROSS JOIN payouts AS p
WHERE r.handle = $1 AND p.faucet_id = r.c1 AND p.ip_address = r.c4 AND p.ip_address <> '' AND p.created_at >= r.c2
  AND (r.c3 = '' OR p.coin = r.c3)
GROUP BY r.c0;

-- With one writer, the next ids are those after the largest in use; rows
-- of these tables are never deleted, so no id is ever reused. The batch's
-- ids are one run, one row (see the shared PayoutIDsNext): a row an id,
-- made by a recursive query and scanned one by one, cost the writer 2-3 us
-- a payout.

-- name: PayoutIDsNext
SELECT (SELECT COALESCE(MAX(id), 0) FROM transfers) + 1, (SELECT COALESCE(MAX(id), 0) FROM payouts) + 1, $1;

-- The batch statements of a payout batch read their rows from drip_rows,
-- a virtual table over the Go slices bound to the handle $1 (rows.go):
-- c0, c1, ... are the columns in the order sqlstore.PayoutsInsert gives
-- them, which the names of the INSERT follow.
-- name: TransfersInsertRows
INSERT INTO transfers (id, coin, from_account, to_account, amount, kind, created_at)
SELECT r.c0, r.c1, r.c2, r.c3, r.c4, 'payout', $2 FROM drip_rows AS r WHERE r.handle = $1;

-- name: PayoutsInsertRows
INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
SELECT r.c0, r.c1, r.c2, r.c3, r.c4, r.c5, r.c6, r.c7, r.c8, $2 FROM drip_rows AS r WHERE r.handle = $1;

-- name: BalancesCreditRows
INSERT INTO balances (account_id, coin, amount)
SELECT r.c0, r.c1, r.c2 FROM drip_rows AS r WHERE r.handle = $1
ON CONFLICT (account_id, coin) DO UPDATE SET amount = balances.amount + excluded.amount;

-- name: EventsInsertRows
INSERT INTO events (id, faucet_id, type, data, created_at)
SELECT r.c0, r.c1, r.c2, r.c3, $2 FROM drip_rows AS r WHERE r.handle = $1;

-- The fan-out of events into webhook deliveries (D50, D69): one delivery
-- for each enabled endpoint of the event's faucet subscribed to its type,
-- due at once. Every statement that writes events runs this after it,
-- over the events it wrote (EventInsert's one, EventsInsertRows' batch;
-- EventProbe's transaction always rolls back), in place of a trigger on
-- events, which SQLite runs as a program of its own for each row: 2-3 us
-- of the writer's time a payout. CROSS JOIN keeps the events the outer
-- loop, so deliveries follow their order.
-- name: EventsFanoutRows
INSERT INTO outbox (kind, endpoint_id, faucet_id, event_id, next_attempt_at, created_at)
SELECT 'webhook', w.id, w.faucet_id, r.c0, $2, $2 FROM drip_rows AS r CROSS JOIN webhook_endpoints AS w
WHERE r.handle = $1 AND w.faucet_id = r.c1 AND w.enabled AND instr(',' || w.events || ',', ',' || r.c2 || ',') > 0;

-- name: IdempotencyInsertRows
INSERT INTO idempotency_keys ({{IdempotencyColumns}})
SELECT r.c0, r.c1, r.c2, r.c3, r.c4, r.c5, r.c6, r.c7, $2 FROM drip_rows AS r WHERE r.handle = $1;

-- name: NotificationsInsertRows
INSERT INTO notifications (faucet_id, kind, coin, threshold, balance, created_at, next_attempt_at)
SELECT r.c0, r.c1, r.c2, r.c3, r.c4, $2, $2 FROM drip_rows AS r WHERE r.handle = $1;

-- EventFeed (D59): with one writer, whose transaction holds the write
-- lock from its first write to its commit, events commit in seq order,
-- so every committed event may be read. txid is always 0, so the
-- position's order (txid, seq) > ($2, $3) is txid = $2 AND seq > $3. The
-- faucet's events after it are the copy's and the recent blocks' (D72).
-- name: EventFeed
WITH RECURSIVE {{FaucetEventBlocks}}
SELECT txid, seq, id, faucet_id, type,
  CASE WHEN instr(',' || $4 || ',', ',' || type || ',') > 0 THEN data END, created_at
FROM events
WHERE txid = $2 AND seq IN (
  SELECT * FROM (SELECT seq FROM events_by_faucet WHERE faucet_id = $1 AND seq > $3 ORDER BY seq LIMIT $5)
  UNION ALL
  SELECT * FROM (SELECT e.seq FROM eblocks b CROSS JOIN events e WHERE e.seq >> 8 = +b.n AND e.faucet_id = $1 AND e.seq > $3
    ORDER BY e.seq LIMIT $5))
ORDER BY txid, seq LIMIT $5;

-- name: NotificationDue
SELECT {{NotificationColumns}} FROM notifications
WHERE sent_at IS NULL AND next_attempt_at <= $1 AND attempts < $2
ORDER BY next_attempt_at, id LIMIT $3;

-- Webhook deliveries (issue 12): the JSON forms, and a claim without row
-- locks (SQLite has one writer, so two claims cannot overlap).

-- name: WebhookEndpointsHealthy
UPDATE webhook_endpoints SET failing_since = NULL
WHERE id IN (SELECT value FROM json_each($1)) AND failing_since IS NOT NULL;

-- name: WebhookEndpointsFailing
UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2)
WHERE id IN (SELECT value FROM json_each($1))
RETURNING {{WebhookEndpointColumns}};

-- name: OutboxClaim
UPDATE outbox SET next_attempt_at = $2
WHERE id IN (
  SELECT d.id FROM outbox d
  WHERE d.kind = $4 AND d.state = 'pending' AND d.next_attempt_at <= $1
    AND (d.kind <> 'webhook' OR EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.endpoint_id AND w.enabled))
  ORDER BY d.next_attempt_at LIMIT $3)
RETURNING id;

-- name: WebhookDeliveryClaimed
SELECT {{WebhookDeliveryColumns}}, w.url, w.secret_sealed, e.faucet_id, e.data, e.created_at
FROM outbox d JOIN events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
WHERE d.id IN (SELECT value FROM json_each($1))
ORDER BY d.next_attempt_at, d.id;

-- name: OutboxAttemptsInsertJSON
INSERT INTO outbox_attempts (delivery_id, n, at, status, latency_us, error, reply)
SELECT r.value ->> 'delivery_id', r.value ->> 'n', r.value ->> 'at', r.value ->> 'status', r.value ->> 'latency_us',
  r.value ->> 'error', r.value ->> 'reply'
FROM jsonb_each($1) AS r WHERE true -- (SQLite's upsert after a SELECT needs a WHERE)
ON CONFLICT (delivery_id, n) DO NOTHING;

-- name: OutboxRecordJSON
UPDATE outbox SET attempts = r.value ->> 'attempts', tries = r.value ->> 'tries', last_status = r.value ->> 'last_status',
  state = CASE WHEN outbox.state = 'pending' THEN r.value ->> 'state' ELSE outbox.state END,
  next_attempt_at = CASE WHEN outbox.state = 'pending' THEN r.value ->> 'next_attempt_at' ELSE outbox.next_attempt_at END,
  last_error = CASE WHEN outbox.state = 'pending' THEN r.value ->> 'last_error' ELSE outbox.last_error END,
  done_at = CASE WHEN outbox.state = 'pending' THEN r.value ->> 'done_at' ELSE outbox.done_at END
FROM jsonb_each($1) AS r
WHERE outbox.id = r.value ->> 'id' AND outbox.tries = (r.value ->> 'tries') - 1;

-- name: OutboxReleaseJSON
UPDATE outbox SET next_attempt_at = $2
FROM jsonb_each($1) AS r
WHERE outbox.id = r.value ->> 'id' AND outbox.tries = r.value ->> 'tries'
  AND outbox.state = 'pending';

-- name: CallbackClaimed
SELECT {{OutboxColumns}}, checkout_id FROM outbox
WHERE id IN (SELECT value FROM json_each($1)) ORDER BY next_attempt_at, id;

-- name: CheckoutsOfCallbacks
SELECT {{CheckoutColumns}} FROM merchant_checkouts
WHERE id IN (SELECT checkout_id FROM outbox WHERE id IN (SELECT value FROM json_each($1)));

-- A faucet's payouts by recipient are in two levels (D71, migration
-- 0027): payouts_by_recipient, a copy of every payout of a block below
-- the watermark payout_blocks.done, by faucet, recipient and time; and
-- payouts_block_recipient, the same key led by the payout's block (its id
-- >> 16), of which a read searches each block from the watermark to the
-- last, blocks. The copy may hold part of the block at the watermark, which
-- the compactor is copying: a read of the copy that counts takes the
-- blocks below the watermark only; one that lists ids merges by IN, where a
-- payout found in both levels is one id. A block is compared as id >> 16 =
-- +b.n: the unary + takes the block number's integer affinity away, without
-- which SQLite does not match the comparison to the index's expression and
-- walks the faucet's payouts instead (TestSetStatementsSearchByKey).
-- name: PayoutBlocksRecent
blocks (n) AS (
  SELECT done FROM payout_blocks
  UNION ALL
  SELECT n + 1 FROM blocks WHERE n < (SELECT COALESCE(MAX(id), 0) >> 16 FROM payouts)
)

-- A wallet's page, one faucet's part (sqlstore's queries.sql): the newest
-- of the copy's range and of each recent block's, merged. SQLite searches
-- each by the time's range written on created_at; written as row
-- comparisons, it would read all the user's payouts from the faucet.
-- name: PayoutListByRecipient
WITH RECURSIVE {{PayoutBlocksRecent}}
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at, f.name
FROM payouts p JOIN faucets f ON f.id = p.faucet_id
WHERE p.id IN (
  SELECT * FROM (
    SELECT c.payout_id FROM payouts_by_recipient c
    WHERE c.faucet_id = $1 AND c.recipient_id = $2 AND ($3 = '' OR c.coin = $3)
      AND c.created_at BETWEEN $4 AND $5 AND (c.created_at < $5 OR c.payout_id < $6)
    ORDER BY c.created_at DESC, c.payout_id DESC LIMIT $7)
  UNION ALL
  SELECT * FROM (
    SELECT q.id FROM blocks b CROSS JOIN payouts q
    WHERE q.id >> 16 = +b.n AND q.faucet_id = $1 AND q.recipient_id = $2 AND ($3 = '' OR q.coin = $3)
      AND q.created_at BETWEEN $4 AND $5 AND (q.created_at < $5 OR q.id < $6)
    ORDER BY q.created_at DESC, q.id DESC LIMIT $7))
ORDER BY p.created_at DESC, p.id DESC LIMIT $7;

-- The faucets that paid a user: a probe of the copy and one of each
-- recent block per faucet. Any row of the copy names a payout, so its
-- probe needs no watermark.
-- name: FaucetListPayers
WITH RECURSIVE {{PayoutBlocksRecent}}
SELECT {{FaucetColumns}} FROM faucets
WHERE EXISTS (SELECT 1 FROM payouts_by_recipient c WHERE c.faucet_id = faucets.id AND c.recipient_id = $1)
   OR EXISTS (SELECT 1 FROM blocks b CROSS JOIN payouts p
     WHERE p.id >> 16 = +b.n AND p.faucet_id = faucets.id AND p.recipient_id = $1)
ORDER BY name, id;

-- The copy against the payouts (D3, D71): every payout of a block below
-- the watermark has its row in the copy, and every row of the copy
-- agrees with its payout. A payout missing from the copy would be missing
-- from its recipient's send-limit windows.
-- name: ReconcilePayoutsByRecipient
SELECT p.id FROM payouts p
WHERE p.id >> 16 < (SELECT done FROM payout_blocks) AND NOT EXISTS (
  SELECT 1 FROM payouts_by_recipient c WHERE c.faucet_id = p.faucet_id AND c.recipient_id = p.recipient_id
    AND c.created_at = p.created_at AND c.payout_id = p.id)
UNION
SELECT c.payout_id FROM payouts_by_recipient c LEFT JOIN payouts p ON p.id = c.payout_id
WHERE p.id IS NULL OR p.faucet_id <> c.faucet_id OR p.recipient_id <> c.recipient_id
   OR p.created_at <> c.created_at OR p.coin <> c.coin OR p.amount <> c.amount
ORDER BY 1;

-- A faucet's payouts and events are in two levels (D72, migration 0029):
-- payouts_by_faucet and events_by_faucet, copies of every payout and event
-- of a block below the watermarks faucet_blocks.payouts_done and
-- events_done, keyed by faucet; and payouts_block_faucet and
-- events_block_faucet, the same keys led by the block (id >> 8, seq >> 8),
-- of which a read searches each block from the watermark to the last,
-- pblocks and eblocks. The compactor copies whole blocks and moves the
-- watermark in the same transaction, so a row is in exactly one level: a
-- read takes the copy's range and the recent blocks' and adds them (UNION
-- ALL), each part ordered and limited as the whole is. A block is compared
-- as id >> 8 = +b.n, as for D71 (PayoutBlocksRecent).
-- name: FaucetPayoutBlocks
pblocks (n) AS (
  SELECT payouts_done FROM faucet_blocks
  UNION ALL
  SELECT n + 1 FROM pblocks WHERE n < (SELECT COALESCE(MAX(id), 0) >> 8 FROM payouts)
)

-- name: FaucetEventBlocks
eblocks (n) AS (
  SELECT events_done FROM faucet_blocks
  UNION ALL
  SELECT n + 1 FROM eblocks WHERE n < (SELECT COALESCE(MAX(seq), 0) >> 8 FROM events)
)

-- A faucet's payouts in every coin (D68): the copy's range of each coin of
-- the catalogue, newest first, and the recent blocks' in every coin. SQLite
-- has no LATERAL: each coin's range is a correlated list of ids, read once
-- per coin and found by rowid.
-- name: PayoutList
WITH RECURSIVE {{FaucetPayoutBlocks}}
SELECT * FROM (
  SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at
  FROM coins c JOIN payouts p ON p.id IN (
    SELECT q.payout_id FROM payouts_by_faucet q WHERE q.faucet_id = $1 AND q.coin = c.symbol
    ORDER BY q.created_at DESC, q.payout_id DESC LIMIT $2)
  UNION ALL
  SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at
  FROM payouts p WHERE p.id IN (
    SELECT * FROM (SELECT q.id FROM pblocks b CROSS JOIN payouts q WHERE q.id >> 8 = +b.n AND q.faucet_id = $1
    ORDER BY q.created_at DESC, q.id DESC LIMIT $2)))
ORDER BY created_at DESC, id DESC LIMIT $2;

-- name: PayoutListByCoin
WITH RECURSIVE {{FaucetPayoutBlocks}}
SELECT {{PayoutColumns}} FROM payouts WHERE id IN (
  SELECT * FROM (SELECT q.payout_id FROM payouts_by_faucet q WHERE q.faucet_id = $1 AND q.coin = $2
    ORDER BY q.created_at DESC, q.payout_id DESC LIMIT $3)
  UNION ALL
  SELECT * FROM (SELECT q.id FROM pblocks b CROSS JOIN payouts q WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND q.coin = $2
    ORDER BY q.created_at DESC, q.id DESC LIMIT $3))
ORDER BY created_at DESC, id DESC LIMIT $3;

-- The sums read the copy one coin's range at a time (the IN list), each
-- row's payout found by id (CROSS JOIN keeps the copy the outer loop), and
-- the recent blocks' rows.
-- name: PayoutWindowFaucet
WITH RECURSIVE {{FaucetPayoutBlocks}}
SELECT COUNT(*), CAST(COALESCE(SUM(amount), 0) AS BIGINT) FROM (
  SELECT p.amount FROM payouts_by_faucet c CROSS JOIN payouts p
  WHERE c.faucet_id = $1 AND c.coin IN (SELECT symbol FROM coins WHERE $3 = '' OR symbol = $3) AND c.created_at >= $2
    AND p.id = c.payout_id
  UNION ALL
  SELECT q.amount FROM pblocks b CROSS JOIN payouts q
  WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND ($3 = '' OR q.coin = $3) AND q.created_at >= $2);

-- The statistics (D73): the kept sums (migration 0032) of every payout
-- below the mark stats_mark.folded, and the faucet's payouts from the mark
-- on, read block by block from the mark's block in payouts_block_faucet
-- (sblocks, as pblocks reads D72's recent level), whose ids are not below
-- the mark. The folder moves the mark and the sums in one transaction, so
-- each payout is counted once, whatever it has done.
-- name: StatsPayoutBlocks
sblocks (n) AS (
  SELECT folded >> 8 FROM stats_mark
  UNION ALL
  SELECT n + 1 FROM sblocks WHERE n < (SELECT COALESCE(MAX(id), 0) >> 8 FROM payouts)
)

-- The days from the first midnight at or after since ($2) are the kept
-- days' sums and the payouts not yet folded, whose recipients count for a
-- day only if the day's kept recipients do not hold them. The part of a
-- day before that midnight (since is not a midnight) is summed from the
-- faucet's payouts of that part of a day, in D72's two levels.
-- name: StatsDaily
WITH RECURSIVE {{FaucetPayoutBlocks}}, {{StatsPayoutBlocks}},
edge (at) AS (SELECT ($2 + 86399999999) / 86400000000 * 86400000000)
SELECT day, coin, SUM(n), CAST(SUM(total) AS BIGINT), SUM(recipients) FROM (
  SELECT day, coin, payouts AS n, amount AS total, recipients FROM stats_days
  WHERE faucet_id = $1 AND day >= (SELECT at FROM edge) / 86400000000
  UNION ALL
  SELECT r.day, r.coin, COUNT(*), SUM(r.amount), COUNT(DISTINCT CASE WHEN NOT EXISTS (
      SELECT 1 FROM stats_day_users k WHERE k.faucet_id = $1 AND k.day = r.day AND k.coin = r.coin AND k.recipient_id = r.recipient_id)
    THEN r.recipient_id END)
  FROM (
    SELECT q.created_at / 86400000000 AS day, q.coin, q.amount, q.recipient_id FROM sblocks b CROSS JOIN payouts q
    WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND q.id >= (SELECT folded FROM stats_mark)
      AND q.created_at >= (SELECT at FROM edge)) r
  GROUP BY r.day, r.coin
  UNION ALL
  SELECT created_at / 86400000000, coin, COUNT(*), SUM(amount), COUNT(DISTINCT recipient_id) FROM (
    SELECT c.created_at, c.coin, p.amount, p.recipient_id FROM payouts_by_faucet c CROSS JOIN payouts p
    WHERE c.faucet_id = $1 AND c.coin IN (SELECT symbol FROM coins) AND c.created_at >= $2
      AND c.created_at < (SELECT at FROM edge) AND p.id = c.payout_id
    UNION ALL
    SELECT q.created_at, q.coin, q.amount, q.recipient_id FROM pblocks b CROSS JOIN payouts q
    WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND q.created_at >= $2 AND q.created_at < (SELECT at FROM edge))
  GROUP BY 1, 2)
GROUP BY day, coin ORDER BY 1 DESC, 2;

-- A page of recipients sums the faucet's kept sums of the coin, a row a
-- recipient, and its payouts not yet folded.
-- name: StatsUsers
-- By rank, as sqlstore's StatsUsers (migration 0033 here). CROSS JOIN
-- keeps the ranked recipients the outer loop: otherwise the planner reads
-- every sum of the faucet's coin and probes them.
WITH RECURSIVE {{StatsPayoutBlocks}},
pending AS MATERIALIZED (
  SELECT q.recipient_id, q.amount, q.created_at FROM sblocks b CROSS JOIN payouts q
  WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND q.coin = $2 AND q.id >= (SELECT folded FROM stats_mark)),
ranked AS (
  SELECT recipient_id FROM (SELECT recipient_id FROM stats_users WHERE faucet_id = $1 AND coin = $2
    ORDER BY amount DESC, recipient_id LIMIT $3 + $4)
  UNION
  SELECT recipient_id FROM pending)
SELECT u.payout_user_hash, s.n, s.total, s.last_at FROM (
  SELECT recipient_id, SUM(n) AS n, CAST(SUM(total) AS BIGINT) AS total, MAX(last_at) AS last_at FROM (
    SELECT k.recipient_id, k.payouts AS n, k.amount AS total, k.last_at FROM ranked r CROSS JOIN stats_users k
    WHERE k.faucet_id = $1 AND k.coin = $2 AND k.recipient_id = r.recipient_id
    UNION ALL
    SELECT recipient_id, 1, amount, created_at FROM pending)
  GROUP BY recipient_id
) s JOIN users u ON u.id = s.recipient_id
ORDER BY s.total DESC, s.recipient_id LIMIT $3 OFFSET $4;

-- name: StatsUsersCount
-- As sqlstore's: the kept count (migration 0034 here), and the recipients
-- paid since the mark that the sums do not hold.
WITH RECURSIVE {{StatsPayoutBlocks}}
SELECT COALESCE((SELECT recipients FROM stats_user_counts WHERE faucet_id = $1 AND coin = $2), 0) + (
  SELECT COUNT(DISTINCT q.recipient_id) FROM sblocks b CROSS JOIN payouts q
  WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND q.coin = $2 AND q.id >= (SELECT folded FROM stats_mark)
    AND NOT EXISTS (SELECT 1 FROM stats_users k WHERE k.faucet_id = $1 AND k.coin = $2 AND k.recipient_id = q.recipient_id));

-- The fold (StatsFold): the mark, the id the next payout takes, and the
-- range up to it settled, since with one writer every id below the next
-- is committed; the statements that add the range are sqlstore's.
-- name: StatsFoldRange
SELECT folded, (SELECT COALESCE(MAX(id), 0) + 1 FROM payouts), 1 FROM stats_mark;

-- name: StatsPending
SELECT folded, (SELECT COALESCE(MAX(id), 0) + 1 FROM payouts) FROM stats_mark;


-- An account's journal (sqlstore's queries.sql), its payouts read from the
-- faucet's two levels, each of the copy's found by id for its transfer.
-- name: TransactionList
WITH RECURSIVE {{FaucetPayoutBlocks}}
SELECT * FROM (
  SELECT t.id, t.kind, t.coin, -t.amount AS amount, CAST(0 AS BIGINT) AS payout_id, t.created_at FROM transfers t
  WHERE t.from_account = $1 AND t.kind <> 'payout' AND t.coin = $2
  ORDER BY t.created_at DESC, t.id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT))
UNION ALL
SELECT * FROM (
  SELECT t.id, t.kind, t.coin, t.amount, CAST(0 AS BIGINT), t.created_at FROM transfers t
  WHERE t.to_account = $1 AND t.kind <> 'payout' AND t.coin = $2
  ORDER BY t.created_at DESC, t.id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT))
UNION ALL
SELECT * FROM (
  SELECT p.transfer_id, 'payout', c.coin, -p.amount, c.payout_id, c.created_at FROM payouts_by_faucet c CROSS JOIN payouts p
  WHERE c.faucet_id = (SELECT f.id FROM faucets f WHERE f.account_id = $1) AND c.coin = $2 AND p.id = c.payout_id
  ORDER BY c.created_at DESC, p.transfer_id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT))
UNION ALL
SELECT * FROM (
  SELECT p.transfer_id, 'payout', p.coin, -p.amount, p.id, p.created_at FROM pblocks b CROSS JOIN payouts p
  WHERE p.id >> 8 = +b.n AND p.faucet_id = (SELECT f.id FROM faucets f WHERE f.account_id = $1) AND p.coin = $2
  ORDER BY p.created_at DESC, p.transfer_id DESC LIMIT CAST($3 AS BIGINT) + CAST($4 AS BIGINT))
ORDER BY 6 DESC, 1 DESC LIMIT $3 OFFSET $4;

-- name: TransactionCount
WITH RECURSIVE {{FaucetPayoutBlocks}}
SELECT (SELECT COUNT(*) FROM transfers WHERE from_account = $1 AND kind <> 'payout' AND coin = $2)
  + (SELECT COUNT(*) FROM transfers WHERE to_account = $1 AND kind <> 'payout' AND coin = $2)
  + (SELECT COUNT(*) FROM payouts_by_faucet WHERE faucet_id = (SELECT f.id FROM faucets f WHERE f.account_id = $1) AND coin = $2)
  + (SELECT COUNT(*) FROM pblocks b CROSS JOIN payouts p
     WHERE p.id >> 8 = +b.n AND p.faucet_id = (SELECT f.id FROM faucets f WHERE f.account_id = $1) AND p.coin = $2);

-- The copy's part of a search filters on the recipient and the referral
-- from the payout row, which CROSS JOIN finds by rowid for each of the
-- copy's rows in order, so the search still stops at its limit.
-- name: PayoutSearch
WITH RECURSIVE {{FaucetPayoutBlocks}}
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at, u.payout_user_hash
FROM payouts p JOIN users u ON u.id = p.recipient_id
WHERE p.id IN (
  SELECT x.id FROM coins c JOIN payouts x ON x.id IN (
    SELECT q.payout_id FROM payouts_by_faucet q CROSS JOIN payouts r
    WHERE q.faucet_id = $1 AND q.coin = c.symbol AND r.id = q.payout_id AND ($3 = 0 OR r.recipient_id = $3)
      AND ($4 = '' OR r.referral = $4)
      AND (q.created_at, q.payout_id) < ({{PayoutSearchAfter}})
    ORDER BY q.created_at DESC, q.payout_id DESC LIMIT $6)
  WHERE $2 = '' OR c.symbol = $2
  UNION ALL
  SELECT * FROM (SELECT q.id FROM pblocks b CROSS JOIN payouts q
    WHERE q.id >> 8 = +b.n AND q.faucet_id = $1 AND ($2 = '' OR q.coin = $2) AND ($3 = 0 OR q.recipient_id = $3)
      AND ($4 = '' OR q.referral = $4)
      AND (q.created_at, q.id) < ({{PayoutSearchAfter}})
    ORDER BY q.created_at DESC, q.id DESC LIMIT $6))
ORDER BY p.created_at DESC, p.id DESC LIMIT $6;

-- PayoutSearch of one recipient's payouts from the faucet, from the two
-- levels by recipient (D71) as a wallet's page reads them: the copy's
-- range and each recent block's, from the cursor, merged by IN.
-- name: PayoutSearchByRecipient
WITH RECURSIVE {{PayoutBlocksRecent}}
SELECT p.id, p.faucet_id, p.recipient_id, p.to_given, p.coin, p.amount, p.ip_address, p.referral, p.created_at, u.payout_user_hash
FROM payouts p JOIN users u ON u.id = p.recipient_id
WHERE p.id IN (
  SELECT * FROM (SELECT c.payout_id FROM payouts_by_recipient c CROSS JOIN payouts r
    WHERE c.faucet_id = $1 AND c.recipient_id = $3 AND ($2 = '' OR c.coin = $2)
      AND (c.created_at, c.payout_id) < ({{PayoutSearchAfter}})
      AND r.id = c.payout_id AND ($4 = '' OR r.referral = $4)
    ORDER BY c.created_at DESC, c.payout_id DESC LIMIT $6)
  UNION ALL
  SELECT * FROM (SELECT q.id FROM blocks b CROSS JOIN payouts q
    WHERE q.id >> 16 = +b.n AND q.recipient_id = $3 AND q.faucet_id = $1 AND ($2 = '' OR q.coin = $2)
      AND ($4 = '' OR q.referral = $4) AND (q.created_at, q.id) < ({{PayoutSearchAfter}})
    ORDER BY q.created_at DESC, q.id DESC LIMIT $6))
ORDER BY p.created_at DESC, p.id DESC LIMIT $6;

-- The faucet's events, newest first, from both levels.
-- name: EventList
WITH RECURSIVE {{FaucetEventBlocks}}
SELECT id, faucet_id, type, data, created_at FROM events WHERE seq IN (
  SELECT * FROM (SELECT seq FROM events_by_faucet WHERE faucet_id = $1 ORDER BY seq DESC LIMIT $2)
  UNION ALL
  SELECT * FROM (SELECT e.seq FROM eblocks b CROSS JOIN events e WHERE e.seq >> 8 = +b.n AND e.faucet_id = $1
    ORDER BY e.seq DESC LIMIT $2))
ORDER BY seq DESC LIMIT $2;

-- The copies against the payouts and the events (D3, D72): every payout
-- or event of a block below its watermark has its row in the copy, a copy
-- holds none of a block from the watermark on (which reads take from the
-- recent blocks: it would be read twice), and every row agrees with its
-- payout or event. An event missing from the copy would be missing from
-- its faucet's feed.
-- name: ReconcileEventsByFaucet
SELECT e.seq FROM events e
WHERE e.seq >> 8 < (SELECT events_done FROM faucet_blocks) AND NOT EXISTS (
  SELECT 1 FROM events_by_faucet c WHERE c.faucet_id = e.faucet_id AND c.seq = e.seq)
UNION
SELECT c.seq FROM events_by_faucet c LEFT JOIN events e ON e.seq = c.seq
WHERE e.seq IS NULL OR c.seq >> 8 >= (SELECT events_done FROM faucet_blocks) OR e.faucet_id <> c.faucet_id
ORDER BY 1;

-- name: ReconcilePayoutsByFaucet
SELECT p.id FROM payouts p
WHERE p.id >> 8 < (SELECT payouts_done FROM faucet_blocks) AND NOT EXISTS (
  SELECT 1 FROM payouts_by_faucet c WHERE c.faucet_id = p.faucet_id AND c.coin = p.coin
    AND c.created_at = p.created_at AND c.payout_id = p.id)
UNION
SELECT c.payout_id FROM payouts_by_faucet c LEFT JOIN payouts p ON p.id = c.payout_id
WHERE p.id IS NULL OR c.payout_id >> 8 >= (SELECT payouts_done FROM faucet_blocks)
   OR p.faucet_id <> c.faucet_id OR p.coin <> c.coin OR p.created_at <> c.created_at
ORDER BY 1;

-- drip bench's bulk load (store.BulkLoader) stores payouts as a database
-- that has long held them has them: in the copy, below the watermark
-- (D71). It copies every payout of a block from the watermark on (the
-- ones already copied are kept) and moves the watermark to the last block.
-- name: PayoutBulkLoadByRecipient
INSERT OR IGNORE INTO payouts_by_recipient (faucet_id, recipient_id, created_at, payout_id, coin, amount)
SELECT faucet_id, recipient_id, created_at, id, coin, amount FROM payouts
WHERE id >> 16 >= (SELECT done FROM payout_blocks)
ORDER BY faucet_id, recipient_id, created_at, id;

-- name: PayoutBulkLoadWatermark
UPDATE payout_blocks SET done = (SELECT COALESCE(MAX(id), 0) >> 16 FROM payouts);

-- And in the copy by faucet (D72): every block from its watermark to the
-- one before the last, the watermark moved to the last.
-- name: PayoutBulkLoadByFaucet
INSERT INTO payouts_by_faucet (faucet_id, coin, created_at, payout_id)
SELECT faucet_id, coin, created_at, id FROM payouts
WHERE id >> 8 >= (SELECT payouts_done FROM faucet_blocks) AND id >> 8 < (SELECT COALESCE(MAX(id), 0) >> 8 FROM payouts)
ORDER BY faucet_id, coin, created_at, id;

-- name: PayoutBulkLoadFaucetWatermark
UPDATE faucet_blocks SET payouts_done = (SELECT COALESCE(MAX(id), 0) >> 8 FROM payouts);
