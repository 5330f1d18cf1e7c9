package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// TestAdminCommandsAgainstRunningServer drives each operator command while
// drip serve runs on the same SQLite file, and checks its effect through v1.
func TestAdminCommandsAgainstRunningServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := []string{"--data-dir", dir}
	s := startDemo(t, db...)
	send := func(key, to, amount, currency string, extra ...string) int {
		form := url.Values{"api_key": {key}, "to": {to}, "amount": {amount}, "currency": {currency}}
		for i := 0; i+1 < len(extra); i += 2 {
			form.Set(extra[i], extra[i+1])
		}
		got, _ := post(t, s.base+"/api/v1/send", form)
		return got
	}

	// link-address: a new user reached by a DOGE address, for DOGE only.
	runAdmin(t, db, "user", "create", "--username", "dan", "--email", "dan@example.com", "--verified")
	runAdmin(t, db, "user", "link-address", "--username", "dan", "--coin", "doge", "--address", "DDanAddress0001")
	if got := send(s.key, "DDanAddress0001", "100", "DOGE"); got != 200 {
		t.Errorf("send to a linked address: %d", got)
	}
	if got := send(s.key, "DDanAddress0001", "100", "BTC"); got != 456 {
		t.Errorf("the DOGE address used for BTC: %d, want 456", got)
	}

	// suspend / unsuspend a recipient: 456 while suspended.
	runAdmin(t, db, "user", "suspend", "--username", "dan")
	if got := send(s.key, "dan", "100", "DOGE"); got != 456 {
		t.Errorf("send to a suspended user: %d, want 456", got)
	}
	runAdmin(t, db, "user", "unsuspend", "--username", "dan")
	if got := send(s.key, "dan", "100", "DOGE"); got != 200 {
		t.Errorf("send after unsuspend: %d", got)
	}

	// suspending the owner: 401 for the faucet's key (D21).
	runAdmin(t, db, "user", "suspend", "--username", demoOwner)
	if got := send(s.key, "bob", "100", "DOGE"); got != 401 {
		t.Errorf("owner suspended: %d, want 401", got)
	}
	runAdmin(t, db, "user", "unsuspend", "--username", demoOwner)

	// set-ip-whitelist: the test client is 127.0.0.1.
	out := runAdmin(t, db, "faucet", "set-ip-whitelist", "--faucet", "1", "--ips", "203.0.113.0/24, 198.51.100.7")
	if ips := out["ip_whitelist"].([]any); len(ips) != 2 || ips[1] != "198.51.100.7/32" {
		t.Errorf("ip_whitelist: %v", out)
	}
	if got := send(s.key, "bob", "100", "DOGE"); got != 401 {
		t.Errorf("caller outside the whitelist: %d, want 401", got)
	}
	runAdmin(t, db, "faucet", "set-ip-whitelist", "--faucet", "1", "--ips", "127.0.0.1")
	if got := send(s.key, "bob", "100", "DOGE"); got != 200 {
		t.Errorf("caller on the whitelist: %d", got)
	}
	runAdmin(t, db, "faucet", "set-ip-whitelist", "--faucet", "1", "--ips", "")

	// set-limits: one LTC payout per recipient per hour (D41).
	runAdmin(t, db, "faucet", "set-limits", "--faucet", "1", "--limits", `[{"coin":"LTC","per":"recipient","window_seconds":3600,"max_count":1}]`)
	if a, b := send(s.key, "alice@example.com", "10", "LTC"), send(s.key, "alice@example.com", "10", "LTC"); a != 200 || b != 450 {
		t.Errorf("per-recipient limit: %d then %d, want 200 then 450", a, b)
	}
	if got := send(s.key, "bob", "10", "LTC"); got != 200 {
		t.Errorf("another recipient under the limit: %d", got)
	}
	runAdmin(t, db, "faucet", "set-limits", "--faucet", "1", "--limits", `[]`)

	// set-rules: blacklist, then trust rank with anti-fraud on and off (D42).
	runAdmin(t, db, "faucet", "set-rules", "--faucet", "1", "--blacklist", "bob, 198.51.100.0/24")
	if got := send(s.key, "bob", "10", "DOGE"); got != 457 {
		t.Errorf("blacklisted user: %d, want 457", got)
	}
	if got := send(s.key, "alice@example.com", "10", "DOGE", "ip_address", "198.51.100.9"); got != 457 {
		t.Errorf("blacklisted claimer IP: %d, want 457", got)
	}
	runAdmin(t, db, "faucet", "set-rules", "--faucet", "1", "--blacklist", "", "--anti-fraud", "on", "--trust-rank", "90")
	if got := send(s.key, "bob", "10", "DOGE"); got != 457 {
		t.Errorf("trust rank 90 for a new user: %d, want 457", got)
	}
	rules := runAdmin(t, db, "faucet", "set-rules", "--faucet", "1", "--anti-fraud", "off")["rules"].(map[string]any)
	if rules["anti_fraud"] != false || rules["trust_rank"].(float64) != 90 {
		t.Errorf("a partial rules change lost a field: %v", rules)
	}
	if got := send(s.key, "bob", "10", "DOGE"); got != 200 {
		t.Errorf("anti-fraud off: %d", got)
	}

	// coin disable / enable: the coin leaves and rejoins the currencies,
	// within the second a serving process may reuse its coin set.
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(3 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("%s: not within 3s", what)
				return
			}
		}
	}
	runAdmin(t, db, "coin", "disable", "--coin", "XRP")
	eventually("disabled coin refused with 410", func() bool { return send(s.key, "bob", "10", "XRP") == 410 })
	listed := func() bool {
		_, body := post(t, s.base+"/api/v1/currencies", url.Values{"api_key": {s.key}})
		for _, c := range body["currencies"].([]any) {
			if c == "XRP" {
				return true
			}
		}
		return false
	}
	if listed() {
		t.Error("a disabled coin is listed")
	}
	runAdmin(t, db, "coin", "enable", "--coin", "XRP")
	eventually("re-enabled coin listed", listed)

	// faucet show reports the balances the sends left.
	show := runAdmin(t, db, "faucet", "show", "--faucet", "1")
	if ltc := show["balances"].(map[string]any)["LTC"].(float64); ltc != 500_000_000-20 {
		t.Errorf("LTC balance %v, want %d", ltc, 500_000_000-20)
	}
	s.stop(t)
}

// TestReconcileFailsOnABrokenLedger: drip admin reconcile exits 1 and names
// the mismatch when a balance no longer equals its journal (D3).
func TestReconcileFailsOnABrokenLedger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := []string{"--data-dir", dir}
	runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com")
	created := runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", "A", "--domain", "a.example.com", "--url", "https://a.example.com/")
	runAdmin(t, db, "deposit", "--faucet", strconv.Itoa(int(created["id"].(float64))), "--coin", "BTC", "--amount", "1000")
	if rec := runAdmin(t, db, "reconcile"); rec["ok"] != true {
		t.Fatalf("a fresh ledger does not reconcile: %v", rec)
	}

	// Tamper with a balance behind the ledger's back.
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "drip.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("UPDATE balances SET amount = amount + 1 WHERE coin = 'BTC' AND account_id <> 1"); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	out, err := exec.Command(dripBin, append([]string{"admin", "reconcile", "--json"}, db...)...).Output()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("reconcile of a broken ledger: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{`"ok": false`, `"coin": "BTC"`, `"balance": 1001`, `"journal": 1000`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("reconcile output lacks %s:\n%s", want, out)
		}
	}
}

// TestStatsRebuildMendsTheStatistics: drip admin reconcile names a faucet
// whose statistics' sums disagree with its payouts and exits 1; drip admin
// stats rebuild empties the sums, and reconcile is clean again (D73).
func TestStatsRebuildMendsTheStatistics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := []string{"--data-dir", dir}
	runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com")
	created := runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", "A", "--domain", "a.example.com", "--url", "https://a.example.com/")
	id := int(created["id"].(float64))

	// A sum for a payout the faucet never made.
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "drip.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at) VALUES (?, 'BTC', 1, 1, 500, 0)`, id); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	out, err := exec.Command(dripBin, append([]string{"admin", "reconcile", "--json"}, db...)...).Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("reconcile of wrong statistics: %v, want exit status 1\n%s", err, out)
	}
	var rep map[string]any
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("reconcile --json: %v\n%s", err, out)
	}
	if rep["ok"] != false || fmt.Sprint(rep["statistics"]) != fmt.Sprintf("[%d]", id) || fmt.Sprint(rep["accounts"]) != "[]" {
		t.Errorf("reconcile of wrong statistics: %v, want ok false and statistics [%d] alone", rep, id)
	}

	if got := runAdmin(t, db, "stats", "rebuild"); got["rebuilding"] != true {
		t.Errorf("stats rebuild: %v", got)
	}
	if rec := runAdmin(t, db, "reconcile"); rec["ok"] != true || fmt.Sprint(rec["statistics"]) != "[]" {
		t.Errorf("reconcile after the rebuild: %v", rec)
	}
}

// TestAdminKeys: drip admin key mint|list|revoke (D14), with the output
// fields issue 3 names, and no secret outside the mint reply.
func TestAdminKeys(t *testing.T) {
	t.Parallel()
	db := []string{"--data-dir", t.TempDir()}
	runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com")
	runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", "A", "--domain", "a.example.com", "--url", "https://a.example.com/")
	minted := runAdmin(t, db, "key", "mint", "--faucet", "1", "--scopes", "send,read", "--expires-in", "24h", "--ips", "203.0.113.0/24", "--daily-usd-cap", "25.00")
	secret, _ := minted["key"].(string)
	for _, field := range []string{"id", "key", "prefix", "scopes", "expires_at"} {
		if _, ok := minted[field]; !ok {
			t.Errorf("mint output lacks %q: %v", field, minted)
		}
	}
	if !strings.HasPrefix(secret, minted["prefix"].(string)+"_") || fmt.Sprint(minted["scopes"]) != "[read send]" {
		t.Errorf("mint output: %v", minted)
	}
	out, err := exec.Command(dripBin, append([]string{"admin", "key", "list", "--faucet", "1", "--json"}, db...)...).Output()
	if err != nil || !strings.Contains(string(out), `"daily_usd_cap": "25"`) || strings.Contains(string(out), secret) {
		t.Errorf("key list: %v\n%s", err, out)
	}
	revoked := runAdmin(t, db, "key", "revoke", "--key-id", strconv.Itoa(int(minted["id"].(float64))))
	if revoked["revoked_at"] == nil {
		t.Errorf("revoke output: %v", revoked)
	}
	if err := exec.Command(dripBin, append([]string{"admin", "key", "mint", "--faucet", "1", "--scopes", "read", "--daily-usd-cap", "5"}, db...)...).Run(); err == nil {
		t.Error("a USD cap on a key without send was accepted")
	}
}

// TestAdminOperatorRole: user create --operator grants the role, user
// set-operator grants and withdraws it, and each change is in the user's
// security log (issue 11).
func TestAdminOperatorRole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := []string{"--data-dir", dir}
	if got := runAdmin(t, db, "user", "create", "--username", "opal", "--email", "opal@example.com", "--operator"); got["operator"] != true {
		t.Errorf("user create --operator: %v", got)
	}
	if got := runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com"); got["operator"] != false {
		t.Errorf("user create: %v", got)
	}
	runAdmin(t, db, "user", "set-operator", "--username", "ann")
	runAdmin(t, db, "user", "set-operator", "--username", "opal", "--operator=false")
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "drip.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var roles, log string
	err = raw.QueryRow(`SELECT group_concat(username || '=' || operator, ' ') FROM (SELECT username, operator FROM users ORDER BY username)`).Scan(&roles)
	if err != nil || roles != "ann=1 opal=0" {
		t.Errorf("operator roles = %q, %v; want ann=1 opal=0", roles, err)
	}
	err = raw.QueryRow(`SELECT group_concat(kind, ' ') FROM (SELECT kind FROM security_log ORDER BY id)`).Scan(&log)
	if err != nil || log != "operator_granted operator_granted operator_withdrawn" {
		t.Errorf("security log = %q, %v", log, err)
	}
}
