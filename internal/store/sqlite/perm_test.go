//go:build unix

package sqlite_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/store/sqlite"
)

// modes are the permission bits of a data directory and the database files
// in it, "missing" for a file that does not exist.
func modes(t *testing.T, path string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, name := range []string{filepath.Dir(path), path, path + "-wal", path + "-shm"} {
		info, err := os.Stat(name)
		switch {
		case err == nil:
			got[filepath.Base(name)] = fmt.Sprintf("%04o", info.Mode().Perm())
		case os.IsNotExist(err):
			got[filepath.Base(name)] = "missing"
		default:
			t.Fatalf("stat: %v", err)
		}
	}
	return got
}

// private is what modes gives for a data directory "data" whose database
// drip has open.
var private = map[string]string{"data": "0700", "drip.db": "0600", "drip.db-wal": "0600", "drip.db-shm": "0600"}

// TestOpenMakesFilesPrivateWhateverTheUmask: the data directory is 0700
// and the database, its -wal and its -shm 0600, under any umask, the
// -wal and -shm being created by SQLite itself with the database file's
// mode. The umask is the process's, so this test is not parallel: Go runs
// no parallel test of the package while a sequential one runs.
func TestOpenMakesFilesPrivateWhateverTheUmask(t *testing.T) {
	for _, umask := range []int{0o022, 0o002, 0o000, 0o077, 0o277} {
		t.Run(fmt.Sprintf("umask %04o", umask), func(t *testing.T) {
			base := t.TempDir() // before the umask: 0277 would leave it unwritable
			path := filepath.Join(base, "data", "drip.db")
			old := syscall.Umask(umask)
			defer syscall.Umask(old)

			st, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatalf("sqlite.Open: %v", err)
			}
			defer st.Close()
			credit(t, st, 0, 1) // a write, through the WAL
			if diff := cmp.Diff(private, modes(t, path)); diff != "" {
				t.Errorf("modes after Open and a write (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOpenFixesModesOlderVersionsLeft: a data directory 0755 and database
// files 0644, as drip once left them, are made 0700 and 0600 by Open, and
// the data is kept.
func TestOpenFixesModesOlderVersionsLeft(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "drip.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	account := credit(t, st, 0, 42)
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Closing removes the -wal and -shm; an older version that was killed
	// left them, empty here.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.WriteFile(path+suffix, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, mode := range map[string]fs.FileMode{filepath.Dir(path): 0o755, path: 0o644, path + "-wal": 0o644, path + "-shm": 0o644} {
		if err := os.Chmod(name, mode); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"data": "0755", "drip.db": "0644", "drip.db-wal": "0644", "drip.db-shm": "0644"}
	if diff := cmp.Diff(want, modes(t, path)); diff != "" {
		t.Fatalf("modes before Open (-want +got):\n%s", diff)
	}

	again := open(t, path)
	if diff := cmp.Diff(private, modes(t, path)); diff != "" {
		t.Errorf("modes after Open (-want +got):\n%s", diff)
	}
	if got := balance(t, again, account); got != 42 {
		t.Errorf("balance after reopening = %d, want 42", got)
	}
	credit(t, again, account, 1)
	if diff := cmp.Diff(private, modes(t, path)); diff != "" {
		t.Errorf("modes after a write (-want +got):\n%s", diff)
	}
}

// TestEnsurePrivateLeavesASharedDirectory: a directory holding other files
// than the database is not drip's to change; one open to others is warned
// about, while the database files are made 0600 all the same.
func TestEnsurePrivateLeavesASharedDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode fs.FileMode
		warn bool
	}{{0o755, true}, {0o750, true}, {0o711, true}, {0o700, false}, {0o500, false}} {
		t.Run(fmt.Sprintf("%04o", c.mode), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "drip.db")
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, c.mode); err != nil {
				t.Fatal(err)
			}
			// SQLite could not make its -wal in a directory 0500 (but as
			// root), so EnsurePrivate is called alone, not Open.
			warnings, err := sqlite.EnsurePrivate(path)
			if err != nil {
				t.Fatalf("EnsurePrivate: %v", err)
			}
			if got := fmt.Sprintf("%04o", mustStat(t, dir).Mode().Perm()); got != fmt.Sprintf("%04o", c.mode) {
				t.Errorf("directory mode %s, want %04o left as it was", got, c.mode)
			}
			if got := mustStat(t, path).Mode().Perm(); got != 0o600 {
				t.Errorf("database mode %04o, want 0600", got)
			}
			if c.warn != (len(warnings) == 1 && strings.Contains(warnings[0], dir) && strings.Contains(warnings[0], "0700")) || len(warnings) > 1 {
				t.Errorf("warnings %q, want a warning naming the directory: %v", warnings, c.warn)
			}
		})
	}
}

// TestEnsurePrivateMakesTheDirectory: a missing data directory is made
// with its parents, and the database file made empty, before SQLite opens
// it; only the database's own files make a directory drip's.
func TestEnsurePrivateMakesTheDirectory(t *testing.T) {
	t.Parallel()
	t.Run("missing", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "a", "b", "drip.db")
		warnings, err := sqlite.EnsurePrivate(path)
		if err != nil || len(warnings) > 0 {
			t.Fatalf("EnsurePrivate: %q, %v", warnings, err)
		}
		want := map[string]string{"b": "0700", "drip.db": "0600", "drip.db-wal": "missing", "drip.db-shm": "missing"}
		if diff := cmp.Diff(want, modes(t, path)); diff != "" {
			t.Errorf("modes (-want +got):\n%s", diff)
		}
		if size := mustStat(t, path).Size(); size != 0 {
			t.Errorf("database of %d bytes, want an empty file for SQLite", size)
		}
	})
	t.Run("holding a journal", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "drip.db-journal"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		warnings, err := sqlite.EnsurePrivate(filepath.Join(dir, "drip.db"))
		if err != nil || len(warnings) > 0 {
			t.Fatalf("EnsurePrivate: %q, %v", warnings, err)
		}
		if got := mustStat(t, dir).Mode().Perm(); got != 0o700 {
			t.Errorf("directory mode %04o, want 0700", got)
		}
	})
	t.Run("a file in its place", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "data")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := sqlite.Open(context.Background(), filepath.Join(file, "drip.db")); err == nil || !strings.Contains(err.Error(), "not a directory") {
			t.Errorf("sqlite.Open under a file: %v, want an error saying it is not a directory", err)
		}
	})
}

func mustStat(t *testing.T, name string) fs.FileInfo {
	t.Helper()
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return info
}
