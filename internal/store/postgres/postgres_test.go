package postgres_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/postgres"
	"github.com/dripfaucet/drip/internal/store/sqlstore"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

func requirePostgres(t *testing.T) {
	t.Helper()
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("%s is not set: skipping the PostgreSQL store tests (D31)", storetest.PostgresEnv)
	}
}

// TestPostgres runs the shared store suite on PostgreSQL (D30, D31).
func TestPostgres(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	storetest.Run(t, storetest.OpenPostgres)
}

// TestTwoNodesShareOneDatabase is scale-out (D31): two processes open the
// same database; the second start migrates nothing, each sees the other's
// commits, and debits racing through both never overdraw.
func TestTwoNodesShareOneDatabase(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	first, second := twoNodes(t)

	account := fundedAccounts(t, first, "user", 1, 200)[0]
	if b, err := second.BalanceGet(ctx, account, "BTC"); err != nil || b != 200 {
		t.Fatalf("second node reads %d, %v; want 200", b, err)
	}

	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for i := 0; i < 32; i++ {
		st := first
		if i%2 == 1 {
			st = second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := st.Transact(ctx, func(tx store.Tx) error {
				_, err := tx.BalanceDebit(ctx, account, "BTC", 10)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, store.ErrInsufficientFunds):
				t.Errorf("debit: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 20 {
		t.Errorf("%d of 32 debits of 10 from 200 through two nodes succeeded, want 20", ok)
	}
	for name, st := range map[string]store.Store{"first": first, "second": second} {
		if b, err := st.BalanceGet(ctx, account, "BTC"); err != nil || b != 0 {
			t.Errorf("%s node reads the final balance as %d, %v; want 0", name, b, err)
		}
	}
}

// fundedAccounts creates n accounts of kind through st, each credited
// amount BTC from deposits, in one transaction.
func fundedAccounts(t *testing.T, st store.Store, kind string, n int, amount int64) []int64 {
	t.Helper()
	ctx := context.Background()
	accounts := make([]int64, n)
	err := st.Transact(ctx, func(tx store.Tx) error {
		for i := range accounts {
			var err error
			if accounts[i], err = tx.AccountCreate(ctx, kind, time.Now()); err != nil {
				return err
			}
			if _, err := tx.BalanceCredit(ctx, drip.AccountDeposits, "BTC", -amount); err != nil {
				return err
			}
			if _, err := tx.BalanceCredit(ctx, accounts[i], "BTC", amount); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("fund %d %s accounts: %v", n, kind, err)
	}
	return accounts
}

// twoNodes opens one new database from two processes' stores, as two
// nodes of drip would (D31); the second is closed before the schema is
// dropped.
func twoNodes(t *testing.T) (first, second store.Store) {
	t.Helper()
	first, url := storetest.OpenPostgresURL(t)
	second, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("second postgres.Open: %v", err)
	}
	t.Cleanup(func() { second.Close() })
	return first, second
}

// TestBatchesLockInOneOrderAcrossNodes: batches on two nodes, each
// locking and debiting several balances named in its own order, never
// deadlock and never lose a debit. PayoutsOpen sorts the balances, and the
// set form locks them in that order (BalancesLockRows, D5); a batch that
// locked in the order it was given would meet another in the opposite one
// (SQLSTATE 40P01), which Transact reruns: the test fails on any rerun.
func TestBatchesLockInOneOrderAcrossNodes(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	first, second := twoNodes(t)

	var reruns reruns
	for _, st := range []store.Store{first, second} {
		st.(store.Observable).Observe(&reruns)
	}

	const funds = 10_000
	accounts := fundedAccounts(t, first, "faucet", 6, funds)

	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken = map[int64]int64{}
	)
	const workers, rounds = 16, 6
	for w := range workers {
		st := []store.Store{first, second}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				// Four of the six balances, in an order of this worker and
				// round: w+i rotates them, odd workers walk them backwards.
				var keys []store.BalanceKey
				for j := range 4 {
					k := (w + i + j) % len(accounts)
					if w%2 == 1 {
						k = len(accounts) - 1 - k
					}
					keys = append(keys, store.BalanceKey{Account: accounts[k], Coin: "BTC"})
				}
				err := st.Transact(ctx, func(tx store.Tx) error {
					if _, err := tx.PayoutsOpen(ctx, &store.PayoutsOpenParams{Balances: keys}); err != nil {
						return err
					}
					// Another node's batches queue on these rows meanwhile.
					time.Sleep(time.Millisecond)
					debits := map[store.BalanceKey]int64{}
					for _, k := range keys {
						debits[k] = 1
					}
					return tx.PayoutsInsert(ctx, &store.PayoutBatch{Debits: debits, CreatedAt: time.Now()})
				})
				mu.Lock()
				if err != nil {
					t.Errorf("worker %d, batch %d: %v", w, i, err)
				} else {
					for _, k := range keys {
						taken[k.Account]++
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var total int64
	for _, a := range accounts {
		total += taken[a]
		if b, err := second.BalanceGet(ctx, a, "BTC"); err != nil || b != funds-taken[a] {
			t.Errorf("account %d holds %d, %v; want %d, %d debits of 1 taken", a, b, err, funds-taken[a], taken[a])
		}
	}
	if total != workers*rounds*4 {
		t.Errorf("%d debits taken, want %d", total, workers*rounds*4)
	}
	if n := reruns.n.Load(); n > 0 {
		t.Errorf("%d transactions ran again after a conflict (a deadlock); want none", n)
	}
}

// reruns counts the transactions that ran more than once (store.Observer).
type reruns struct{ n atomic.Int64 }

func (r *reruns) Transacted(_ time.Duration, attempts int, _ error) {
	if attempts > 1 {
		r.n.Add(1)
	}
}

// TestNamedRowsAreNeverDeleted: payouts and events name faucets and users,
// and idempotency rows name payouts, without a foreign key (D64), so the
// database refuses to delete them (or to empty the journal), and a
// reference right when written stays right.
func TestNamedRowsAreNeverDeleted(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	conn := connect(t)
	for _, sql := range []string{
		"DELETE FROM faucets", "DELETE FROM users WHERE id = 1", "TRUNCATE faucets CASCADE",
		"TRUNCATE users CASCADE", "TRUNCATE transfers CASCADE", "DELETE FROM payouts", "TRUNCATE payouts CASCADE",
		"DELETE FROM accounts WHERE id = 1", "TRUNCATE accounts CASCADE", "DELETE FROM coins", "TRUNCATE coins CASCADE",
	} {
		_, err := conn.Exec(ctx, sql)
		if err == nil || !strings.Contains(err.Error(), "never deleted") {
			t.Errorf("%s: err = %v, want the database to refuse it", sql, err)
		}
	}
}

// A transaction's BEGIN goes out with its first statement (postgres.tx).
// When that BEGIN fails, nothing more is sent on the connection: a later
// statement would run outside any transaction and commit alone.
func TestNothingRunsAfterAFailedBegin(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	st, _ := storetest.OpenPostgresURL(t)
	var account int64
	err := st.Transact(ctx, func(tx store.Tx) error {
		var err error
		account, err = tx.AccountCreate(ctx, "user", time.Now())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Transact(ctx, func(tx store.Tx) error {
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := tx.BalanceCredit(canceled, account, "BTC", 5); err == nil {
			t.Error("a statement with a canceled context ran")
		}
		_, err := tx.BalanceCredit(ctx, account, "BTC", 7) // a caller that carries on
		return err
	})
	if err == nil {
		t.Error("the transaction whose BEGIN failed committed")
	}
	if got, err := st.BalanceGet(ctx, account, "BTC"); err != nil && !errors.Is(err, store.ErrNotFound) || got != 0 {
		t.Errorf("balance after the failed transaction = %d (err %v), want 0: a statement ran outside it", got, err)
	}
}

// The journal's references are checked per statement (migration 0018):
// the database refuses a transfer of an unknown coin or between unknown
// accounts, alone or among good rows, with foreign_key_violation.
func TestJournalRefusesUnknownCoinsAndAccounts(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	conn := connect(t)
	const insert = `INSERT INTO transfers (coin, from_account, to_account, amount, kind, created_at) VALUES `
	for _, rows := range []string{
		"('XXX', 1, 2, 5, 'deposit', 0)",
		"('BTC', 1, 999999, 5, 'deposit', 0)",
		"('BTC', 999999, 2, 5, 'deposit', 0)",
		"('BTC', 1, 2, 5, 'deposit', 0), ('BTC', 1, 999999, 5, 'deposit', 0)",
	} {
		_, err := conn.Exec(ctx, insert+rows)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "23503" {
			t.Errorf("insert %s: err = %v, want foreign_key_violation", rows, err)
		}
	}
	if _, err := conn.Exec(ctx, insert+"('BTC', 1, 2, 5, 'deposit', 0)"); err != nil {
		t.Errorf("a transfer between known accounts: %v", err)
	}
}

// connect opens a connection of its own to a fresh drip schema, to run
// what drip never would.
func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	_, conn := storetest.OpenPostgresConn(t)
	return conn
}

// TestSetFormsSearchTheirIndex: the statements of a batch that go as one
// statement over its rows (IdempotencyBoundRows, the send-limit windows,
// the locks and the debits) search, for each row, the index made for
// them, under the generic plan PostgreSQL keeps for a prepared statement,
// on tables not yet analyzed.
// Where the planner saw payouts_faucet_time (dropped since, D68) as just
// as good, every per-recipient window read all its faucet's payouts
// since its start (see queries.sql).
func TestSetFormsSearchTheirIndex(t *testing.T) {
	requirePostgres(t)
	plan := genericPlans(t, connect(t))
	plans := map[string]string{}
	for name, c := range map[string]struct{ args, table, index string }{
		"PayoutWindowsRecipientRows": {"'{0}', '{1}', '{0}', '{BTC}', '{2}'", "payouts", "payouts_faucet_recipient"},
		"PayoutWindowsIPRows":        {"'{0}', '{1}', '{0}', '{BTC}', '{198.51.100.1}'", "payouts", "payouts_faucet_ip"},
		"IdempotencyBoundRows":       {"'{1}', '{k}'", "idempotency_keys", "idempotency_keys_pkey"},
		"FaucetsLockRows":            {"'{1}'", "faucets", "faucets_pkey"},
		"BalancesLockRows":           {"'{1}', '{BTC}'", "balances", "balances_pkey"},
	} {
		joined := plan(name, c.args)
		plans[name] = joined
		if strings.Count(joined, " on "+c.table+" ") != 1 ||
			!regexp.MustCompile(`Index (Only )?Scan using `+c.index+` on `+c.table+` `).MatchString(joined) {
			t.Errorf("%s: plan\n%s\nwant one index scan of %s, using %s", name, joined, c.table, c.index)
		}
	}
	// The locks are taken in the rows' order, the batch's lock order (D5):
	// the arrays are the nested loop's outer side, each row's subquery
	// locking its row.
	for _, name := range []string{"FaucetsLockRows", "BalancesLockRows"} {
		joined := plans[name]
		if fn, lock := strings.Index(joined, "Function Scan"), strings.Index(joined, "LockRows"); !strings.HasPrefix(joined, "Nested Loop") || fn < 0 || lock < fn {
			t.Errorf("%s: plan\n%s\nwant a nested loop over the rows, locking each in the subquery", name, joined)
		}
	}
	// The debits find each balance by the primary key, then update the row
	// version found (its ctid), never a scan of balances.
	joined := plan("BalancesDebitRows", "'{1}', '{BTC}', '{5}'")
	if !strings.Contains(joined, "Index Scan using balances_pkey on balances") || !strings.Contains(joined, "Tid Scan on balances") ||
		strings.Contains(joined, "Seq Scan") {
		t.Errorf("BalancesDebitRows: plan\n%s\nwant a search of balances_pkey a row, and the update by the row's ctid", joined)
	}
}

// TestFaucetReadsSearchByCoin: the reads of a faucet's payouts in every
// coin (D68) search payouts_faucet_coin_time, one coin at a time, under
// the generic plan of a prepared statement, on tables not yet analyzed:
// no index orders a faucet's payouts by time alone, and a search by
// faucet alone would read all its payouts, in every coin, since the first.
func TestFaucetReadsSearchByCoin(t *testing.T) {
	requirePostgres(t)
	plan := genericPlans(t, connect(t))
	byCoin := regexp.MustCompile(`Index (Only )?Scan (Backward )?using payouts_faucet_coin_time on payouts\b.*\n\s+Index Cond: \(\(faucet_id = \$1\) AND \(coin = c\.symbol\)`)
	for name, args := range map[string]string{
		"PayoutList":         "1, 50",
		"PayoutWindowFaucet": "1, 0, ''",
		"StatsDaily":         "1, 0",
		"PayoutSearch":       "1, '', 0, '', 7, 50",
	} {
		joined := plan(name, args)
		if !byCoin.MatchString(joined) || strings.Contains(joined, "Seq Scan on payouts") {
			t.Errorf("%s: plan\n%s\nwant a search of payouts_faucet_coin_time by faucet and coin", name, joined)
		}
		// The owner's list and its CSV export search from their cursor
		// (PayoutSearchAfter), not from the newest payout down to it.
		if name == "PayoutSearch" && !regexp.MustCompile(`Index Cond: \(\(faucet_id = \$1\) AND \(coin = c\.symbol\) AND \(ROW\(created_at, id\) < ROW\(`).MatchString(joined) {
			t.Errorf("%s: plan\n%s\nwant the search bounded by the cursor", name, joined)
		}
	}
}

// TestJournalReadsSearchTheirIndex: the reads D67 and D70 moved off the
// journal's indexes of payouts search the index that serves them, under
// the generic plan of a prepared statement, on tables not yet analyzed.
// A wallet's page reads one range of payouts_faucet_recipient per faucet;
// a faucet's journal reads transfers_from and transfers_to, whose
// condition on kind lets PostgreSQL use the indexes that hold no payouts,
// and the faucet's payouts in the coin from payouts_faucet_coin_time.
func TestJournalReadsSearchTheirIndex(t *testing.T) {
	requirePostgres(t)
	conn := connect(t)
	for _, index := range []string{"transfers_to", "transfers_from"} {
		var def string
		if err := conn.QueryRow(context.Background(), `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1`, index).Scan(&def); err != nil ||
			!strings.HasSuffix(def, "WHERE (kind <> 'payout'::text)") {
			t.Errorf("%s is %q, %v; want it to hold no payouts", index, def, err)
		}
	}
	plan := genericPlans(t, conn)
	for name, c := range map[string]struct {
		args    string
		indexes []string
	}{
		"PayoutListByRecipient": {"1, 2, '', 0, 100, 7, 50", []string{"payouts_faucet_recipient"}},
		"TransactionList":       {"1, 'BTC', 50, 0", []string{"transfers_from", "transfers_to", "payouts_faucet_coin_time"}},
		"TransactionCount":      {"1, 'BTC'", []string{"transfers_from", "transfers_to", "payouts_faucet_coin_time"}},
	} {
		joined := plan(name, c.args)
		for _, index := range c.indexes {
			if !regexp.MustCompile(`Index (Only )?Scan (Backward )?(using|on) ` + index + `\b`).MatchString(joined) {
				t.Errorf("%s: plan\n%s\nwant a search of %s", name, joined, index)
			}
		}
		if strings.Contains(joined, "Seq Scan on transfers") || strings.Contains(joined, "Seq Scan on payouts") {
			t.Errorf("%s: plan\n%s\nwant no scan of the journal or the payouts", name, joined)
		}
		// A page of the journal reads the faucet's payouts newest first
		// from their index, up to the page's end (D70). Without a limit
		// on each part, the generic plan read them forwards and sorted
		// them all, for every page: 0.7-1.0 s on a faucet of 2M payouts
		// (BENCHMARKS.md, round twenty).
		if name == "TransactionList" && !strings.Contains(joined, "Index Scan Backward using payouts_faucet_coin_time") {
			t.Errorf("%s: plan\n%s\nwant the faucet's payouts read backwards from their index", name, joined)
		}
	}
}

// genericPlans returns plan: the plan PostgreSQL keeps for a statement of
// drip's, as PostgreSQL's driver runs it (sqlstore.QueryText), prepared on
// conn (a test's own, to a fresh schema whose tables are not yet
// analyzed) and executed with args (SQL literals), under the generic plan
// a prepared statement settles on.
func genericPlans(t *testing.T, conn *pgx.Conn) (plan func(name, args string) string) {
	t.Helper()
	return plans(t, conn, "force_generic_plan")
}

// plans is genericPlans under the plan_cache_mode given: force_custom_plan
// is the plan of a prepared statement's first executions. A statement is
// prepared once on conn, whatever the mode.
func plans(t *testing.T, conn *pgx.Conn, mode string) (plan func(name, args string) string) {
	t.Helper()
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	return func(name, args string) string {
		t.Helper()
		query, ok := sqlstore.QueryText(postgres.Overrides, name)
		if !ok {
			t.Fatalf("no queries.sql has a statement %s", name)
		}
		var prepared bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = lower($1))", name).Scan(&prepared); err != nil {
			t.Fatal(err)
		}
		if !prepared {
			if _, err := conn.Exec(ctx, "PREPARE "+name+" AS "+query); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		rows, err := conn.Query(ctx, "EXPLAIN EXECUTE "+name+"("+args+")")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return strings.Join(lines, "\n")
	}
}

// TestFanOutSearchesEndpointsOnceAFaucet: the webhook fan-out trigger
// (D50, migration 0028) looks a statement's faucets' endpoints up once a
// faucet, not once an event (which made a `hot` batch of 31 payouts search
// them 31 times for its one faucet). The shared suite checks the
// deliveries it makes (testWebhookFanOut).
func TestFanOutSearchesEndpointsOnceAFaucet(t *testing.T) {
	requirePostgres(t)
	t.Parallel()
	ctx := context.Background()
	conn := connect(t)
	// scans is how often webhook_endpoints has been read, once the
	// backend's counts have reached the shared statistics: forced at the
	// next idle moment, which comes before the next statement is read.
	scans := func() int64 {
		t.Helper()
		if _, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := conn.QueryRow(ctx, `SELECT seq_scan + coalesce(idx_scan, 0) FROM pg_stat_user_tables
			WHERE relid = 'webhook_endpoints'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct{ events, faucets int }{{40, 1}, {40, 4}, {1, 1}} {
		before := scans()
		if _, err := conn.Exec(ctx, `INSERT INTO events (id, faucet_id, type, data, created_at)
			SELECT 'evt_' || $1::int || '_' || $2::int || '_' || g, g % $2::int + 1, 'payout.sent', '{}', 0
			FROM generate_series(1, $1::int) g`, c.events, c.faucets); err != nil {
			t.Fatal(err)
		}
		if got := scans() - before; got != int64(c.faucets) {
			t.Errorf("%d events of %d faucets in one statement: webhook_endpoints read %d times, want %d (once a faucet)",
				c.events, c.faucets, got, c.faucets)
		}
	}
}

// TestPagesSearchFromTheirCursor: under a prepared statement's generic
// plan, on tables not yet analyzed, the pages listed newest first before a
// cursor search their index from the cursor, and the lists and counts of
// one endpoint or one merchant search theirs (as SQLite's test of the
// same name): written "($4 = 0 OR id < $4)", the cursor was a filter over
// everything newer than it.
func TestPagesSearchFromTheirCursor(t *testing.T) {
	requirePostgres(t)
	plan := genericPlans(t, connect(t))
	for name, c := range map[string]struct {
		args string
		want []string // each a regexp the plan must match
	}{
		"WebhookDeliveryList": {"1, 2, '', 7, 50", []string{
			`Index Scan Backward using outbox_endpoint on outbox d\b.*\n\s+Index Cond: \(\(endpoint_id = \$2\) AND \(id < CASE`}},
		"WebhookDeliveryCount": {"2", []string{`Index Scan on outbox_endpoint\b.*\n\s+Index Cond: \(endpoint_id = \$1\)`}},
		"CheckoutList": {"1, 0, 7, 50", []string{
			`Index Scan Backward using merchant_checkouts_merchant\b.*\n\s+Index Cond: \(\(merchant_id = \$1\) AND \(id < CASE`,
			`Index Scan Backward using merchant_checkouts_payer\b.*\n\s+Index Cond: \(\(payer_id = \$2\) AND \(id < CASE`}},
		"UserAddressOwners": {"'addr'", []string{`Scan on user_addresses_address\b.*\n\s+Index Cond: \(address = \$1\)`}},
		"AuditList":         {"1, 50, 7", []string{`Index Scan Backward using audit_log_faucet\b.*\n\s+Index Cond: \(\(faucet_id = \$1\) AND \(id < CASE`}},
		"OperatorLogList":   {"7, 50", []string{`Index Scan Backward using operator_log_pkey\b.*\n\s+Index Cond: \(id < CASE`}},
		"PayoutSearchByRecipient": {"1, '', 3, '', 7, 50", []string{
			`Index Scan Backward using payouts_faucet_recipient\b.*\n\s+Index Cond: \(\(faucet_id = \$1\) AND \(recipient_id = \$3\) AND \(created_at <= \$0\)\)`}},
	} {
		joined := plan(name, c.args)
		for _, w := range c.want {
			if !regexp.MustCompile(w).MatchString(joined) {
				t.Errorf("%s: plan\n%s\nwant %s", name, joined, w)
			}
		}
	}
}

// TestStatisticsReadSums: the statistics read the kept sums by their key
// and the payouts from the mark on by the payouts' key, under the generic
// plan, never a scan of payouts nor a search of a faucet's whole history
// (D73); a fold reads its range of payouts by the key too.
//
// The sums hold two faucets' 20,000 recipients, and the counts of
// recipients 5,000 faucets', analyzed, so that the planner weighs the rank
// against the key as it would on a real database: the users' page reads
// the first of the rank and looks the pending recipients up by the key,
// never every sum of the faucet's coin, and its count reads one count.
func TestStatisticsReadSums(t *testing.T) {
	requirePostgres(t)
	conn := connect(t)
	for _, q := range []string{
		`INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at)
		 SELECT 1 + i % 2, 'BTC', i, 1 + i % 7, 1000 + i % 997, i FROM generate_series(1, 20000) AS i`,
		`INSERT INTO stats_user_counts (faucet_id, coin, recipients) SELECT i, 'BTC', 1 FROM generate_series(3, 5000) AS i`,
		`ANALYZE stats_users`, `ANALYZE stats_user_counts`,
	} {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	plan := genericPlans(t, conn)
	for name, c := range map[string]struct {
		args string
		sums []string
		page bool // reads a page of the sums: never all of them
	}{
		"StatsDaily":      {"1, 0", []string{"stats_days_pkey"}, true},
		"StatsUsers":      {"1, 'BTC', 50, 0", []string{"Index Only Scan using stats_users_rank", "Index Scan using stats_users_pkey"}, true},
		"StatsUsersCount": {"1, 'BTC'", []string{"stats_user_counts_pkey", "stats_users_pkey"}, true},
		"StatsFoldUsers":  {"100", nil, false},
	} {
		joined := plan(name, c.args)
		missing := slices.ContainsFunc(c.sums, func(s string) bool { return !strings.Contains(joined, s) })
		if !strings.Contains(joined, "Index Scan on payouts_pkey") && !strings.Contains(joined, "Index Scan using payouts_pkey") ||
			strings.Contains(joined, "Seq Scan on payouts") || (c.page && sumsScanned.MatchString(joined)) || missing {
			t.Errorf("%s: plan\n%s\nwant the payouts from the mark by payouts_pkey, and the sums by %s", name, joined, strings.Join(c.sums, " and "))
		}
	}
}

// TestStatisticsFoldLooksUpDayUsers: a fold looks each payout's recipient
// up among its day's recipients by the key, under the plans the server
// runs (custom, then perhaps generic), never hashing every faucet's
// recipients of every day kept (D73). The planner chose that hash for
// tables not analyzed yet, and a fold's cost then grew with the days kept
// (BENCHMARKS.md, round thirty-four). The tables hold what made it choose
// so: 300,000 payouts and 30,000 recipients of days, not analyzed yet (as
// after drip bench's load, or before autovacuum's first look at a new
// deployment's), and the mark 768 ids from the last payout, where a
// folder that keeps up has it.
func TestStatisticsFoldLooksUpDayUsers(t *testing.T) {
	requirePostgres(t)
	conn := connect(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO payouts (id, faucet_id, recipient_id, transfer_id, to_given, coin, amount, ip_address, referral, created_at)
		 SELECT i, 1 + i % 2, i % 10000, i, '', 'BTC', 1000, '', '', (20000 + i / 10000) * 86400000000 FROM generate_series(1, 300000) AS i`,
		`INSERT INTO stats_day_users (faucet_id, day, coin, recipient_id)
		 SELECT 1 + i % 2, 20000 + i % 30, 'BTC', i FROM generate_series(1, 30000) AS i`,
		`UPDATE stats_mark SET folded = 300000 - 768`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		joined := plans(t, conn, mode)("StatsFoldDays", "300000")
		if strings.Contains(joined, "Seq Scan on stats_day_users") || !strings.Contains(joined, "using stats_day_users_pkey on stats_day_users") {
			t.Errorf("%s: plan\n%s\nwant each recipient looked up by stats_day_users_pkey, no scan of the days' recipients", mode, joined)
		}
	}
}

// sumsScanned is a plan's scan of the statistics' sums.
var sumsScanned = regexp.MustCompile(`Seq Scan on stats_(users|days|day_users|user_counts) `)

// TestStatisticsCountedOnUpgrade: migration 0033 counts the recipients
// of the sums folded before it, the folds after it count theirs, and the
// previous release's rebuild leaves the counts right (D73;
// storetest.StatsCountedOnUpgrade).
func TestStatisticsCountedOnUpgrade(t *testing.T) {
	requirePostgres(t)
	st, conn := storetest.OpenPostgresConn(t)
	storetest.StatsCountedOnUpgrade(t, st, undoCounts, execer(t, conn), true)
}

// undoCounts takes a database back to before migration 0033.
var undoCounts = []string{
	`DROP TRIGGER stats_users_counted ON stats_users`, `DROP FUNCTION stats_users_counted()`,
	`DROP TRIGGER stats_users_uncounted ON stats_users`, `DROP FUNCTION stats_users_uncounted()`,
	`DROP TABLE stats_user_counts`, `DELETE FROM schema_migrations WHERE version = 33`,
}

// TestMigrationCountsBesideAFold: migration 0033 counts the sums that a
// fold of the previous release, in progress while it runs, inserts: its
// triggers wait for the fold's transaction, and its count comes after
// them (D73).
func TestMigrationCountsBesideAFold(t *testing.T) {
	requirePostgres(t)
	st, conn := storetest.OpenPostgresConn(t)
	exec := execer(t, conn)
	for _, q := range undoCounts {
		exec(q)
	}
	ctx := context.Background()
	exec(`INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at) VALUES (1, 'BTC', 1, 1, 10, 0)`)
	// The fold in progress: sums inserted, not committed.
	fold, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer fold.Rollback(ctx)
	if _, err := fold.Exec(ctx, `INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at)
		VALUES (1, 'BTC', 2, 1, 10, 0), (1, 'BTC', 3, 1, 10, 0), (2, 'BTC', 4, 1, 10, 0)`); err != nil {
		t.Fatal(err)
	}
	migrated := make(chan error, 1)
	go func() { migrated <- st.Migrate(ctx) }()
	select {
	case err := <-migrated:
		t.Fatalf("Migrate returned (%v) while a fold's transaction held sums it inserted: want it to wait", err)
	case <-time.After(500 * time.Millisecond):
	}
	if err := fold.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	rows, err := conn.Query(ctx, `SELECT faucet_id || ':' || recipients FROM stats_user_counts ORDER BY faucet_id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1:3", "2:1"}; !slices.Equal(got, want) {
		t.Errorf("counts (faucet:recipients) %v after the migration, want %v: the fold's sums counted", got, want)
	}
}

// execer runs a statement on conn and returns how many rows it changed.
func execer(t testing.TB, conn *pgx.Conn) func(query string) int64 {
	return func(query string) int64 {
		t.Helper()
		tag, err := conn.Exec(context.Background(), query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return tag.RowsAffected()
	}
}

// BenchmarkStatsUsers: storetest.BenchStatsUsers on PostgreSQL.
func BenchmarkStatsUsers(b *testing.B) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		b.Skipf("%s is not set", storetest.PostgresEnv)
	}
	storetest.BenchStatsUsers(b, func(b *testing.B) (store.Store, func(query string) int64) {
		st, conn := storetest.OpenPostgresConn(b)
		return st, execer(b, conn)
	})
}

// TestStatisticsReconciled: reconcile names the faucet of each kind of
// wrong sum, and a rebuild mends them (D73; storetest.StatsReconciled).
func TestStatisticsReconciled(t *testing.T) {
	requirePostgres(t)
	st, conn := storetest.OpenPostgresConn(t)
	storetest.StatsReconciled(t, st, execer(t, conn))
}
