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
	"sync"

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
// pending migrations, for the node that serves it: with the compactor
// (D71, D72) and the statistics' folder (D73) running beside its writer.
func Open(ctx context.Context, path string) (*sqlstore.DB, error) {
	return open(ctx, path, true)
}

// OpenTool is Open for a process beside the node (drip admin, drip
// migrate, drip bench's own setup): without the compactor and the folder,
// whose work is the node's. Reads are exact whatever they have done. Two
// processes' background writers contend for the file's one write lock,
// and a writer that finds it taken sleeps in SQLite's busy handler (1, 2,
// 5 ... 100 ms at a time) holding the node's one writer connection: a
// bench's own compactor, opening an empty write transaction ten times a
// second, stalled the node's payout batches 80 ms to 3 s at a time
// (BENCHMARKS.md, round thirty-one).
func OpenTool(ctx context.Context, path string) (*sqlstore.DB, error) {
	return open(ctx, path, false)
}

// open is Open, with the compactor and the statistics folder started
// only if compact: a tool leaves them to the node, a test steps them.
func open(ctx context.Context, path string, compact bool) (*sqlstore.DB, error) {
	if _, err := EnsurePrivate(path); err != nil {
		return nil, err
	}
	if err := ensureWALVFS(); err != nil {
		return nil, err
	}
	if err := migrate(ctx, path); err != nil {
		return nil, fmt.Errorf("sqlite: migrate %s: %w", path, err)
	}
	base, err := sqlite.NewConnector(writerDSN(path))
	if err != nil {
		return nil, err
	}
	writer := sql.OpenDB(rowsConnector{Connector: base}) // each connection with its temp.drip_rows (rows.go)
	writer.SetMaxOpenConns(1)                            // SQLite has one writer; queue here rather than on the file lock.
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	reader, err := openReaders(path)
	if err != nil {
		writer.Close()
		return nil, err
	}
	reader.SetMaxOpenConns(max(4, 2*runtime.GOMAXPROCS(0)))
	reader.SetMaxIdleConns(max(4, 2*runtime.GOMAXPROCS(0)))
	d := &driver{writer: writer, reader: reader, wps: &prepared{db: writer}, rps: &prepared{db: reader}}
	db, err := sqlstore.Open(d)
	if err != nil {
		d.Close()
		return nil, err
	}
	if d.ck, err = startCheckpointer(path); err != nil {
		d.Close()
		return nil, err
	}
	// Prepare the writer's statements now, while no transaction holds its
	// one connection (see conn.stmt). The readers prepare on first use.
	for _, q := range append(db.Statements(), compactStatements()...) {
		if _, err := d.wps.get(ctx, q); err != nil {
			d.Close()
			return nil, fmt.Errorf("sqlite: prepare: %w", err)
		}
	}
	if compact {
		d.cp = startCompactor(d.wps)
		db.StartStatsFolder()
	}
	return db, nil
}

// migrate applies the pending migrations through a connection of its own,
// which keeps temporary storage in files (migratorDSN): under the writer's
// temp_store=MEMORY, SQLite sorts without bound, and building an index
// over every payout stored (migrations 0027 and 0028) held the whole sort
// in memory, 660 MB for 10M payouts (35 MB here: BENCHMARKS.md, round
// twenty-four). In files, the sort spills past the page cache's size.
func migrate(ctx context.Context, path string) error {
	base, err := sqlite.NewConnector(migratorDSN(path))
	if err != nil {
		return err
	}
	migrator := sql.OpenDB(base)
	defer migrator.Close()
	migrator.SetMaxOpenConns(1)
	d := &driver{writer: migrator, reader: migrator, wps: &prepared{db: migrator}, rps: &prepared{db: migrator}}
	db, err := sqlstore.Open(d)
	if err != nil {
		return err
	}
	return db.Migrate(ctx)
}

// openReaders opens the readers' pool. Each reader has a temp.drip_rows
// too, for the set forms a read shares with the batch (PayoutWindow), and
// turns query_only once it is made.
func openReaders(path string) (*sql.DB, error) {
	pragmas := url.Values{"_pragma": {"busy_timeout(10000)", "foreign_keys(1)"}}
	base, err := sqlite.NewConnector("file:" + path + "?" + pragmas.Encode())
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(rowsConnector{Connector: base, then: []string{"PRAGMA query_only(1)"}}), nil
}

// writerDSN is the DSN of the writer's connection to the database at path.
//
// synchronous=FULL: a commit is on disk before it is acknowledged.
// temp_store=MEMORY keeps each batch statement's statement journal (the
// pages it changed, kept to undo the statement alone) in memory: past
// 64 KiB SQLite spills it to a temporary file, which a batch of payouts
// exceeds, and then opens, writes and deletes a file per statement. The
// journal is the statement's undo, never needed after a crash. It also
// holds every sort in memory, which is why migrations run elsewhere
// (migrate).
// wal_autocheckpoint: the checkpointer copies the log, the writer only
// past walBackstop pages; journal_size_limit: walKeep (checkpoint.go).
// vfs: the log written in a few calls a commit (wal.go), which needs
// synchronous=FULL.
func writerDSN(path string) string { return dsn(path, "temp_store(2)") }

// migratorDSN is the writer's DSN with temporary storage left in files
// (see migrate).
func migratorDSN(path string) string { return dsn(path) }

// dsn is the DSN of a writing connection to the database at path, with
// the pragmas every one has and more.
func dsn(path string, more ...string) string {
	pragmas := url.Values{"_pragma": append([]string{
		"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)",
		fmt.Sprintf("wal_autocheckpoint(%d)", walBackstop), fmt.Sprintf("journal_size_limit(%d)", walKeep),
	}, more...), "vfs": {walVFSName}}
	return "file:" + path + "?" + pragmas.Encode() + "&_txlock=immediate"
}

type driver struct {
	writer, reader *sql.DB
	wps, rps       *prepared
	ck             *checkpointer // nil until started
	cp             *compactor    // nil until started
}

func (d *driver) Name() string           { return "sqlite" }
func (d *driver) Reader() sqlstore.Conn  { return conn{db: d.reader, ps: d.rps} }
func (d *driver) Migrations() fs.FS      { sub, _ := fs.Sub(migrations, "migrations"); return sub }
func (d *driver) QueryOverrides() string { return overrides }
func (d *driver) Close() error {
	var ckErr error
	if d.cp != nil {
		d.cp.halt() // before the writer it writes through
	}
	if d.ck != nil {
		ckErr = d.ck.close()
	}
	d.wps.close()
	d.rps.close()
	return errors.Join(ckErr, d.writer.Close(), d.reader.Close())
}
func (d *driver) Begin(ctx context.Context) (sqlstore.TxConn, error) {
	c, err := d.wps.begin(ctx)
	if err != nil {
		return nil, err
	}
	return txConn{c}, nil
}

var (
	placeholder = regexp.MustCompile(`\$(\d+)`)
	// limitParam is a LIMIT or OFFSET given by a parameter.
	limitParam = regexp.MustCompile(`\b(LIMIT|OFFSET) \$(\d+)`)
)

// Rebind turns $N into ?N, SQLite's numbered parameter of the same meaning.
//
// A LIMIT or OFFSET parameter is written +?N, the same number: SQLite
// plans a bare parameter there with the value bound when the statement was
// prepared, and so prepares the statement again at every new binding, which
// cost more than the query itself (BenchmarkListLimit, an empty /payouts
// page: 58 µs, 16 with +?N; a tenth of the mixed scenario's CPU). The
// plans are the same (EXPLAIN QUERY PLAN of every such query, both ways):
// the indexes these queries read are ordered for them whatever the limit.
func (d *driver) Rebind(q string) string {
	q = limitParam.ReplaceAllString(q, "$1 +?$2")
	return placeholder.ReplaceAllString(q, "?$1")
}

// BindRows: SQLite binds no arrays; a batch statement reads its rows from
// the virtual table drip_rows by one handle (rows.go).
func (d *driver) BindRows(cols []sqlstore.Column) ([]any, func()) { return bindRows(cols) }

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
	if d.Retryable(err) || sqlstore.Outage(err) || interrupted(err) {
		// Busy past busy_timeout, or the context's deadline: D58's outage.
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

func interrupted(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_INTERRUPT
}

// RolledBack: database/sql rolls a transaction back when its context ends
// before Commit (ErrTxDone or the context's error); any other failed COMMIT
// of the file is not known to have been undone.
func (d *driver) RolledBack(err error) bool {
	return errors.Is(err, sql.ErrTxDone) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
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

// conn runs statements on a pool or in a transaction, through statements
// prepared once per pool: SQLite otherwise parses and plans every statement
// on every call, which was a large share of a payout's CPU time.
type conn struct {
	db *sql.DB
	tx *sql.Tx // nil outside a transaction
	ps *prepared
}

// prepared caches the statements of one pool. A statement prepared on the
// pool is bound to a transaction's connection by tx.StmtContext, which
// reuses that connection's own prepared copy.
type prepared struct {
	db    *sql.DB
	stmts sync.Map // query string -> *sql.Stmt
}

func (p *prepared) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := p.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := p.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

// begin starts a transaction on p's pool, its statements run through p
// (the payout batches' and the compactor's alike).
func (p *prepared) begin(ctx context.Context) (conn, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return conn{}, err
	}
	return conn{db: p.db, tx: tx, ps: p}, nil
}

func (p *prepared) close() {
	p.stmts.Range(func(_, s any) bool { s.(*sql.Stmt).Close(); return true })
}

// stmt returns the prepared statement of query, bound to the transaction
// if there is one, or nil when a transaction meets a statement not prepared
// yet: preparing needs a connection of the pool, and the writer pool's one
// connection is the transaction's, so the caller runs it unprepared.
func (c conn) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if c.tx == nil {
		return c.ps.get(ctx, query)
	}
	s, ok := c.ps.stmts.Load(query)
	if !ok {
		return nil, nil
	}
	return c.tx.StmtContext(ctx, s.(*sql.Stmt)), nil
}

func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	var res sql.Result
	var err error
	s, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		return 0, err
	case s == nil:
		res, err = c.tx.ExecContext(ctx, query, args...)
	default:
		res, err = s.ExecContext(ctx, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	s, err := c.stmt(ctx, query)
	switch {
	case err != nil:
		return errRow{err}
	case s == nil:
		return c.tx.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

func (c conn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	var r *sql.Rows
	if s == nil {
		r, err = c.tx.QueryContext(ctx, query, args...)
	} else {
		r, err = s.QueryContext(ctx, args...)
	}
	if err != nil {
		return nil, err
	}
	return rows{r}, nil
}

// errRow is a Row whose statement could not be prepared.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type rows struct{ *sql.Rows }

func (r rows) Close() { _ = r.Rows.Close() }

type txConn struct{ conn }

func (t txConn) Commit(context.Context) error   { return t.tx.Commit() }
func (t txConn) Rollback(context.Context) error { return t.tx.Rollback() }
