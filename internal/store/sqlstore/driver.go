// Package sqlstore implements store.Store once, over the SQL in queries.sql,
// for any engine that supplies a Driver: the connections, the schema, the
// queries that must differ, and the translation of the engine's errors.
// This keeps SQL in one place per engine and the Go logic in one place.
package sqlstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
)

// Conn runs statements: a pool outside transactions, or one transaction.
type Conn interface {
	Exec(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Row is a single-row result. Scan returns ErrNoRows when there is no row.
type Row interface{ Scan(dest ...any) error }

// Rows is a multi-row result.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// TxConn is a transaction's connection.
type TxConn interface {
	Conn
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
}

// Statement is one statement of a pipeline. Scan, when set, reads each
// row the statement returns; without it the statement's rows affected are
// counted.
type Statement struct {
	SQL  string
	Args []any
	Scan func(Rows) error
}

// Pipeliner is a transaction's connection that can send several
// statements in one round trip (PostgreSQL's pipeline mode). Pipeline runs
// them in order and returns each one's rows affected (zero for those with
// Scan); at the first that fails it stops, with that statement's index and
// error, and the transaction is then to be rolled back. A connection
// without it runs them one at a time, which has the same effect.
type Pipeliner interface {
	Pipeline(ctx context.Context, statements []Statement) (rowsAffected []int64, failed int, err error)
}

// Driver is what an engine provides.
type Driver interface {
	Name() string
	// Reader runs reads outside transactions, concurrently.
	Reader() Conn
	// Begin starts a write transaction.
	Begin(ctx context.Context) (TxConn, error)
	// Migrations holds the engine's numbered schema files, NNNN_name.sql.
	Migrations() fs.FS
	// QueryOverrides is SQL in the format of queries.sql replacing shared queries.
	QueryOverrides() string
	// Rebind turns a $N-placeholder query into the engine's own form.
	Rebind(query string) string
	// BindRows turns the rows of a batch statement (a *Rows query), given
	// column by column, into the statement's leading parameters, and
	// returns the func to call once the statement has run: each column as
	// one array on an engine that binds arrays (PostgreSQL), a handle to
	// the rows on one that does not (SQLite's drip_rows).
	BindRows(cols []Column) (args []any, release func())
	// Translate maps the engine's errors to the store's: no rows ->
	// store.ErrNotFound, unique violation -> store.ErrConflict, a database
	// that cannot be reached or did not answer in time (Outage) ->
	// store.ErrUnavailable wrapping the cause; others unchanged.
	Translate(err error) error
	// RolledBack reports whether a failed commit is known not to have
	// taken effect: the database refused it, or it was never sent. Any
	// other failed commit may have committed (store.ErrCommitUnknown).
	RolledBack(err error) bool
	// Retryable reports whether a transaction failed only because of
	// contention (busy, serialization failure, deadlock) and may be rerun.
	Retryable(err error) bool
	Close() error
}

// Column is one column of a batch statement's rows: its name, which the
// statement's SQL gives its values, and its values, exactly one of Ints,
// Texts and Floats set.
type Column struct {
	Name   string
	Ints   []int64
	Texts  []string
	Floats []float64
}

// Len is the column's number of values.
func (c Column) Len() int { return max(len(c.Ints), len(c.Texts), len(c.Floats)) }

// value is the column's i-th value.
func (c Column) value(i int) any {
	switch {
	case c.Ints != nil:
		return c.Ints[i]
	case c.Texts != nil:
		return c.Texts[i]
	default:
		return c.Floats[i]
	}
}

// Outage reports whether err says that the database could not be reached
// or did not answer before the context's deadline, whatever the engine:
// the faults every interface answers as "retry later" (D58).
func Outage(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
