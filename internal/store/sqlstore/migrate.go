package sqlstore

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// Migrate applies the driver's numbered migrations that are not applied yet,
// each in its own transaction with its version record. The engine's
// MigrationLock makes concurrent starts of several nodes take turns.
func (db *DB) Migrate(ctx context.Context) error {
	files, err := fs.Glob(db.drv.Migrations(), "*.sql")
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, name := range files {
		version, err := strconv.ParseInt(strings.SplitN(name, "_", 2)[0], 10, 64)
		if err != nil {
			return fmt.Errorf("migration %s: name must start with its number: %w", name, err)
		}
		body, err := fs.ReadFile(db.drv.Migrations(), name)
		if err != nil {
			return err
		}
		err = db.Transact(ctx, func(tx store.Tx) error {
			q := tx.(*querier)
			if _, err := q.exec(ctx, q.q.MigrationLock); err != nil {
				return err
			}
			if _, err := q.exec(ctx, q.q.MigrationInit); err != nil {
				return err
			}
			applied := map[int64]bool{}
			err := q.list(ctx, q.q.MigrationApplied, nil, func(r Rows) error {
				var v int64
				err := r.Scan(&v)
				applied[v] = true
				return err
			})
			if err != nil || applied[version] {
				return err
			}
			if _, err := q.exec(ctx, stmt{name: "migration " + name, sql: string(body)}); err != nil {
				return err
			}
			_, err = q.exec(ctx, q.q.MigrationRecord, version, time.Now().UnixMicro())
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
