package store_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to read the schema back

	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// schema is what the migrations of an engine leave: each table's columns,
// and each index the migrations create (not those the engines make for a
// primary key or a UNIQUE constraint), with its table and columns.
type schema struct {
	Tables  map[string][]string
	Indexes map[string]string // name -> "table(col, col)"
}

// TestMigrationsAgree: both engines' migrations (D30: numbered SQL files
// per engine) produce the same tables, columns and indexes, so that no
// query or rule holds on one engine only. Column types differ by engine
// on purpose and are not compared.
func TestMigrationsAgree(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("%s is not set: the engines' schemas cannot be compared", storetest.PostgresEnv)
	}
	t.Parallel()
	lite, pg := sqliteSchema(t), postgresSchema(t)
	if len(lite.Tables) == 0 || len(lite.Indexes) == 0 {
		t.Fatalf("read no schema back from SQLite: %+v", lite)
	}
	t.Logf("%d tables, %d indexes", len(lite.Tables), len(lite.Indexes))
	for _, own := range []struct {
		engine string
		s      schema
		of     schema
	}{{"sqlite", lite, sqliteOwn}, {"postgres", pg, postgresOwn}} {
		for table, cols := range own.of.Tables {
			if got := own.s.Tables[table]; !slices.Equal(got, cols) {
				t.Errorf("%s: table %s is %q, want %q, its own (D71, D72)", own.engine, table, got, cols)
			}
			delete(own.s.Tables, table)
		}
		for index, def := range own.of.Indexes {
			if got := own.s.Indexes[index]; got != def {
				t.Errorf("%s: index %s is %q, want %q, its own (D71, D72)", own.engine, index, got, def)
			}
			delete(own.s.Indexes, index)
		}
	}
	if diff := cmp.Diff(lite, pg); diff != "" {
		t.Errorf("the engines' schemas differ (-sqlite +postgres):\n%s", diff)
	}
}

// What one engine keeps and the other does not, on purpose: SQLite keeps
// a faucet's payouts by recipient in two levels, with their watermark
// (D71, its migration 0027), and a faucet's payouts and events in two
// levels, with theirs (D72, its migration 0029); PostgreSQL keeps each in
// one index. Both keep a faucet's statistics as sums (D73); PostgreSQL's
// mark stops at a horizon, which SQLite, with one writer, needs not.
// Each is checked to be there, so this list cannot outlive the
// difference.
var (
	sqliteOwn = schema{
		Tables: map[string][]string{
			"payout_blocks":        {"done", "id"},
			"payouts_by_recipient": {"amount", "coin", "created_at", "faucet_id", "payout_id", "recipient_id"},
			"faucet_blocks":        {"events_done", "id", "payouts_done"},
			"payouts_by_faucet":    {"coin", "created_at", "faucet_id", "payout_id"},
			"events_by_faucet":     {"faucet_id", "seq"},
		},
		Indexes: map[string]string{
			"payouts_block_recipient": "payouts(<expr>, recipient_id, faucet_id, created_at)",
			"payouts_block_faucet":    "payouts(<expr>, faucet_id, coin, created_at, id)",
			"events_block_faucet":     "events(<expr>, faucet_id, seq)",
		},
	}
	postgresOwn = schema{Tables: map[string][]string{
		"stats_horizon": {"id", "next_id", "xid"},
	}, Indexes: map[string]string{
		"payouts_faucet_recipient": "payouts(faucet_id, recipient_id, created_at)",
		"payouts_faucet_coin_time": "payouts(faucet_id, coin, created_at, id)",
		"events_feed":              "events(faucet_id, txid, seq)",
	}}
)

// bookkeeping is the table of applied migrations, whose shape is each
// engine's own.
const bookkeeping = "schema_migrations"

func sqliteSchema(t *testing.T) schema {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "drip.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := schema{Tables: map[string][]string{}, Indexes: map[string]string{}}
	for _, table := range strs(t, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ?`, bookkeeping) {
		s.Tables[table] = sorted(strs(t, db, `SELECT name FROM pragma_table_info(?)`, table))
	}
	rows, err := db.Query(`SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, table string
		if err := rows.Scan(&name, &table); err != nil {
			t.Fatal(err)
		}
		s.Indexes[name] = table + "(" + strings.Join(strs(t, db, `SELECT coalesce(name, '<expr>') FROM pragma_index_info(?) ORDER BY seqno`, name), ", ") + ")"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

func strs(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func postgresSchema(t *testing.T) schema {
	ctx := context.Background()
	_, rawURL := storetest.OpenPostgresURL(t)
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ns := u.Query().Get("search_path")
	conn, err := pgx.Connect(ctx, rawURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s := schema{Tables: map[string][]string{}, Indexes: map[string]string{}}
	rows, err := conn.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = $1 AND table_name <> $2`, ns, bookkeeping)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, column string
		if err := rows.Scan(&table, &column); err != nil {
			t.Fatal(err)
		}
		s.Tables[table] = append(s.Tables[table], column)
	}
	rows.Close()
	for table := range s.Tables {
		s.Tables[table] = sorted(s.Tables[table])
	}
	// Indexes created by CREATE INDEX: those no constraint owns.
	rows, err = conn.Query(ctx, `
		SELECT i.relname, t.relname,
		       array(SELECT coalesce(a.attname, '<expr>')
		             FROM unnest(x.indkey) WITH ORDINALITY k(attnum, n)
		             LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0
		             ORDER BY k.n)
		FROM pg_index x
		JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class t ON t.oid = x.indrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		WHERE ns.nspname = $1 AND t.relname <> $2
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`, ns, bookkeeping)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, table string
		var cols []string
		if err := rows.Scan(&name, &table, &cols); err != nil {
			t.Fatal(err)
		}
		s.Indexes[name] = table + "(" + strings.Join(cols, ", ") + ")"
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// BenchmarkPayoutBatch: the store's work for one group commit of 32
// payouts (storetest.BenchPayoutBatch), on each engine, as v1 sends
// (plain) and as v2 sends, each with its idempotency key (idempotent).
//
//	go test ./internal/store -run '^$' -bench PayoutBatch -count 5
func BenchmarkPayoutBatch(b *testing.B) {
	for _, eng := range storetest.Engines(b) {
		b.Run(eng.Name+"/plain", func(b *testing.B) { storetest.BenchPayoutBatch(b, eng.Open(b), 32, false) })
		b.Run(eng.Name+"/idempotent", func(b *testing.B) { storetest.BenchPayoutBatch(b, eng.Open(b), 32, true) })
	}
}
