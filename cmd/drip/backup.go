package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/store/sqlite"
)

// Backups of the embedded database (issue 15). PostgreSQL deployments back
// up with pg_dump and restore with pg_restore (README, "Backups"): the
// database server already does it well, online.

// adminBackup copies the SQLite database while drip may be serving it.
func adminBackup(fs *flag.FlagSet) runFunc {
	to := fs.String("to", "", "the backup file to write (must not exist)")
	return func(ctx context.Context, _ *app.App) (any, string, error) {
		if err := required("to", *to); err != nil {
			return nil, "", err
		}
		path, err := sqlitePath(fs)
		if err != nil {
			return nil, "", err
		}
		if err := sqlite.Backup(ctx, path, *to); err != nil {
			return nil, "", err
		}
		return map[string]any{"database": path, "backup": *to}, fmt.Sprintf("backed up %s to %s", path, *to), nil
	}
}

// adminRestore replaces the SQLite database with a backup; drip must be
// stopped.
func adminRestore(fs *flag.FlagSet) runFunc {
	from := fs.String("from", "", "the backup file to restore")
	return func(ctx context.Context, _ *app.App) (any, string, error) {
		if err := required("from", *from); err != nil {
			return nil, "", err
		}
		path, err := sqlitePath(fs)
		if err != nil {
			return nil, "", err
		}
		if err := sqlite.Restore(ctx, *from, path); err != nil {
			return nil, "", err
		}
		return map[string]any{"database": path, "restored_from": *from},
			fmt.Sprintf("restored %s from %s; run drip admin reconcile to check it", path, *from), nil
	}
}

// sqlitePath is the database file of the data directory the command's
// flags name; a PostgreSQL --database-url is refused with the route to
// take instead.
func sqlitePath(fs *flag.FlagSet) (string, error) {
	if u := fs.Lookup("database-url"); u != nil && u.Value.String() != "" {
		return "", usagef("backup and restore are for the embedded SQLite database; on PostgreSQL use pg_dump and pg_restore (README, Backups)")
	}
	dir := fs.Lookup("data-dir").Value.String()
	if dir == "" {
		return "", usagef("--data-dir must not be empty")
	}
	return filepath.Join(dir, "drip.db"), nil
}
