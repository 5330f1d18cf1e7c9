package sqlite

import (
	"bytes"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// openWAL opens the database at path as the writer does (writerDSN: the
// drip-wal VFS, synchronous=FULL), on one connection.
func openWAL(t *testing.T, path string) *sql.DB {
	t.Helper()
	if err := ensureWALVFS(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", writerDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// sumOf reads the rows of t: their count and the sum of n.
func sumOf(t *testing.T, db *sql.DB) (count, sum int64) {
	t.Helper()
	if err := db.QueryRow("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM t").Scan(&count, &sum); err != nil {
		t.Fatal(err)
	}
	return count, sum
}

func integrityOK(t *testing.T, db *sql.DB) {
	t.Helper()
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check = %q, %v", res, err)
	}
}

// TestWriterSyncsEveryCommit: the log's writes are held until its sync,
// so the writer must sync at every commit (wal.go): its connection runs
// synchronous=FULL (2) in WAL mode.
func TestWriterSyncsEveryCommit(t *testing.T) {
	db := openWAL(t, filepath.Join(t.TempDir(), "drip.db"))
	var mode string
	var sync int
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.QueryRow("PRAGMA synchronous").Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous = %d, %v; want 2 (FULL)", sync, err)
	}
}

// TestWALCommitIsInTheFileAtReturn: when a commit returns, its frames are
// in the log file, not held by the VFS: a copy of the files taken then,
// with the writer still open (as a crash would leave them), holds it.
// Commits larger than the VFS's buffer and a transaction that spills
// pages to the log before it rolls back are among them.
func TestWALCommitIsInTheFileAtReturn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "drip.db")
	db := openWAL(t, path)
	exec(t, db, "PRAGMA cache_size = 50") // spill early: pages written to the log before the commit
	exec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, pad BLOB NOT NULL)")
	exec(t, db, "CREATE INDEX t_n ON t (n)")
	pad := bytes.Repeat([]byte{7}, 1000)
	var wantCount, wantSum int64
	insert := func(from, to int, commit bool) {
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			if _, err := tx.Exec("INSERT INTO t (n, pad) VALUES (?, ?)", i, pad); err != nil {
				t.Fatal(err)
			}
		}
		if !commit {
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			wantCount, wantSum = wantCount+1, wantSum+int64(i)
		}
	}
	insert(0, 10, true)
	insert(10, 3000, true) // about 3 MiB of pages: past walBufferSize
	insert(3000, 6000, false)
	insert(6000, 6010, true)

	crash := filepath.Join(t.TempDir(), "drip.db")
	for _, suffix := range []string{"", "-wal"} {
		copyFile(t, path+suffix, crash+suffix)
	}
	after, err := sql.Open("sqlite", "file:"+crash)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Close()
	if count, sum := sumOf(t, after); count != wantCount || sum != wantSum {
		t.Fatalf("after the crash: %d rows summing %d; want %d summing %d", count, sum, wantCount, wantSum)
	}
	integrityOK(t, after)
	if count, sum := sumOf(t, db); count != wantCount || sum != wantSum {
		t.Fatalf("the writer reads %d rows summing %d; want %d summing %d", count, sum, wantCount, wantSum)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWALReadersSeeEveryCommit: connections on the default VFS (the
// readers, the checkpointer) read the frames the writer's VFS wrote, at
// every commit, and a checkpoint copies them whole.
func TestWALReadersSeeEveryCommit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "drip.db")
	db := openWAL(t, path)
	exec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
	reader, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var want int64
	for i := 1; i <= 200; i++ {
		exec(t, db, "INSERT INTO t (n) VALUES (?)", i)
		want += int64(i)
		if count, sum := sumOf(t, reader); count != int64(i) || sum != want {
			t.Fatalf("after commit %d the reader sees %d rows summing %d; want %d summing %d", i, count, sum, i, want)
		}
		if i%50 == 0 {
			exec(t, reader, "PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
	integrityOK(t, reader)
}

// TestWALCommitWritesOnce: a commit of a hundred pages reaches the log in
// a few write calls rather than two a page (Linux: the process's write
// calls, from /proc/self/io).
func TestWALCommitWritesOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts write calls in /proc/self/io")
	}
	db := openWAL(t, filepath.Join(t.TempDir(), "drip.db"))
	exec(t, db, "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL, pad BLOB NOT NULL)")
	pad := bytes.Repeat([]byte{7}, 3000)
	insert := func() {
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 100; i++ { // a page a row
			if _, err := tx.Exec("INSERT INTO t (n, pad) VALUES (?, ?)", i, pad); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	insert() // the log's header, and its first frames
	before := writeCalls(t)
	insert()
	if calls := writeCalls(t) - before; calls > 20 {
		t.Fatalf("a commit of 100 pages made %d write calls; want a few (the default VFS alone makes 200)", calls)
	}
}

// writeCalls is the count of write system calls the process made
// (syscw in /proc/self/io).
func writeCalls(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no syscw in /proc/self/io: %q", b)
	return 0
}
