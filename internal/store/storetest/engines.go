// Package storetest opens throwaway stores on each engine for tests, and
// holds the suite every engine must pass (Run). SQLite runs always;
// PostgreSQL runs when DRIP_TEST_POSTGRES_URL is set, each store in a schema
// of its own so concurrent test runs never collide (D31).
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/postgres"
	"github.com/dripfaucet/drip/internal/store/sqlite"
)

// PostgresEnv names the variable holding the PostgreSQL URL for tests.
const PostgresEnv = "DRIP_TEST_POSTGRES_URL"

// Engine opens fresh, migrated stores of one engine.
type Engine struct {
	Name string
	Open func(t testing.TB) store.Store
}

// Engines returns SQLite, and PostgreSQL when PostgresEnv is set (saying in
// the test log when it is not, so a skipped engine is never silent).
func Engines(t testing.TB) []Engine {
	engines := []Engine{{Name: "sqlite", Open: OpenSQLite}}
	if os.Getenv(PostgresEnv) != "" {
		engines = append(engines, Engine{Name: "postgres", Open: OpenPostgres})
	} else {
		t.Logf("%s is not set: PostgreSQL is not tested in this run", PostgresEnv)
	}
	return engines
}

// OpenSQLite opens a store in a new file under t.TempDir.
func OpenSQLite(t testing.TB) store.Store {
	t.Helper()
	st, _ := OpenSQLitePath(t)
	return st
}

// OpenSQLitePath is OpenSQLite, with the database file's path, for a test
// that edits the file as only a bug or a hand could.
func OpenSQLitePath(t testing.TB) (store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "drip.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// OpenPostgres opens a store in a new schema of the PostgresEnv database,
// dropped when the test ends; it skips the test when PostgresEnv is unset.
func OpenPostgres(t testing.TB) store.Store {
	t.Helper()
	st, _ := OpenPostgresURL(t)
	return st
}

// OpenPostgresConn is OpenPostgres with a connection of the test's own to
// the new schema, closed when the test ends: to run or read what the
// store's interface does not (a plan, a column no method returns).
func OpenPostgresConn(t testing.TB) (store.Store, *pgx.Conn) {
	t.Helper()
	st, u := OpenPostgresURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatalf("connect to the test's schema: %v", err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return st, conn
}

// OpenPostgresURL is OpenPostgres that also returns the URL of the new
// schema, so a test can point a second process at the same database.
func OpenPostgresURL(t testing.TB) (store.Store, string) {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skipf("%s is not set: skipping a PostgreSQL test", PostgresEnv)
	}
	ctx := context.Background()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "drip_test_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect %s: %v", PostgresEnv, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", PostgresEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(ctx, u.String())
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() {
		st.Close()
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return st, u.String()
}
