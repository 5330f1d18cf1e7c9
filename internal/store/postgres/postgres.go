// Package postgres is drip's PostgreSQL engine (D30, D31) on pgx v5: a
// connection pool that any number of drip processes can share.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

//go:embed queries.sql
var overrides string

// Timeouts bound the waits on the database (D6), so that a database that
// stops answering costs a request an answer within its deadline rather
// than a hang. Settings the URL gives itself (connect_timeout,
// statement_timeout, idle_in_transaction_session_timeout, and jit, D65)
// are kept.
type Timeouts struct {
	// Connect bounds dialing and authenticating one new connection.
	Connect time.Duration
	// Statement is the server's statement_timeout: a statement its client
	// gave up on does not run on. Zero: none (operator commands and the
	// bench's bulk loads run long statements).
	Statement time.Duration
	// IdleInTransaction is the server's idle_in_transaction_session_timeout:
	// a transaction whose client went quiet, its COMMIT stuck in a stalled
	// network perhaps, is ended this long after its last statement, so it
	// cannot commit later than that. The ledger's settle margin relies on it.
	IdleInTransaction time.Duration
}

// DefaultTimeouts are Open's.
var DefaultTimeouts = Timeouts{Connect: 5 * time.Second, IdleInTransaction: time.Second}

// Open connects to the database at url (postgres://...) with
// DefaultTimeouts, applies pending migrations and starts the statistics
// folder (D73), as a serving node does. A search_path parameter in the
// URL selects a schema.
func Open(ctx context.Context, url string) (*sqlstore.DB, error) {
	return OpenTimeouts(ctx, url, DefaultTimeouts)
}

// OpenTimeouts is Open with the given timeouts (zero fields: none).
func OpenTimeouts(ctx context.Context, url string, t Timeouts) (*sqlstore.DB, error) {
	return open(ctx, url, t, true)
}

// OpenTool is Open for a process beside the nodes (drip admin, drip
// migrate, drip bench's own store), as sqlite.OpenTool is: without the
// statistics folder, whose work is the nodes'. Its reads are exact
// without it (D73). A tool's folder would fold beside the nodes' for as
// long as the tool runs, and drip bench's own store is open for a whole
// bench.
func OpenTool(ctx context.Context, url string) (*sqlstore.DB, error) {
	return open(ctx, url, DefaultTimeouts, false)
}

// open is OpenTimeouts, with the folder started only if fold.
func open(ctx context.Context, url string, t Timeouts, fold bool) (*sqlstore.DB, error) {
	cfg, err := poolConfig(url, t)
	if err != nil {
		return nil, err
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	d := &driver{pool: pool}
	db, err := sqlstore.Open(d)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	if fold {
		db.StartStatsFolder() // D73
	}
	return db, nil
}

// poolConfig is the pool's configuration for url: the URL's own settings
// and, where it gives none, drip's session parameters.
func poolConfig(url string, t Timeouts) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	params := cfg.ConnConfig.RuntimeParams
	// A payout is acknowledged only once its commit is durable (D4).
	params["synchronous_commit"] = "on"
	if cfg.ConnConfig.ConnectTimeout == 0 && t.Connect > 0 {
		cfg.ConnConfig.ConnectTimeout = t.Connect
	}
	// No JIT compilation (D65), unless the URL asks for it. PostgreSQL
	// compiles a plan whose estimated cost passes jit_above_cost before it
	// runs it, at every run, and the costs of drip's reads of a faucet's
	// payouts grow with the faucet's payouts, not with the rows they return.
	setDefault(params, "jit", "off")
	if t.Statement > 0 {
		setDefault(params, "statement_timeout", millis(t.Statement))
	}
	if t.IdleInTransaction > 0 {
		setDefault(params, "idle_in_transaction_session_timeout", millis(t.IdleInTransaction))
	}
	return cfg, nil
}

// setDefault sets a session parameter unless the URL set it: the URL's
// own settings win.
func setDefault(params map[string]string, name, value string) {
	if _, set := params[name]; !set {
		params[name] = value
	}
}

// millis is d as a parameter in milliseconds, at least one.
func millis(d time.Duration) string { return strconv.FormatInt(max(d.Milliseconds(), 1), 10) }

type driver struct{ pool *pgxpool.Pool }

func (d *driver) Name() string           { return "postgres" }
func (d *driver) Reader() sqlstore.Conn  { return conn{d.pool} }
func (d *driver) Migrations() fs.FS      { sub, _ := fs.Sub(migrations, "migrations"); return sub }
func (d *driver) QueryOverrides() string { return overrides }
func (d *driver) Rebind(q string) string { return q }
func (d *driver) Close() error           { d.pool.Close(); return nil }

// BindRows binds each column as one array, which the batch statements
// unnest: pgx encodes a slice in binary, where JSON was parsed as text for
// every batch (8% of PostgreSQL's work a payout).
func (d *driver) BindRows(cols []sqlstore.Column) ([]any, func()) {
	args := make([]any, len(cols))
	for i, c := range cols {
		switch {
		case c.Ints != nil:
			args[i] = c.Ints
		case c.Texts != nil:
			args[i] = c.Texts
		default:
			args[i] = c.Floats
		}
	}
	return args, func() {}
}

func (d *driver) Begin(ctx context.Context) (sqlstore.TxConn, error) {
	c, err := d.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &tx{c: c}, nil
}

func (d *driver) Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return store.ErrNotFound
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		return fmt.Errorf("%w: %s", store.ErrConflict, pe.ConstraintName)
	}
	if outage(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// outage is sqlstore.Outage and PostgreSQL's own ways of saying it cannot
// serve now: connection failures, the server shutting down or full, a
// statement or lock timeout, an idle transaction ended.
func outage(err error) bool {
	var ce *pgconn.ConnectError
	if sqlstore.Outage(err) || pgconn.Timeout(err) || errors.Is(err, pgconn.ErrConnClosed) || errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
		"53300",          // too_many_connections
		"57014",          // query_canceled: statement_timeout or a cancel request
		"55P03",          // lock_not_available: lock_timeout
		"25P03", "57P05": // idle_in_transaction_session_timeout, idle_session_timeout
		return true
	}
	return strings.HasPrefix(pe.Code, "08") // connection_exception
}

// RolledBack: the server answered the COMMIT with an error or a ROLLBACK.
// Nothing else proves the COMMIT did not take effect, not even
// pgconn.SafeToRetry: pgx v5.12 reports a connection reset while it reads
// a COMMIT's answer as "conn closed", safe to retry, although the server
// may have committed (TestLostCommitAnswerPaysOnce in the ledger catches it).
func (d *driver) RolledBack(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) || errors.Is(err, pgx.ErrTxCommitRollback)
}

func (d *driver) Retryable(err error) bool {
	var pe *pgconn.PgError
	// serialization_failure, deadlock_detected
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// queryer is what a pool and a transaction have in common.
type queryer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

type conn struct{ q queryer }

func (c conn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (c conn) QueryRow(ctx context.Context, sql string, args ...any) sqlstore.Row {
	return c.q.QueryRow(ctx, sql, args...)
}

func (c conn) Query(ctx context.Context, sql string, args ...any) (sqlstore.Rows, error) {
	return c.q.Query(ctx, sql, args...)
}
