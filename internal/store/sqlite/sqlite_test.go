package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to inspect the file directly

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestSQLite runs the shared store suite on SQLite, which is always tested (D31).
func TestSQLite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, storetest.OpenSQLite)
}

func open(t *testing.T, path string) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("sqlite.Open(%s): %v", path, err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// credit adds amount of BTC to account (a user account, or a new one when
// account is 0) and returns the account.
func credit(t *testing.T, st store.Store, account, amount int64) int64 {
	t.Helper()
	ctx := context.Background()
	err := st.Transact(ctx, func(tx store.Tx) error {
		var err error
		if account == 0 {
			if account, err = tx.AccountCreate(ctx, "user", time.Now()); err != nil {
				return err
			}
		}
		if _, err := tx.BalanceCredit(ctx, drip.AccountDeposits, "BTC", -amount); err != nil {
			return err
		}
		if _, err := tx.BalanceCredit(ctx, account, "BTC", amount); err != nil {
			return err
		}
		_, err = tx.TransferInsert(ctx, &store.Transfer{Coin: "BTC", From: drip.AccountDeposits, To: account,
			Amount: amount, Kind: "deposit", CreatedAt: time.Now()})
		return err
	})
	if err != nil {
		t.Fatalf("credit: %v", err)
	}
	return account
}

func balance(t *testing.T, st store.Store, account int64) int64 {
	t.Helper()
	b, err := st.BalanceGet(context.Background(), account, "BTC")
	if err != nil {
		t.Fatalf("BalanceGet: %v", err)
	}
	return b
}

// TestSecondOpenWhileFirstIsOpen is an admin command (drip admin ...) run
// against the file while drip serve has it open (D30): the second Open
// migrates nothing, and each process sees the other's commits, even while
// both write at once.
func TestSecondOpenWhileFirstIsOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "drip.db")
	serve := open(t, path)
	account := credit(t, serve, 0, 100)

	admin := open(t, path)
	if got := balance(t, admin, account); got != 100 {
		t.Errorf("admin reads the balance serve wrote as %d, want 100", got)
	}
	credit(t, admin, account, 5)
	if got := balance(t, serve, account); got != 105 {
		t.Errorf("serve reads the balance admin wrote as %d, want 105", got)
	}

	// Both write at the same time: the busy timeout and Transact's retries
	// make them take turns instead of failing.
	const each = 20
	var wg sync.WaitGroup
	for _, st := range []store.Store{serve, admin} {
		for i := 0; i < each; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := st.Transact(context.Background(), func(tx store.Tx) error {
					_, err := tx.BalanceDebit(context.Background(), account, "BTC", 2)
					return err
				})
				if err != nil {
					t.Errorf("concurrent debit through two opens: %v", err)
				}
			}()
		}
	}
	wg.Wait()
	if got := balance(t, serve, account); got != 105-2*2*each {
		t.Errorf("balance after %d debits of 2 through two opens = %d, want %d", 2*each, got, 105-2*2*each)
	}
}

// TestReopenKeepsData: closing and opening the file again keeps every
// committed write and applies no migration twice.
func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "drip.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	account := credit(t, st, 0, 77)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := open(t, path)
	if got := balance(t, again, account); got != 77 {
		t.Errorf("balance after reopening = %d, want 77", got)
	}
	coins, err := again.CoinList(context.Background())
	if err != nil || len(coins) != 12 {
		t.Errorf("CoinList after reopening = %d coins, %v; want the 12 seeded", len(coins), err)
	}
}

// TestWALAndForeignKeys checks the pragmas of D30 on the file itself: the
// store interface does not expose them, so the test asks SQLite directly,
// on a connection of its own, while the store has the file open.
func TestWALAndForeignKeys(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "drip.db")
	st := open(t, path)
	credit(t, st, 0, 1)

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatalf("PRAGMA journal_mode: %v", err)
	}
	// WAL is a property of the file: readers do not block the writer.
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want \"wal\"", mode)
	}

	// Foreign keys are per connection, so they are checked through the
	// store: a balance of an account that does not exist is refused.
	err = st.Transact(context.Background(), func(tx store.Tx) error {
		_, err := tx.BalanceCredit(context.Background(), 424242, "BTC", 1)
		return err
	})
	if err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("BalanceCredit to a missing account: err = %v, want a foreign key error", err)
	}
}

// The checkpointer copies committed pages from the log into the database
// file while the store runs, well before the writer's own checkpoint at
// 4,000 pages: a copy of the database file alone, without its log, holds
// a transfer committed a moment before.
func TestCheckpointerCopiesTheLogInTheBackground(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "drip.db")
	st := open(t, path)
	account := credit(t, st, 0, 12345)
	copyPath := filepath.Join(dir, "copy.db")
	deadline := time.Now().Add(5 * time.Second)
	for {
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copyPath, body, 0o600); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+copyPath+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var amount int64
		err = db.QueryRow("SELECT amount FROM balances WHERE account_id = ? AND coin = 'BTC'", account).Scan(&amount)
		db.Close()
		if err == nil && amount == 12345 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the commit, the database file without its log holds %d (err %v), want 12345", amount, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkListLimit: a page read whose LIMIT is a parameter (a /payouts
// page of 100 from an empty faucet, so the statement's cost is what is
// measured). Rebind writes the parameter so that SQLite does not prepare
// the statement again at every binding.
func BenchmarkListLimit(b *testing.B) {
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "drip.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.PayoutList(ctx, &store.PayoutListParams{FaucetID: 1, Limit: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPayoutRecordsUnkeyed checks migration 0025 on the file (D64): payouts
// and events name their faucet, recipient and transfer without a foreign
// key, the journal keeps its keys, the edited schema passes SQLite's
// integrity check, and the database refuses to delete the faucets and
// users those rows name. (That the writer's own connection stopped
// checking the keys is storetest's ReconcileFindsAPayoutNamingNobody.)
func TestPayoutRecordsUnkeyed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "drip.db")
	st := open(t, path)
	ctx := context.Background()
	err := st.Transact(ctx, func(tx store.Tx) error { // a user and a faucet to delete
		now := time.Now()
		acct, err := tx.AccountCreate(ctx, "user", now)
		if err != nil {
			return err
		}
		owner, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: "owner",
			Email: "owner@example.com", EmailVerified: true, CreatedAt: now})
		if err != nil {
			return err
		}
		if acct, err = tx.AccountCreate(ctx, "faucet", now); err != nil {
			return err
		}
		_, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{OwnerID: owner, AccountID: acct, Name: "Faucet",
			Domain: "faucet.example.com", URL: "https://faucet.example.com/", APIKeyHash: "key",
			Rules: drip.DefaultRules, CreatedAt: now})
		return err
	})
	if err != nil {
		t.Fatalf("a user and a faucet: %v", err)
	}

	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatalf("sql.Open: %v", err)
	}
	defer db.Close()
	for table, want := range map[string]string{
		"payouts":   "",
		"events":    "",
		"transfers": "coin -> coins, from_account -> accounts, to_account -> accounts",
	} {
		var got string
		err := db.QueryRow(`SELECT coalesce(group_concat("from" || ' -> ' || "table", ', ' ORDER BY "from"), '')
			FROM pragma_foreign_key_list(?)`, table).Scan(&got)
		if err != nil || got != want {
			t.Errorf("foreign keys of %s = %q, %v; want %q", table, got, err, want)
		}
	}
	var columns int
	if err := db.QueryRow("SELECT count(*) FROM pragma_table_info('payouts')").Scan(&columns); err != nil || columns != 10 {
		t.Errorf("payouts has %d columns (%v), want its 10 kept by the edit", columns, err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check = %q, %v; want ok", check, err)
	}

	// A transfer between accounts that do not exist is still refused.
	err = st.Transact(ctx, func(tx store.Tx) error {
		_, err := tx.TransferInsert(ctx, &store.Transfer{Coin: "BTC", From: drip.AccountDeposits,
			To: 424242, Amount: 1, Kind: "deposit", CreatedAt: time.Now()})
		return err
	})
	if err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("a transfer to a missing account: err = %v, want the journal's foreign key error", err)
	}
	for _, stmt := range []string{"DELETE FROM faucets", "DELETE FROM users"} {
		if _, err := db.Exec(stmt); err == nil || !strings.Contains(err.Error(), "never deleted") {
			t.Errorf("%s: err = %v, want the database to refuse it", stmt, err)
		}
	}
}

// TestStatisticsReconciled: reconcile names the faucet of each kind of
// wrong sum, and a rebuild mends them (D73; storetest.StatsReconciled).
func TestStatisticsReconciled(t *testing.T) {
	t.Parallel()
	st, path := storetest.OpenSQLitePath(t)
	storetest.StatsReconciled(t, st, rawExec(t, path))
}

// TestStatisticsCountedOnUpgrade: migration 0034 counts the recipients
// of the sums folded before it, and the folds after it count theirs
// (D73; storetest.StatsCountedOnUpgrade).
func TestStatisticsCountedOnUpgrade(t *testing.T) {
	t.Parallel()
	st, path := storetest.OpenSQLitePath(t)
	storetest.StatsCountedOnUpgrade(t, st, []string{
		`DROP TRIGGER stats_users_counted`, `DROP TABLE stats_user_counts`,
		`DELETE FROM schema_migrations WHERE version = 34`,
	}, rawExec(t, path), false)
}

// BenchmarkStatsUsers: storetest.BenchStatsUsers on SQLite.
func BenchmarkStatsUsers(b *testing.B) {
	storetest.BenchStatsUsers(b, func(b *testing.B) (store.Store, func(query string) int64) {
		st, path := storetest.OpenSQLitePath(b)
		return st, rawExec(b, path)
	})
}

// rawExec runs a statement on a connection of its own to the database at
// path, beside the store's, and returns how many rows it changed.
func rawExec(t testing.TB, path string) func(query string) int64 {
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return func(query string) int64 {
		t.Helper()
		res, err := raw.Exec(query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}
