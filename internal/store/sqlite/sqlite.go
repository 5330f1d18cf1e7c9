// Package sqlite is the embedded engine of drip (D30): one database file,
// WAL, one writer connection with BEGIN IMMEDIATE and a busy timeout, and a
// pool of read-only connections, on the pure-Go modernc.org/sqlite driver.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"runtime"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed queries.sql
var overrides string

// Open opens (creating if needed) the database file at path and applies
// pending migrations.
func Open(ctx context.Context, path string) (*sqlstore.DB, error) {
	// synchronous=FULL: a commit is on disk before it is acknowledged.
	pragmas := url.Values{"_pragma": {
		"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)",
	}}
	writer, err := sql.Open("sqlite", "file:"+path+"?"+pragmas.Encode()+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	writer.SetMaxOpenConns(1) // SQLite has one writer; queue here rather than on the file lock.
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	readPragmas := url.Values{"_pragma": {"busy_timeout(10000)", "foreign_keys(1)", "query_only(1)"}}
	reader, err := sql.Open("sqlite", "file:"+path+"?"+readPragmas.Encode())
	if err != nil {
		writer.Close()
		return nil, err
	}
	reader.SetMaxOpenConns(max(4, 2*runtime.GOMAXPROCS(0)))
	reader.SetMaxIdleConns(max(4, 2*runtime.GOMAXPROCS(0)))
	d := &driver{writer: writer, reader: reader}
	db, err := sqlstore.Open(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}
	return db, nil
}

type driver struct {
	writer, reader *sql.DB
}

func (d *driver) Name() string           { return "sqlite" }
func (d *driver) Reader() sqlstore.Conn  { return conn{d.reader} }
func (d *driver) Migrations() fs.FS      { sub, _ := fs.Sub(migrations, "migrations"); return sub }
func (d *driver) QueryOverrides() string { return overrides }
func (d *driver) Close() error           { return errors.Join(d.writer.Close(), d.reader.Close()) }
func (d *driver) Begin(ctx context.Context) (sqlstore.TxConn, error) {
	tx, err := d.writer.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return txConn{conn{tx}, tx}, nil
}

var placeholder = regexp.MustCompile(`\$(\d+)`)

// Rebind turns $N into ?N, SQLite's numbered parameter of the same meaning.
func (d *driver) Rebind(q string) string { return placeholder.ReplaceAllString(q, "?$1") }

func (d *driver) Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return store.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w: %v", store.ErrConflict, err)
		}
	}
	return err
}

func (d *driver) Retryable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// queryer is what *sql.DB and *sql.Tx have in common.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type conn struct{ q queryer }

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return c.q.QueryRowContext(ctx, query, args...)
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	r, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

type rows struct{ *sql.Rows }

func (r rows) Close() { _ = r.Rows.Close() }

type txConn struct {
	conn
	tx *sql.Tx
}

func (t txConn) Commit(context.Context) error   { return t.tx.Commit() }
func (t txConn) Rollback(context.Context) error { return t.tx.Rollback() }
