package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
		{[]string{"--mcp-allowed-origins", "not an origin"}, "--mcp-allowed-origins"},
		{[]string{"--webhook-lease", "-1s"}, "--webhook-lease"}, // hidden, for tests
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
