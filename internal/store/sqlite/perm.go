package sqlite

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Modes of the database's directory and files: they hold every account's
// balance and every key's hash, for drip's user alone.
const (
	dirMode  fs.FileMode = 0o700
	fileMode fs.FileMode = 0o600
)

// dbSuffixes are the files of a database: the file itself and those SQLite
// keeps beside it in WAL mode.
var dbSuffixes = []string{"", "-wal", "-shm"}

// EnsurePrivate makes the database at path private to drip's user,
// whatever the umask or an older version (files 0644, a directory 0755)
// made of it: it creates the directory if missing and gives it mode 0700,
// creates the database file if missing, and gives the file, its -wal and
// its -shm mode 0600. SQLite creates the -wal and -shm files later with
// the mode of the database file, so they are 0600 from the start.
//
// The directory is changed only when it is drip's: one drip created, or
// one that holds nothing but the database's files. A directory shared with
// other files (a data dir of ".", say) is the operator's to set.
//
// Open calls it first, so every way of opening the file gets these modes.
// What it cannot fix, a directory or file readable or writable by others
// that drip may not or will not change, is no error, as drip still works:
// it is returned as warnings, for a caller with a logger to log (Open has
// none, and drops them).
func EnsurePrivate(path string) (warnings []string, err error) {
	dir := filepath.Dir(path)
	created := false
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return nil, fmt.Errorf("sqlite: data directory: %w", err)
		}
		if info, err = os.Stat(dir); err != nil {
			return nil, fmt.Errorf("sqlite: data directory: %w", err)
		}
		created = true
	case err != nil:
		return nil, fmt.Errorf("sqlite: data directory: %w", err)
	case !info.IsDir():
		return nil, fmt.Errorf("sqlite: data directory %s is not a directory", dir)
	}
	// MkdirAll's mode is cut by the umask, which may leave too little for
	// drip or, for a directory that was there, too much for others.
	if info.Mode().Perm() != dirMode {
		if !created && !onlyDatabase(dir, filepath.Base(path)) {
			if info.Mode().Perm()&0o077 != 0 {
				warnings = append(warnings, fmt.Sprintf("data directory %s has mode %04o and holds other files than the database, so drip leaves it as it is; make it 0700", dir, info.Mode().Perm()))
			}
		} else if err := os.Chmod(dir, dirMode); err != nil && info.Mode().Perm()&0o077 != 0 {
			warnings = append(warnings, fmt.Sprintf("data directory %s has mode %04o and drip cannot make it 0700: %v", dir, info.Mode().Perm(), err))
		}
	}
	// O_EXCL: an existing database is left to the loop below.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	switch {
	case err == nil:
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	for _, suffix := range dbSuffixes {
		name := path + suffix
		info, err := os.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sqlite: %w", err)
		}
		if info.Mode().Perm() == fileMode {
			continue
		}
		if err := os.Chmod(name, fileMode); err != nil && info.Mode().Perm()&0o077 != 0 {
			warnings = append(warnings, fmt.Sprintf("database file %s has mode %04o and drip cannot make it 0600: %v", name, info.Mode().Perm(), err))
		}
	}
	return warnings, nil
}

// onlyDatabase reports whether dir holds nothing but the files of the
// database named base, reading no more of a large directory than it needs.
func onlyDatabase(dir, base string) bool {
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer d.Close()
	ours := map[string]bool{base + "-journal": true}
	for _, suffix := range dbSuffixes {
		ours[base+suffix] = true
	}
	for {
		entries, err := d.ReadDir(len(ours) + 1)
		for _, e := range entries {
			if !ours[e.Name()] {
				return false
			}
		}
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
