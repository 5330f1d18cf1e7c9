package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/ledger"
)

// TestServeRefusesBadFlags: each v2 and tool-server flag of serve is
// checked before anything is served, with a message naming the flag.
func TestServeRefusesBadFlags(t *testing.T) {
	t.Parallel()
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"BTC": "65000"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--prices", prices, "--price-feed-url", "http://127.0.0.1:1/simple/price"}, "not both"},
		{[]string{"--prices", filepath.Join(t.TempDir(), "missing.json")}, "--prices"},
		{[]string{"--price-feed-url", "http://127.0.0.1:1/p", "--price-max-age", "0s"}, "--price-max-age"},
		{[]string{"--idempotency-retention", "24h"}, "--idempotency-retention"},
		{[]string{"--smtp-url", "ftp://mail.example.com"}, "--smtp-url"},
		{[]string{"--redis-url", "http://127.0.0.1:1/0"}, "--redis-url"}, // an unreachable Redis is no refusal: serve falls back
		{[]string{"--request-timeout", "1s"}, "--request-timeout"},
		{[]string{"--batch-busy-wait", "3s"}, "--batch-busy-wait must be under 2.75s"},
		{[]string{"--batch-wait", "750ms", "--request-timeout", "3s"}, "--batch-busy-wait must be under 750ms"},
		{[]string{"--mcp-allowed-origins", "not an origin"}, "--mcp-allowed-origins"},
		{[]string{"--webhook-lease", "-1s"}, "--webhook-lease"}, // hidden, for tests
		// A profile that cannot be written is refused before anything is served.
		{[]string{"--mem-profile", filepath.Join(t.TempDir(), "missing", "mem.pprof")}, "mem.pprof"},
		{[]string{"--trace", filepath.Join(t.TempDir(), "missing", "run.trace")}, "run.trace"},
	} {
		cmd := exec.Command(dripBin, append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir()}, tt.args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("serve %v: %v, output %q; want a refusal naming %q", tt.args, err, out, tt.want)
		}
	}
}

// TestServePricesFileDrivesTheDailyCap: --prices replaces the built-in
// table for the daily USD cap (D36, D60): at 1,000,000 USD a BTC a
// satoshi is one cent, so a key capped at 0.02 USD pays two 1-satoshi
// sends and refuses the third.
func TestServePricesFileDrivesTheDailyCap(t *testing.T) {
	t.Parallel()
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"BTC": "1000000"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	db := []string{"--data-dir", t.TempDir()}
	s := startDemo(t, append(db, "--prices", prices)...)
	key := runAdmin(t, db, "key", "mint", "--faucet", "1", "--scopes", "send", "--daily-usd-cap", "0.02")["key"].(string)
	client := &http.Client{Timeout: 30 * time.Second}
	var got []string
	for i := range 3 {
		status, code, err := v2Call(client, s.base, key, "/send",
			fmt.Sprintf(`{"idempotency_key":"c%d","to":"bob","amount":1,"currency":"BTC"}`, i))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(status, code))
	}
	if want := "[200 200 429daily_usd_cap_reached]"; fmt.Sprint(got) != want {
		t.Errorf("sends under a 0.02 USD cap at 1,000,000 USD/BTC: %v, want %s", got, want)
	}
	s.stop(t)
}

// TestServeWritesProfiles: the three records of a run that drip bench
// passes through (--server-cpu-profile, --server-mem-profile,
// --server-trace) are written whole when serve stops: two pprof profiles
// (gzipped protocol buffers naming their sample types and drip's own
// functions) and a runtime trace (its header).
func TestServeWritesProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cpu, mem, tr := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof"), filepath.Join(dir, "run.trace")
	s := startDemo(t, "--data-dir", t.TempDir(), "--cpu-profile", cpu, "--mem-profile", mem, "--trace", tr)
	if status, body := post(t, s.base+"/api/v1/send", url.Values{"api_key": {s.key}, "to": {"alice"}, "amount": {"1000"}, "currency": {"BTC"}}); status != 200 {
		t.Fatalf("send: %d %v", status, body)
	}
	s.stop(t)
	for _, p := range []struct {
		path string
		want []string // in the profile's string table
	}{
		{cpu, []string{"cpu", "nanoseconds"}},
		{mem, []string{"alloc_space", "github.com/dripfaucet/drip/internal/"}},
	} {
		f, err := os.Open(p.path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p.path), err)
		}
		raw, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p.path), err)
		}
		for _, w := range p.want {
			if !bytes.Contains(raw, []byte(w)) {
				t.Errorf("%s (%d bytes unzipped) does not name %q", filepath.Base(p.path), len(raw), w)
			}
		}
	}
	raw, err := os.ReadFile(tr)
	if err != nil {
		t.Fatal(err)
	}
	if head, _, ok := bytes.Cut(raw, []byte{0}); !ok || !bytes.HasPrefix(head, []byte("go 1.")) || !bytes.HasSuffix(head, []byte(" trace")) || len(raw) < 1024 {
		t.Errorf("run.trace: %d bytes beginning %q, want a runtime trace", len(raw), raw[:min(len(raw), 16)])
	}
}

// TestBusyWaitFlag: --batch-busy-wait left unset takes the engine's busy
// wait (D5), and set to 0, on the command line, by its variable or in the
// --config file, turns it off (ledger.NoWait), which BatchConfig's zero
// cannot say.
func TestBusyWaitFlag(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "drip.toml")
	if err := os.WriteFile(conf, []byte("batch-busy-wait = \"0s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		env  string
		want time.Duration
	}{
		{name: "unset", want: 0},
		{name: "0", args: []string{"--batch-busy-wait", "0"}, want: ledger.NoWait},
		{name: "1ms", args: []string{"--batch-busy-wait", "1ms"}, want: time.Millisecond},
		{name: "0 by its variable", env: "0s", want: ledger.NoWait},
		{name: "0 in the file", args: []string{"--config", conf}, want: ledger.NoWait},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("DRIP_BATCH_BUSY_WAIT", tt.env)
			}
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			d := fs.Duration(busyWaitFlag, 0, "")
			if err := parseFlags(context.Background(), fs, tt.args, io.Discard, withConfig); err != nil {
				t.Fatal(err)
			}
			if got := busyWait(fs, *d); got != tt.want {
				t.Fatalf("busy wait %v, want %v", got, tt.want)
			}
		})
	}
}
