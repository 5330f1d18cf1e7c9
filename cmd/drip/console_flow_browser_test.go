package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserConsoleOwnerFlow walks the wallet, faucet and operator pages
// in a real Chromium against the real drip serve, as issue 11's people
// would: a recipient signs up (the link read from a real SMTP server);
// the operator deposits into the demo owner's wallet; the owner creates a
// faucet, funds it from the wallet, mints a send key on its page and pays
// the recipient with it through v2; the payout shows on the faucet's pages
// and in the recipient's wallet; the owner rotates the v1 key (the old one
// refused at once); the operator suspends the owner (the keys refused).
// Every page is saved at desktop and phone width; the ledger reconciles.
func TestBrowserConsoleOwnerFlow(t *testing.T) {
	t.Parallel()
	in := startInbox(t)
	dataDir := t.TempDir()
	s := startConsole(t, dataDir, "--smtp-url", in.URL())
	db := []string{"--data-dir", dataDir}
	const opPW, danaPW = "the operator's long password", "dana's long password"
	noteSecret("the operator's password", opPW)
	noteSecret("dana's password", danaPW)
	runAdmin(t, db, "user", "create", "--username", "olga", "--email", "olga@example.com", "--password", opPW, "--verified", "--operator")
	c := newChrome(t, s.base)
	any := func(path string) {
		t.Helper()
		c.run("open "+path, chromedp.Navigate(s.base+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
	}
	has := func(what, sel string, want ...string) {
		t.Helper()
		got := c.text(sel)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", what, got, w)
			}
		}
	}

	// A recipient signs up; the link comes through SMTP.
	c.run("sign up", chromedp.Navigate(s.base+"/signup"), title("Sign up"), fill("#username", "dana"), fill("#email", "dana@example.com"),
		fill("#password", danaPW))
	c.send("sign up", "form.card button")
	c.run("signed up", title("Check your email"))
	c.run("verify page", chromedp.Navigate(in.link(t, "dana@example.com", verifyLink)), title("Confirm your email"))
	c.send("verify", "form.card button")
	c.run("verified", title("Log in"))
	c.login("dana", danaPW)
	c.run("dana's wallet", title("Wallet"))
	c.noteCookies()
	has("a new wallet", "main", "payout_user_hash")
	c.shot("30-wallet-new-user")
	c.logout()

	// The operator deposits 5 DOGE into the demo owner's wallet.
	c.login("olga", opPW)
	any("/operator")
	has("the operator's overview", "main", "OK")
	c.shot("31-operator-overview")
	// A copy of events by faucet that names no event (D72), as only a bug
	// or a hand could leave: the overview lists it; removed, it is OK again.
	stray := func(q string) {
		t.Helper()
		conn, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "drip.db")+"?_pragma=busy_timeout(10000)")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	stray(`INSERT INTO events_by_faucet (faucet_id, seq) VALUES (1, 999999)`)
	any("/operator")
	has("the overview of a copy that disagrees", "main", "Event 999999")
	c.shot("31-operator-overview-mismatch")
	stray(`DELETE FROM events_by_faucet WHERE seq = 999999`)
	// A sum of the statistics for a payout faucet 1 never made (D73): no
	// money is wrong, and the overview says so.
	stray(`INSERT INTO stats_users (faucet_id, coin, recipient_id, payouts, amount, last_at) VALUES (1, 'DOGE', 999999, 1, 500, 0)`)
	any("/operator")
	has("the overview of statistics that disagree", "main", "statistics disagree with their payouts")
	has("the faucet whose statistics disagree", "main", "Faucet 1")
	c.shot("31-operator-overview-statistics")
	// Undone by hand, with the count of recipients its insert added: on
	// SQLite only the rebuild takes sums off the counts (D73).
	stray(`DELETE FROM stats_users WHERE recipient_id = 999999`)
	stray(`UPDATE stats_user_counts SET recipients = recipients - 1 WHERE faucet_id = 1 AND coin = 'DOGE'`)
	stray(`DELETE FROM stats_user_counts WHERE recipients = 0`)
	any("/operator/deposits")
	c.shot("32-operator-deposits")
	c.run("deposit form", chromedp.Click(chromedp.CSS(`input[name="kind"][value="user"]`)), fill("#target", "demo_owner"), choose("#coin", "DOGE"),
		fill("#amount", "5"))
	c.send("deposit", `form[action="/operator/deposits"] button`)
	has("the deposit's notice", ".flash", "deposit is made")
	c.shot("33-operator-deposited")
	for i, p := range []string{"/operator/users?q=demo", "/operator/coins", "/operator/listing", "/operator/log"} {
		any(p)
		c.shot(fmt.Sprintf("%d-operator-%s", 34+i, strings.Trim(strings.SplitN(strings.TrimPrefix(p, "/operator/"), "?", 2)[0], "/")))
	}
	has("the operator log", "main", "demo_owner")
	c.logout()

	// The owner creates a faucet, funds it from the wallet and mints a key.
	c.login("demo_owner", s.ownerPassword)
	c.run("owner's wallet", title("Wallet"))
	has("the owner's wallet", "main", "5.00000000")
	c.shot("38-owner-wallet")
	any("/manage")
	c.shot("39-my-faucets")
	c.run("create a faucet", fill("#faucet_name", "Browser faucet"), fill("#faucet_domain", "browser.example.com"),
		fill("#faucet_url", "https://browser.example.com/"))
	c.send("create", `form[action="/manage"] button`)
	c.run("created", title("Faucet created"))
	v1 := c.value("#v1-key")
	noteSecret("a v1 key", v1)
	c.shot("40-faucet-created")
	link, err := chromedp.Run(c.ctx, chromedp.AttributeValue(chromedp.CSS(`a.button[href^="/manage/"]`), "href"))
	if err != nil {
		t.Fatalf("the new faucet's link: %v", err)
	}
	id := strings.TrimPrefix(link.Value, "/manage/")
	base := "/manage/" + id
	any("/wallet/fund")
	c.run("fund form", choose("#faucet", id), choose("#coin", "DOGE"), fill("#amount", "2.5"))
	c.send("fund it", "form#fund button")
	has("the fund's notice", ".flash", "Moved")
	has("after funding", "main", "2.50000000")
	c.shot("41-wallet-funded")
	any(base + "/keys")
	c.shot("42-keys")
	c.run("choose the send scope", chromedp.Click(chromedp.CSS(`input[name="scope"][value="send"]`)))
	c.send("mint a send key", `form[action="`+base+`/keys"] button[type="submit"]`)
	c.run("minted", title("Your new API key"))
	key := c.value("#new-key")
	noteSecret("a v2 key", key)
	c.shot("43-key-minted")

	// Pay dana with it through v2.
	status, body := v2(t, s.base, key, "POST", "/send", `{"idempotency_key":"browser-1","to":"dana","amount":123456789,"currency":"DOGE"}`)
	if status != http.StatusOK {
		t.Fatalf("v2 send with the minted key: %d %s", status, body)
	}
	any(base)
	has("the faucet's overview", "main", "Browser faucet", "1.23456789")
	c.shot("44-faucet-overview")
	any(base + "/payouts")
	has("the faucet's payouts", "main", "dana", "1.23456789")
	c.shot("45-faucet-payouts")
	for i, tab := range []string{"settings", "limits", "ip-whitelist", "anti-fraud", "alerts", "listing", "audit"} {
		any(base + "/" + tab)
		c.shot(fmt.Sprintf("%d-faucet-%s", 46+i, tab))
	}

	// Rotate the v1 key: both work until confirmed, then the old one dies.
	any(base + "/keys")
	c.send("rotate", `form[action="`+base+`/keys/v1/rotate"] button`)
	c.run("rotated", title("Your new v1 key"))
	newV1 := c.value("#new-key")
	noteSecret("a v1 key", newV1)
	c.shot("53-v1-rotated")
	if v1Balance(t, s.base, v1) != 200 || v1Balance(t, s.base, newV1) != 200 {
		t.Error("during a rotation both v1 keys should work")
	}
	c.send("confirm the rotation", `form[action="`+base+`/keys/v1/confirm"] button`)
	has("the rotation's notice", ".flash", "v1")
	c.shot("54-v1-confirmed")
	if got := v1Balance(t, s.base, v1); got == 200 {
		t.Error("the old v1 key still works after the rotation was confirmed")
	}
	if got := v1Balance(t, s.base, newV1); got != 200 {
		t.Errorf("the new v1 key: status %d", got)
	}
	c.logout()

	// Dana sees the payout in her wallet.
	c.login("dana", danaPW)
	any("/wallet/payouts")
	has("dana's payouts", "main", "Browser faucet", "1.23456789")
	c.shot("55-wallet-payouts")
	any("/wallet")
	has("dana's wallet", "main", "1.23456789")
	c.shot("56-wallet-paid")
	any("/wallet/addresses")
	c.shot("57-wallet-addresses")
	c.logout()

	// The operator suspends the owner: the keys are refused at once.
	c.login("olga", opPW)
	any("/operator/users?q=demo_owner")
	c.send("suspend the owner", `form[action$="/suspend"] button`)
	has("the suspension's notice", ".flash", "suspended")
	c.shot("58-operator-suspended")
	if status, body := v2(t, s.base, key, "GET", "/balances", ""); status != http.StatusForbidden {
		t.Errorf("the suspended owner's v2 key: %d %s, want 403", status, body)
	}
	if got := v1Balance(t, s.base, newV1); got == 200 {
		t.Error("the suspended owner's v1 key still works")
	}
	c.logout()
	s.stop()
	if out := runAdmin(t, db, "reconcile"); out["ok"] != true {
		t.Errorf("the ledger does not reconcile: %v", out)
	}
}

// v2 calls a v2 path with a key and returns the status and body.
func v2(t *testing.T, base, key, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+"/api/v2"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// v1Balance asks v1 for a balance with the key and returns the envelope's
// status (200 when the key works).
func v1Balance(t *testing.T, base, key string) int {
	t.Helper()
	res, err := http.PostForm(base+"/api/v1/balance", url.Values{"api_key": {key}, "currency": {"DOGE"}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var env struct{ Status int }
	if err := json.NewDecoder(res.Body).Decode(&env); err != nil {
		t.Fatal(err)
	}
	return env.Status
}
