package sqlite

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"modernc.org/sqlite"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// openRows opens a database whose connections have temp.drip_rows, as the
// writer's do.
func openRows(t *testing.T) *sql.DB {
	t.Helper()
	base, err := sqlite.NewConnector("file:" + filepath.Join(t.TempDir(), "rows.db"))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(rowsConnector{Connector: base})
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	return db
}

// TestDripRows: a statement reads the rows bound to its handle exactly as
// given, every value with its type (an integer past 2^53, text with
// quotes, a NUL, line breaks and non-ASCII, a float), and nothing else:
// without a handle it reads no rows, with a handle no longer bound it
// fails, and the handle is forgotten once released.
func TestDripRows(t *testing.T) {
	t.Parallel()
	db := openRows(t)
	ints := []int64{1, -9007199254740993, math.MaxInt64}
	texts := []string{`a"b\c'`, "x\x00y\n\u2028ü", ""}
	floats := []float64{0.5, -1e300, 59}
	cols := []sqlstore.Column{{Name: "i", Ints: ints}, {Name: "t", Texts: texts}, {Name: "f", Floats: floats}}
	args, release := bindRows(cols)
	rows, err := db.Query(`SELECT c0, typeof(c0), c1, typeof(c1), c2, typeof(c2), c3 FROM drip_rows WHERE handle = ?1`, args...)
	if err != nil {
		t.Fatal(err)
	}
	var gotInts []int64
	var gotTexts []string
	var gotFloats []float64
	for rows.Next() {
		var i int64
		var s string
		var f float64
		var ti, ts, tf string
		var rest sql.NullString
		if err := rows.Scan(&i, &ti, &s, &ts, &f, &tf, &rest); err != nil {
			t.Fatal(err)
		}
		if ti != "integer" || ts != "text" || tf != "real" || rest.Valid {
			t.Errorf("row %d: types %s, %s, %s and c3 %v; want integer, text, real and NULL", len(gotInts), ti, ts, tf, rest)
		}
		gotInts, gotTexts, gotFloats = append(gotInts, i), append(gotTexts, s), append(gotFloats, f)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if !reflect.DeepEqual(gotInts, ints) || !reflect.DeepEqual(gotTexts, texts) || !reflect.DeepEqual(gotFloats, floats) {
		t.Errorf("read %v %q %v; want %v %q %v", gotInts, gotTexts, gotFloats, ints, texts, floats)
	}

	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM drip_rows`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a scan without a handle: %d rows, %v; want 0, nil", n, err)
	}
	release()
	if _, ok := rowSets.Load(args[0]); ok {
		t.Errorf("handle %v still bound after release", args[0])
	}
	err = db.QueryRow(`SELECT COUNT(*) FROM drip_rows WHERE handle = ?1`, args...).Scan(&n)
	if err == nil || !strings.Contains(err.Error(), "no rows bound") {
		t.Errorf("a released handle: err = %v; want no rows bound", err)
	}
}

// TestDripRowsOnEveryConnection: every connection the writer's pool opens,
// not only the first, has temp.drip_rows (a pool may replace one).
func TestDripRowsOnEveryConnection(t *testing.T) {
	t.Parallel()
	db := openRows(t)
	db.SetMaxOpenConns(3)
	args, release := bindRows([]sqlstore.Column{{Name: "i", Ints: []int64{7, 8}}})
	defer release()
	tx := make([]*sql.Tx, 3) // three transactions hold three connections
	for i := range tx {
		var err error
		if tx[i], err = db.Begin(); err != nil {
			t.Fatal(err)
		}
		defer tx[i].Rollback()
		var sum int64
		if err := tx[i].QueryRow(`SELECT SUM(c0) FROM drip_rows WHERE handle = ?1`, args...).Scan(&sum); err != nil || sum != 15 {
			t.Errorf("connection %d: sum %d, %v; want 15", i, sum, err)
		}
	}
}

// TestReadersReadRowsAndWriteNothing: a reader has its temp.drip_rows (the
// set forms of PayoutWindow read it) and is still query_only, though it
// made the table before turning so.
func TestReadersReadRowsAndWriteNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "readers.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	readers, err := openReaders(path)
	if err != nil {
		t.Fatal(err)
	}
	defer readers.Close()
	args, release := bindRows([]sqlstore.Column{{Name: "n", Ints: []int64{4, 5}}})
	defer release()
	var sum int64
	if err := readers.QueryRow("SELECT SUM(c0) FROM drip_rows WHERE handle = ?", args...).Scan(&sum); err != nil || sum != 9 {
		t.Fatalf("a reader's drip_rows: sum %d, %v; want 9", sum, err)
	}
	if _, err := readers.Exec("INSERT INTO coins (symbol, name, position) VALUES ('ZZZ', 'Z', 99)"); err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Errorf("a reader's INSERT: err = %v, want a readonly database's refusal", err)
	}
}
