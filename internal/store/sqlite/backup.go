package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Backup copies the database at path into a new file at to, consistent as
// of one moment, while other connections (a serving drip) read and write
// it: VACUUM INTO reads the database in one read transaction, which WAL
// lets run beside the writer, and writes a compact copy. to must not
// exist; it is created readable by its owner only, like the database.
func Backup(ctx context.Context, path, to string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("sqlite: backup: no database at %s: %w", path, err)
	}
	if _, err := os.Stat(to); err == nil {
		return fmt.Errorf("sqlite: backup: %s exists; choose a new file", to)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	// The copy is written in a directory of its own (0700) and made 0600
	// before it is moved into place, so no one else can read it at any
	// moment: it holds what the database holds (key hashes, emails).
	dir, err := os.MkdirTemp(filepath.Dir(to), ".drip-backup-*")
	if err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "backup.db")
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err := os.Link(tmp, to); err != nil { // fails if to appeared meanwhile
		return fmt.Errorf("sqlite: backup: %w", err)
	}
	return nil
}

// Restore makes the backup at from the database at path. It refuses while
// the database is in use: a serving drip keeps path-wal and path-shm
// beside it (so does one that crashed: start and stop it once, or remove
// them knowingly). The backup is checked first (integrity, a drip schema),
// copied beside path, and renamed over it, so path is never half written.
func Restore(ctx context.Context, from, path string) error {
	for _, side := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Stat(side); err == nil {
			return fmt.Errorf("sqlite: restore: %s exists: stop drip first (the database is in use, or was not closed)", side)
		}
	}
	if err := check(ctx, from); err != nil {
		return fmt.Errorf("sqlite: restore: %s: %w", from, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".restoring"
	os.Remove(tmp)                                 // left by a restore that was stopped
	if err := Backup(ctx, from, tmp); err != nil { // a consistent, compact copy of the backup
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// check opens a backup read-only and asks SQLite whether it is intact and
// drip's.
func check(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var result string
	if err := db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&result); err != nil {
		return err
	}
	if result != "ok" {
		return fmt.Errorf("integrity check: %s", result)
	}
	var version int64
	if err := db.QueryRowContext(ctx, "SELECT max(version) FROM schema_migrations").Scan(&version); err != nil {
		return errors.New("not a drip database (no schema_migrations)")
	}
	return nil
}
