package main

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBackupUnderLoad: drip admin backup copies the SQLite database while
// drip serves sends from eight clients; the copy restores with drip admin
// restore into another data directory, reconciles (D3), and holds every
// payout acknowledged before the backup began and none that was not made.
// restore refuses a database in use.
func TestBackupUnderLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := []string{"--data-dir", dir}
	s := startDemo(t, append(db, "--rate-burst", "1000000", "--rate-per-minute", "1000000", "--ip-rate-per-minute", "0")...)

	var paid atomic.Int64
	stop := make(chan struct{})
	var load sync.WaitGroup
	for range 8 {
		load.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.PostForm(s.base+"/api/v1/send", url.Values{"api_key": {s.key}, "to": {"bob"}, "amount": {"1000"}, "currency": {"DOGE"}})
				if err != nil {
					continue
				}
				var b strings.Builder
				buf := make([]byte, 512)
				n, _ := resp.Body.Read(buf)
				b.Write(buf[:n])
				resp.Body.Close()
				if strings.Contains(b.String(), `"status":200`) {
					paid.Add(1)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	before := paid.Load()
	backup := filepath.Join(t.TempDir(), "drip-backup.db")
	runAdmin(t, db, "backup", "--to", backup)
	time.Sleep(300 * time.Millisecond)
	close(stop)
	load.Wait()
	if fi, err := os.Stat(backup); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup %s: %v, mode %v, want 0600", backup, err, fi.Mode().Perm())
	}

	// While drip serves the database, restore refuses to replace it.
	out, err := exec.Command(dripBin, "admin", "restore", "--from", backup, "--data-dir", dir).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "stop drip first") {
		t.Errorf("restore over a database in use: %v\n%s", err, out)
	}
	s.stop(t)
	total := paid.Load()

	restored := []string{"--data-dir", t.TempDir()}
	runAdmin(t, restored, "restore", "--from", backup)
	if rec := runAdmin(t, restored, "reconcile"); rec["ok"] != true {
		t.Fatalf("the restored backup does not reconcile: %v", rec)
	}
	count := func(args []string) int64 {
		conn, err := sql.Open("sqlite", "file:"+filepath.Join(args[1], "drip.db")+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		var n int64
		if err := conn.QueryRow("SELECT count(*) FROM payouts").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	inBackup, inLive := count(restored), count(db)
	t.Logf("payouts acknowledged before the backup: %d; in the backup: %d; acknowledged in all: %d; in the live database: %d",
		before, inBackup, total, inLive)
	if inBackup < before || inBackup > inLive || inLive != total {
		t.Errorf("backup holds %d payouts, want between %d (acknowledged before it) and %d (all); live %d, acknowledged %d",
			inBackup, before, inLive, inLive, total)
	}
}
