// Package postgres is drip's PostgreSQL engine (D30, D31) on pgx v5: a
// connection pool that any number of drip processes can share.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"

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

// Open connects to the database at url (postgres://...) and applies pending
// migrations. A search_path parameter in the URL selects a schema.
func Open(ctx context.Context, url string) (*sqlstore.DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// A payout is acknowledged only once its commit is durable (D4).
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
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
	return db, nil
}

type driver struct{ pool *pgxpool.Pool }

func (d *driver) Name() string           { return "postgres" }
func (d *driver) Reader() sqlstore.Conn  { return conn{d.pool} }
func (d *driver) Migrations() fs.FS      { sub, _ := fs.Sub(migrations, "migrations"); return sub }
func (d *driver) QueryOverrides() string { return overrides }
func (d *driver) Rebind(q string) string { return q }
func (d *driver) Close() error           { d.pool.Close(); return nil }

func (d *driver) Begin(ctx context.Context) (sqlstore.TxConn, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return txConn{conn{tx}, tx}, nil
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
	return err
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

type txConn struct {
	conn
	tx pgx.Tx
}

func (t txConn) Commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t txConn) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }
