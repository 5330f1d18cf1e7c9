package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/dripfaucet/drip/internal/store/sqlstore"
)

// tx is a transaction on one pooled connection whose BEGIN is sent with
// its first statement when that is a pipeline (Pipeline), ahead of it
// otherwise. pgx's own Begin waits for BEGIN's answer before anything else
// is sent: a round trip that every batch of a hot faucet's payouts, one
// transaction at a time, would wait for (issue 16). (pgx's Batch.BeginTx
// would cover a batch only, not a transaction begun by any statement.)
type tx struct {
	c     *pgxpool.Conn
	began bool  // BEGIN sent: the transaction ends with COMMIT or ROLLBACK
	ended bool  // the connection is back in the pool
	err   error // BEGIN failed, or may not have run: nothing more is sent
}

func (t *tx) begin(ctx context.Context) error {
	if t.err != nil || t.began {
		return t.err
	}
	t.began = true
	if _, err := t.c.Exec(ctx, "begin"); err != nil {
		t.err = err
	}
	return t.err
}

func (t *tx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if err := t.begin(ctx); err != nil {
		return 0, err
	}
	tag, err := t.c.Exec(ctx, sql, args...)
	return tag.RowsAffected(), err
}

func (t *tx) QueryRow(ctx context.Context, sql string, args ...any) sqlstore.Row {
	if err := t.begin(ctx); err != nil {
		return errRow{err}
	}
	return t.c.QueryRow(ctx, sql, args...)
}

func (t *tx) Query(ctx context.Context, sql string, args ...any) (sqlstore.Rows, error) {
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return t.c.Query(ctx, sql, args...)
}

// Pipeline sends the statements, after BEGIN if it is still to be sent,
// as one pgx batch: one round trip for all of them instead of one each. A
// hot faucet's payouts are written by one transaction at a time, so each
// round trip a batch of payouts waits for is a wait for all of them.
func (t *tx) Pipeline(ctx context.Context, statements []sqlstore.Statement) ([]int64, int, error) {
	if t.err != nil {
		return nil, 0, t.err
	}
	b := &pgx.Batch{}
	begins := !t.began
	if begins {
		t.began = true
		b.Queue("begin")
	}
	n := make([]int64, len(statements))
	done := 0 // statements answered; the next is the one that failed
	for i, st := range statements {
		q := b.Queue(st.SQL, st.Args...)
		if st.Scan == nil {
			q.Exec(func(tag pgconn.CommandTag) error {
				n[i] = tag.RowsAffected()
				done++
				return nil
			})
			continue
		}
		q.Query(func(rows pgx.Rows) error {
			for rows.Next() {
				if err := st.Scan(rows); err != nil {
					return err
				}
			}
			if err := rows.Err(); err != nil {
				return err
			}
			done++
			return nil
		})
	}
	if err := t.c.SendBatch(ctx, b).Close(); err != nil {
		if begins && done == 0 {
			t.err = err // BEGIN itself may have failed
		}
		return nil, min(done, len(statements)-1), err
	}
	return n, len(statements) - 1, nil
}

// Commit ends the transaction as pgx's Tx.Commit does: a COMMIT answered
// ROLLBACK (the transaction had failed) is pgx.ErrTxCommitRollback.
func (t *tx) Commit(ctx context.Context) error {
	if t.ended {
		return pgx.ErrTxClosed
	}
	defer t.release()
	if t.err != nil {
		// Nothing ran after a BEGIN that failed; a COMMIT now could only
		// commit statements run outside the transaction, had there been any.
		return fmt.Errorf("%w: %w", pgx.ErrTxCommitRollback, t.err)
	}
	if !t.began {
		return nil
	}
	tag, err := t.c.Exec(ctx, "commit")
	if err != nil {
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Rollback ends the transaction unless it has ended; a no-op after Commit.
func (t *tx) Rollback(ctx context.Context) error {
	if t.ended {
		return nil
	}
	defer t.release()
	if !t.began {
		return nil
	}
	_, err := t.c.Exec(ctx, "rollback")
	return err
}

// release gives the connection back; the pool closes one left in a
// transaction or broken rather than reuse it.
func (t *tx) release() {
	t.ended = true
	t.c.Release()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
