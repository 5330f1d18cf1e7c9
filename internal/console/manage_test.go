package console_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// The faucet management pages (issue 11, section 5).

// manageFaucet creates a faucet of the member username, funded with funds.
func manageFaucet(t *testing.T, env *apptest.Env, owner *drip.User, name string, funds map[string]int64) *drip.Faucet {
	t.Helper()
	ctx := context.Background()
	f, _, err := env.App.Faucets.Create(ctx, faucet.CreateParams{OwnerID: owner.ID, Name: name,
		Domain: "faucet.example.com", URL: "https://faucet.example.com/"})
	if err != nil {
		t.Fatalf("create faucet: %v", err)
	}
	for coin, amount := range funds {
		if _, err := env.App.Ledger.Deposit(ctx, f, coin, amount); err != nil {
			t.Fatalf("deposit: %v", err)
		}
	}
	return f
}

// managePay pays to from f, as a faucet's key would.
func managePay(t *testing.T, env *apptest.Env, f *drip.Faucet, to, coin, amount, referral string) {
	t.Helper()
	if _, err := env.App.Payouts.Send(context.Background(), &payout.Caller{Faucet: f},
		payout.SendRequest{To: to, Currency: coin, Amount: amount, Referral: referral, IPAddress: "203.0.113.9"}); err != nil {
		t.Fatalf("pay %s %s to %s: %v", amount, coin, to, err)
	}
}

func manageGet(t *testing.T, env *apptest.Env, id int64) *drip.Faucet {
	t.Helper()
	f, err := env.App.Faucets.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get faucet %d: %v", id, err)
	}
	return f
}

func manageContains(t *testing.T, what string, p *apptest.Page, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(p.Body, w) {
			t.Errorf("%s: the page lacks %q", what, w)
		}
	}
}

// auditActions are the actions of the faucet's audit log, newest first,
// with whether each failed.
func manageAudit(t *testing.T, env *apptest.Env, f *drip.Faucet) []string {
	t.Helper()
	entries, err := env.App.Audit.List(context.Background(), f.ID, 50)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		s := e.Tool
		if e.IsError {
			s += " (refused)"
		}
		if e.UserID == 0 {
			t.Errorf("audit entry %s names no user", e.Tool)
		}
		out = append(out, s)
	}
	return out
}

func TestManagePagesAnswerTheOwnerOnly(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	env.Member(t, "bob", false)
	f := manageFaucet(t, env, alice, "Alice's faucet", map[string]int64{"BTC": 100000})
	owner, other := env.Browser(t).LogIn(t, "alice"), env.Browser(t).LogIn(t, "bob")
	for _, path := range []string{"", "/payouts", "/payouts.csv", "/settings", "/limits", "/ip-whitelist", "/anti-fraud", "/alerts", "/listing"} {
		url := fmt.Sprintf("/manage/%d%s", f.ID, path)
		if p := owner.Get(t, url); p.Status != http.StatusOK {
			t.Errorf("GET %s as the owner: %d\n%s", url, p.Status, p.Body)
		}
		if p := other.Get(t, url); p.Status != http.StatusNotFound || strings.Contains(p.Body, "Alice&#39;s faucet") {
			t.Errorf("GET %s as another user: %d, want 404 without the faucet's name", url, p.Status)
		}
	}
	for _, post := range []string{"/settings", "/limits", "/limits/remove", "/ip-whitelist", "/anti-fraud", "/anti-fraud/toggle", "/alerts", "/listing"} {
		if p := other.Post(t, fmt.Sprintf("/manage/%d%s", f.ID, post), "enabled", "false", "ip_whitelist", ""); p.Status != http.StatusNotFound {
			t.Errorf("POST %s as another user: %d, want 404", post, p.Status)
		}
	}
	if got := manageGet(t, env, f.ID); !got.Rules.AntiFraud || len(manageAudit(t, env, f)) != 0 {
		t.Error("another user's POSTs changed or audited the faucet")
	}
	if p := owner.Get(t, "/manage/999999"); p.Status != http.StatusNotFound {
		t.Errorf("a faucet that does not exist: %d", p.Status)
	}
	if p := env.Browser(t).Get(t, fmt.Sprintf("/manage/%d", f.ID)); p.Status != http.StatusSeeOther || p.Location != "/login" {
		t.Errorf("logged out: %d to %q", p.Status, p.Location)
	}
	p := owner.Get(t, "/manage")
	manageContains(t, "my faucets", p, fmt.Sprintf(`href="/manage/%d"`, f.ID), "Alice&#39;s faucet", "faucet.example.com", "0.00100000 BTC")
}

func TestManageCreateShowsTheKeyOnce(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, eng.Open(t), apptest.Options{Console: true})
			alice := env.Member(t, "alice", false)
			b := env.Browser(t).LogIn(t, "alice")

			bad := b.Post(t, "/manage", "faucet_name", "Mine", "faucet_domain", "not a domain", "faucet_url", "https://x.example.com/")
			if bad.Status != http.StatusUnprocessableEntity {
				t.Fatalf("a bad domain: %d", bad.Status)
			}
			manageContains(t, "a bad domain", bad, `<p class="field-error" id="faucet_domain-error">Invalid faucet domain`, `value="Mine"`)
			if list, _ := env.App.Store.FaucetListByOwner(context.Background(), alice.ID); len(list) != 0 {
				t.Fatalf("a refused create made %d faucets", len(list))
			}

			p := b.Post(t, "/manage", "faucet_name", "Mine", "faucet_domain", "mine.example.com", "faucet_url", "https://mine.example.com/claim")
			if p.Status != http.StatusOK || p.Header.Get("Cache-Control") != "no-store" {
				t.Fatalf("create: %d, Cache-Control %q\n%s", p.Status, p.Header.Get("Cache-Control"), p.Body)
			}
			key := regexp.MustCompile(`id="v1-key" class="manage-key" value="([0-9a-f]{48})"`).FindStringSubmatch(p.Body)
			if key == nil {
				t.Fatalf("the answer shows no v1 key:\n%s", p.Body)
			}
			manageContains(t, "create", p, "shown this once and never again")
			f, err := env.App.Faucets.Authenticate(context.Background(), key[1])
			if err != nil || f.OwnerID != alice.ID || f.Name != "Mine" || f.Domain != "mine.example.com" {
				t.Fatalf("the key shown is not the new faucet's: %+v, %v", f, err)
			}
			if got := manageAudit(t, env, f); len(got) != 1 || got[0] != "create_faucet" {
				t.Errorf("audit log %v, want the create", got)
			}
			entries, _ := env.App.Audit.List(context.Background(), f.ID, 10)
			for _, path := range []string{"/manage", fmt.Sprintf("/manage/%d", f.ID), fmt.Sprintf("/manage/%d/keys", f.ID)} {
				if again := b.Get(t, path); strings.Contains(again.Body, key[1]) {
					t.Errorf("%s shows the key again", path)
				}
			}
			for _, e := range entries {
				if strings.Contains(string(e.Arguments)+e.Result, key[1]) {
					t.Error("the audit log holds the key")
				}
			}
		})
	}
}

func TestManageSettings(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, eng.Open(t), apptest.Options{Console: true})
			alice := env.Member(t, "alice", false)
			f := manageFaucet(t, env, alice, "Old name", nil)
			b := env.Browser(t).LogIn(t, "alice")
			path := fmt.Sprintf("/manage/%d/settings", f.ID)
			manageContains(t, "settings", b.Get(t, path), `value="Old name"`, `value="60"`, `value="https://faucet.example.com/"`)

			form := []string{"faucet_name", "New name", "faucet_domain", "new.example.com", "faucet_url", "https://new.example.com/",
				"faucet_description", "Claim every hour.", "timer_minutes", "abc", "currencies_selected", "DOGE", "categories_selected", "games"}
			p := b.Post(t, path, form...)
			if p.Status != http.StatusUnprocessableEntity {
				t.Fatalf("timer abc: %d", p.Status)
			}
			manageContains(t, "timer abc", p, `id="timer_minutes-error">Invalid timer_minutes`, `value="New name"`)
			form[9] = "2000"
			p = b.Post(t, path, form...)
			manageContains(t, "timer 2000", p, `id="timer_minutes-error">Invalid timer_minutes: 1 to 1440.`)
			if got := manageGet(t, env, f.ID); got.Name != "Old name" || got.Settings.TimerMinutes != 60 {
				t.Fatalf("a refused change changed the faucet: %+v", got)
			}

			form[9] = "30"
			p = b.Post(t, path, form...)
			if p.Status != http.StatusSeeOther || p.Location != path+"?done=manage-settings" {
				t.Fatalf("save: %d to %q\n%s", p.Status, p.Location, p.Body)
			}
			got := manageGet(t, env, f.ID)
			if got.Name != "New name" || got.Domain != "new.example.com" || got.URL != "https://new.example.com/" ||
				got.Settings.Description != "Claim every hour." || got.Settings.TimerMinutes != 30 ||
				fmt.Sprint(got.Settings.Currencies) != "[DOGE]" || fmt.Sprint(got.Settings.Categories) != "[games]" {
				t.Fatalf("saved settings read back as %+v", got)
			}
			p = b.Get(t, p.Location)
			manageContains(t, "after saving", p, "The faucet&#39;s settings are saved.", `value="DOGE" checked`, `value="games" checked`)
			if got := manageAudit(t, env, f); fmt.Sprint(got) != "[update_faucet_settings update_faucet_settings (refused) update_faucet_settings (refused)]" {
				t.Errorf("audit log %v", got)
			}
		})
	}
}

func TestManageLimitsWhitelistRulesAlerts(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	f := manageFaucet(t, env, alice, "F", nil)
	b := env.Browser(t).LogIn(t, "alice")
	base := fmt.Sprintf("/manage/%d", f.ID)

	// Send limits: add two, a bad one refused, remove one.
	p := b.Post(t, base+"/limits", "coin", "BTC", "per", "recipient", "window", "2", "unit", "hours", "max_count", "5", "max_amount", "0.001")
	if p.Status != http.StatusSeeOther {
		t.Fatalf("add a limit: %d\n%s", p.Status, p.Body)
	}
	b.Post(t, base+"/limits", "coin", "", "per", "faucet", "window", "1", "unit", "days", "max_count", "100")
	p = b.Post(t, base+"/limits", "coin", "", "per", "ip", "window", "1", "unit", "days", "max_amount", "0.123456789")
	if p.Status != http.StatusUnprocessableEntity || !strings.Contains(p.Body, "at most 8 decimals") {
		t.Errorf("a 9-decimal amount: %d", p.Status)
	}
	p = b.Post(t, base+"/limits", "per", "ip", "window", "1", "unit", "days")
	manageContains(t, "no maximum", p, `id="limit-error"`)
	want := []drip.Limit{{Coin: "BTC", Per: drip.PerRecipient, WindowSeconds: 7200, MaxCount: 5, MaxAmount: 100000},
		{Per: drip.PerFaucet, WindowSeconds: 86400, MaxCount: 100}}
	if got := manageGet(t, env, f.ID).Limits; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("limits %v, want %v", got, want)
	}
	manageContains(t, "limits", b.Get(t, base+"/limits"), "2 hours", "1 day", "0.00100000")
	p = b.Post(t, base+"/limits/remove", "coin", "BTC", "per", "recipient", "window_seconds", "7200", "max_count", "5", "max_amount_units", "100000")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "send limits were removed, from 2 to 1") {
		t.Errorf("removing a limit: %d, want the page with the warning\n%s", p.Status, p.Body)
	}
	if got := manageGet(t, env, f.ID).Limits; len(got) != 1 || got[0].Per != drip.PerFaucet {
		t.Fatalf("after removal: %v", got)
	}

	// IP whitelist: set, a bad entry refused, emptied with the warning.
	p = b.Post(t, base+"/ip-whitelist", "ip_whitelist", "203.0.113.7\n198.51.100.0/24")
	if p.Status != http.StatusSeeOther {
		t.Fatalf("set whitelist: %d\n%s", p.Status, p.Body)
	}
	p = b.Post(t, base+"/ip-whitelist", "ip_whitelist", "203.0.113.7\nnot-an-ip")
	manageContains(t, "bad ip", p, `id="ip_whitelist-error">Invalid IP address or CIDR &#34;not-an-ip&#34;`, "not-an-ip</textarea>")
	if got := manageGet(t, env, f.ID).IPWhitelistStrings(); fmt.Sprint(got) != "[203.0.113.7/32 198.51.100.0/24]" {
		t.Fatalf("whitelist %v", got)
	}
	p = b.Post(t, base+"/ip-whitelist", "ip_whitelist", "")
	manageContains(t, "emptied", p, "the IP whitelist was emptied")
	if got := manageGet(t, env, f.ID).IPWhitelist; len(got) != 0 {
		t.Fatalf("whitelist after emptying %v", got)
	}

	// Anti-fraud: off with the warning, rules with a bad rank refused,
	// then saved; a lowered trust rank warns.
	p = b.Post(t, base+"/anti-fraud/toggle", "enabled", "false")
	manageContains(t, "off", p, "anti-fraud rank checks were turned off", "Turn rank checks on")
	p = b.Post(t, base+"/anti-fraud", "trust_rank", "101", "negative_rank", "50", "whitelist", "", "blacklist", "")
	manageContains(t, "rank 101", p, `id="trust_rank-error">Invalid rank`)
	p = b.Post(t, base+"/anti-fraud", "trust_rank", "40", "negative_rank", "50", "whitelist", "carol\n", "blacklist", "mallory\n203.0.113.0/24")
	if p.Status != http.StatusOK || !strings.Contains(p.Body, "added to the whitelist, so they skip the rank checks: carol") {
		t.Errorf("whitelisting carol: %d, want the warning", p.Status)
	}
	rules := manageGet(t, env, f.ID).Rules
	if rules.AntiFraud || rules.TrustRank != 40 || rules.NegativeRank != 50 || fmt.Sprint(rules.Whitelist) != "[carol]" || fmt.Sprint(rules.Blacklist) != "[mallory 203.0.113.0/24]" {
		t.Fatalf("rules %+v", rules)
	}
	p = b.Post(t, base+"/anti-fraud/toggle", "enabled", "true")
	if p.Status != http.StatusSeeOther || !manageGet(t, env, f.ID).Rules.AntiFraud {
		t.Errorf("turning checks on: %d", p.Status)
	}

	// Low-balance alert: thresholds in coins; a bad one changes nothing.
	p = b.Post(t, base+"/alerts", "enabled", "on", "threshold-BTC", "0.5", "threshold-DOGE", "1.2.3")
	manageContains(t, "bad threshold", p, `id="thresholds-error">Invalid threshold for DOGE`, `value="1.2.3"`)
	if got := manageGet(t, env, f.ID).LowBalance; got.Enabled || len(got.Thresholds) != 0 {
		t.Fatalf("a refused alert changed %+v", got)
	}
	p = b.Post(t, base+"/alerts", "enabled", "on", "threshold-BTC", "0.5", "threshold-DOGE", "12")
	if p.Status != http.StatusSeeOther {
		t.Fatalf("alerts: %d\n%s", p.Status, p.Body)
	}
	if got := manageGet(t, env, f.ID).LowBalance; !got.Enabled || got.Thresholds["BTC"] != 50000000 || got.Thresholds["DOGE"] != 1200000000 {
		t.Fatalf("alert %+v", got)
	}
	manageContains(t, "alerts", b.Get(t, base+"/alerts"), `value="0.50000000"`, `value="12.00000000"`, `name="enabled" value="on" checked`)

	got := manageAudit(t, env, f)
	wantAudit := []string{"toggle_low_balance_notification", "toggle_low_balance_notification (refused)", "toggle_anti_fraud",
		"update_anti_fraud_rules", "update_anti_fraud_rules (refused)", "toggle_anti_fraud", "set_ip_whitelist",
		"set_ip_whitelist (refused)", "set_ip_whitelist", "set_ratelimits", "set_ratelimits (refused)", "set_ratelimits (refused)",
		"set_ratelimits", "set_ratelimits"}
	if fmt.Sprint(got) != fmt.Sprint(wantAudit) {
		t.Errorf("audit log\n got %v\nwant %v", got, wantAudit)
	}
	entries, _ := env.App.Audit.List(context.Background(), f.ID, 50)
	for _, i := range []int{3, 5, 6, 9} { // the whitelisting of carol, checks off, whitelist emptied, a limit removed
		if !strings.Contains(entries[i].Result, "Warning: This call weakened") {
			t.Errorf("audit entry %s does not keep its warning: %q", entries[i].Tool, entries[i].Result)
		}
	}
	if strings.Contains(entries[2].Result, "Warning") {
		t.Errorf("turning checks on is recorded with a warning: %q", entries[2].Result)
	}
}

func TestManageListing(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	f := manageFaucet(t, env, alice, "F", map[string]int64{"BTC": 300000})
	b := env.Browser(t).LogIn(t, "alice")
	path := fmt.Sprintf("/manage/%d/listing", f.ID)
	manageContains(t, "no offer", b.Get(t, path), "The operator offers no listing yet.")
	if err := env.App.Listing.SetCost(context.Background(), "BTC", 100000); err != nil {
		t.Fatal(err)
	}
	if err := env.App.Listing.SetCost(context.Background(), "DOGE", 5); err != nil {
		t.Fatal(err)
	}
	p := b.Get(t, path)
	manageContains(t, "offers", p, "Pay 0.00100000 BTC and request", "balance too low")
	p = b.Post(t, path, "coin", "DOGE")
	if p.Status != http.StatusConflict && p.Status != http.StatusUnprocessableEntity || env.Balance(t, f.AccountID, "BTC") != 300000 {
		t.Errorf("a listing the balance cannot pay: %d", p.Status)
	}
	p = b.Post(t, path, "coin", "BTC")
	if p.Status != http.StatusSeeOther {
		t.Fatalf("request: %d\n%s", p.Status, p.Body)
	}
	if got := env.Balance(t, f.AccountID, "BTC"); got != 200000 {
		t.Errorf("balance after the request %d, want 200000", got)
	}
	manageContains(t, "pending", b.Get(t, p.Location), "Listing requested", ">pending<")
	if p := b.Post(t, path, "coin", "BTC"); p.Status != http.StatusConflict || env.Balance(t, f.AccountID, "BTC") != 200000 {
		t.Errorf("a second request: %d", p.Status)
	}
	env.Reconcile(t)
}

func TestManagePayoutsFilterAndCSV(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, eng.Open(t), apptest.Options{Console: true})
			alice := env.Member(t, "alice", false)
			env.Member(t, "bob", false)
			carol := env.Member(t, "carol", false)
			f := manageFaucet(t, env, alice, "F", map[string]int64{"BTC": 10000000, "DOGE": 10000000})
			managePay(t, env, f, "bob", "BTC", "1000", "spring")
			managePay(t, env, f, "carol@example.com", "BTC", "2000", "=HYPERLINK(\"http://evil.example/\")")
			managePay(t, env, f, "bob", "DOGE", "3000", "spring")
			b := env.Browser(t).LogIn(t, "alice")
			base := fmt.Sprintf("/manage/%d/payouts", f.ID)

			rows := func(p *apptest.Page) int { return strings.Count(p.Body, "<tr>\n<td>") }
			if p := b.Get(t, base); rows(p) != 3 {
				t.Errorf("unfiltered: %d rows", rows(p))
			}
			p := b.Get(t, base+"?coin=btc")
			if rows(p) != 2 {
				t.Errorf("coin=btc: %d rows", rows(p))
			}
			manageContains(t, "coin", p, "0.00001000", "0.00002000", `<option value="BTC" selected>`)
			bobUser, _ := env.App.Users.ByUsername(context.Background(), "bob")
			for _, to := range []string{"bob", "bob@example.com", bobUser.PayoutUserHash} {
				if p := b.Get(t, base+"?recipient="+to); rows(p) != 2 {
					t.Errorf("recipient=%s: %d rows", to, rows(p))
				}
			}
			if p := b.Get(t, base+"?recipient=carol&referral=spring"); rows(p) != 0 || !strings.Contains(p.Body, "No payout matches") {
				t.Errorf("carol with referral spring: %d rows", rows(p))
			}
			if p := b.Get(t, fmt.Sprintf("%s?recipient_id=%d", base, carol.ID)); rows(p) != 1 {
				t.Errorf("recipient_id: %d rows", rows(p))
			}
			p = b.Get(t, base+"?recipient=nobody_here")
			manageContains(t, "unknown recipient", p, `id="recipient-error">Invalid recipient`)
			if p = b.Get(t, base+"?coin=NOPE"); p.Status != http.StatusUnprocessableEntity {
				t.Errorf("unknown coin: %d", p.Status)
			}

			p = b.Get(t, base+".csv?coin=BTC")
			if p.Status != http.StatusOK || !strings.HasPrefix(p.Header.Get("Content-Type"), "text/csv") ||
				!strings.HasPrefix(p.Header.Get("Content-Disposition"), "attachment;") {
				t.Fatalf("csv: %d %v", p.Status, p.Header)
			}
			records, err := csv.NewReader(strings.NewReader(p.Body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(records) != 3 || strings.Join(records[0], ",") != "payout_id,created_at,currency,amount,to,payout_user_hash,ip_address,referral" {
				t.Fatalf("csv rows %v", records)
			}
			if records[1][3] != "0.00002000" || records[1][4] != "carol@example.com" || records[1][7] != `'=HYPERLINK("http://evil.example/")` {
				t.Errorf("newest row %v: the formula is not neutralised or the amount not exact", records[1])
			}
			if records[2][2] != "BTC" || records[2][3] != "0.00001000" || records[2][7] != "spring" {
				t.Errorf("oldest row %v", records[2])
			}
		})
	}
}

// Paging: 50 a page, the next page's link keeps the filter, and the
// export holds every row.
func TestManagePayoutsPages(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	env.Member(t, "bob", false)
	f := manageFaucet(t, env, alice, "F", map[string]int64{"BTC": 100000000})
	for i := range 120 {
		managePay(t, env, f, "bob", "BTC", fmt.Sprint(1000+i), "r")
	}
	b := env.Browser(t).LogIn(t, "alice")
	base := fmt.Sprintf("/manage/%d/payouts", f.ID)
	seen := map[string]bool{}
	next := base + "?referral=r"
	for pages := 0; next != ""; pages++ {
		if pages > 3 {
			t.Fatal("more than 3 pages")
		}
		p := b.Get(t, strings.ReplaceAll(next, "&amp;", "&"))
		for _, m := range regexp.MustCompile(`<td class="num">(0\.0000\d{4})</td>`).FindAllStringSubmatch(p.Body, -1) {
			if seen[m[1]] {
				t.Errorf("%s listed twice", m[1])
			}
			seen[m[1]] = true
		}
		next = ""
		if m := regexp.MustCompile(`href="([^"]+)">Older payouts`).FindStringSubmatch(p.Body); m != nil {
			next = m[1]
			if !strings.Contains(next, "referral=r") {
				t.Errorf("the next page drops the filter: %s", next)
			}
		}
	}
	if len(seen) != 120 {
		t.Errorf("pages listed %d payouts, want 120", len(seen))
	}
	if p := b.Get(t, base+".csv"); strings.Count(p.Body, "\n") != 121 {
		t.Errorf("csv has %d lines, want 121", strings.Count(p.Body, "\n"))
	}
}

func TestManageOverviewChart(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	env.Member(t, "bob", false)
	f := manageFaucet(t, env, alice, "F", map[string]int64{"BTC": 10000000})
	managePay(t, env, f, "bob", "BTC", "1000", "")
	managePay(t, env, f, "bob", "BTC", "2000", "")
	env.Clock.Advance(-48 * time.Hour)
	managePay(t, env, f, "bob", "BTC", "500", "")
	env.Clock.Advance(48 * time.Hour)
	b := env.Browser(t).LogIn(t, "alice")
	p := b.Get(t, fmt.Sprintf("/manage/%d", f.ID))
	manageContains(t, "overview", p,
		`role="img" aria-labelledby="chart-BTC-title chart-BTC-desc"`,
		"<title>2026-03-14: 2 payouts, 0.00003000 BTC</title>",
		"<title>2026-03-12: 1 payout, 0.00000500 BTC</title>",
		"<title>2026-03-13: no payouts</title>",
		"3 payouts, 0.00003500 BTC in 30 days.",
		"0.09996500", // the balance left
		env.App.Users.PayoutHash(manageUser(t, env, "bob").ID))
	if n := strings.Count(p.Body, `class="manage-bar"`); n != 2 {
		t.Errorf("%d bars with payouts, want 2", n)
	}
	if n := strings.Count(p.Body, `class="manage-bar-empty"`); n != 28 {
		t.Errorf("%d empty days, want 28", n)
	}
	// The tallest day is the full height; the other in proportion.
	if !strings.Contains(p.Body, `height="140.00" class="manage-bar"`) || !strings.Contains(p.Body, `height="23.33" class="manage-bar"`) {
		t.Errorf("bar heights are not in proportion:\n%s", regexp.MustCompile(`<rect[^>]*class="manage-bar"`).FindAllString(p.Body, -1))
	}
}

func manageUser(t *testing.T, env *apptest.Env, name string) *drip.User {
	t.Helper()
	u, err := env.App.Users.ByUsername(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A hostile name, description, referral and destination are escaped on
// every page that shows them.
func TestManageEscapesWhatUsersType(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	alice := env.Member(t, "alice", false)
	env.Member(t, "bob", false)
	f := manageFaucet(t, env, alice, "F", map[string]int64{"BTC": 10000000})
	const script, img = `<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`
	b := env.Browser(t).LogIn(t, "alice")
	p := b.Post(t, fmt.Sprintf("/manage/%d/settings", f.ID), "faucet_name", script, "faucet_domain", "faucet.example.com",
		"faucet_url", "https://faucet.example.com/", "faucet_description", img, "timer_minutes", "60")
	if p.Status != http.StatusSeeOther {
		t.Fatalf("save: %d\n%s", p.Status, p.Body)
	}
	managePay(t, env, f, "bob", "BTC", "1000", img)
	for _, path := range []string{"/manage", fmt.Sprintf("/manage/%d", f.ID), fmt.Sprintf("/manage/%d/payouts", f.ID),
		fmt.Sprintf("/manage/%d/settings", f.ID), fmt.Sprintf("/manage/%d/payouts?referral=%s", f.ID, strings.ReplaceAll(img, " ", "+"))} {
		p := b.Get(t, path)
		if strings.Contains(p.Body, "<script>alert") || strings.Contains(p.Body, "<img src=x") {
			t.Errorf("%s shows a payload unescaped", path)
		}
		if !strings.Contains(p.Body, "&lt;script&gt;alert(1)&lt;/script&gt;") && !strings.Contains(p.Body, "&lt;img src=x") {
			t.Errorf("%s shows no escaped payload", path)
		}
	}
}
