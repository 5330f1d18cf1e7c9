package console_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// keysFaucet creates a faucet owned by the member username, funded with
// 1 BTC, and returns it with its v1 key.
func keysFaucet(t *testing.T, env *apptest.Env, owner *drip.User, name string) (*drip.Faucet, string) {
	t.Helper()
	f, v1, err := env.App.Faucets.Create(context.Background(), faucet.CreateParams{
		OwnerID: owner.ID, Name: name, Domain: "faucet.example.com", URL: "https://faucet.example.com/"})
	if err != nil {
		t.Fatalf("create faucet: %v", err)
	}
	if _, err := env.App.Ledger.Deposit(context.Background(), f, "BTC", 100_000_000); err != nil {
		t.Fatalf("deposit: %v", err)
	}
	return f, v1
}

var (
	v2KeyRE = regexp.MustCompile(`<textarea id="new-key"[^>]*>(drip_[a-z2-7]{8}_[a-z2-7]{32})</textarea>`)
	v1KeyRE = regexp.MustCompile(`<textarea id="new-key"[^>]*>([0-9a-f]{48})</textarea>`)
)

// keysShown is the key an answer page shows in its read-only field.
func keysShown(t *testing.T, re *regexp.Regexp, p *apptest.Page) string {
	t.Helper()
	m := re.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no key shown (status %d):\n%s", p.Status, p.Body)
	}
	if p.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("a page showing a key has Cache-Control %q, want no-store", p.Header.Get("Cache-Control"))
	}
	return m[1]
}

func keysWant(t *testing.T, what string, p *apptest.Page, status int, location string) {
	t.Helper()
	if p.Status != status || p.Location != location {
		t.Fatalf("%s: %d to %q, want %d to %q\n%s", what, p.Status, p.Location, status, location, p.Body)
	}
}

func keysHas(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}

func keysLacks(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(body, u) {
			t.Errorf("%s holds %q", what, u)
		}
	}
}

// keysSecurityLog is the member's security log, as the store keeps it.
func keysSecurityLog(t *testing.T, env *apptest.Env, u *drip.User) string {
	t.Helper()
	events, err := env.App.Store.SecurityLogList(context.Background(), &store.SecurityLogListParams{UserID: u.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "%s %s\n", e.Kind, e.Detail)
	}
	return b.String()
}

// A v2 key minted on the page is shown once, works on v2 with the scopes
// chosen, is listed with its limits and last use, and is refused the
// moment it is revoked; the security log and the audit log record both
// changes, and neither holds the secret. On both engines.
func TestKeysMintShowOnceAndRevoke(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, eng.Open(t), apptest.Options{Console: true})
			alice := env.Member(t, "alice", false)
			f, _ := keysFaucet(t, env, alice, "Alice's faucet")
			path := fmt.Sprintf("/manage/%d/keys", f.ID)
			b := env.Browser(t).LogIn(t, "alice")

			p := b.Get(t, path)
			keysWant(t, "the keys page", p, http.StatusOK, "")
			keysHas(t, "the keys page", p.Body, "No v2 keys yet", "Rotate the v1 key", `<label for="expires">`, `<label for="ips">`, `<label for="cap">`)

			p = b.Post(t, path, "scope", "read", "scope", "send", "ips", "127.0.0.1\r\n10.0.0.0/8", "cap", "25.50", "expires", "2026-04-01")
			keysWant(t, "mint", p, http.StatusOK, "")
			secret := keysShown(t, v2KeyRE, p)
			prefix := secret[:len("drip_")+8]
			keysHas(t, "the minted page", p.Body, "read, send", "$25.5", "127.0.0.1/32, 10.0.0.0/8", "2026-04-01 00:00", `data-copy="new-key" hidden`, `src="/assets/console.js"`)

			// The key works with the scopes chosen, and no other.
			if r := env.V2(t, secret, "/balances", nil); r.HTTPStatus != http.StatusOK {
				t.Fatalf("the minted key reads balances: %d %s", r.HTTPStatus, r.Raw)
			}
			if r := env.V2(t, secret, "/ip-whitelist", nil); r.HTTPStatus != http.StatusForbidden {
				t.Errorf("the read and send key reads the IP whitelist (manage): %d %s", r.HTTPStatus, r.Raw)
			}

			env.Clock.Advance(2 * time.Minute)
			list := b.Get(t, path)
			keysLacks(t, "the keys page after minting", list.Body, secret)
			keysHas(t, "the keys page after minting", list.Body, prefix, "read, send", "$25.5", "2026-04-01 00:00",
				"2026-03-14 15:09", // created, and last used by the reads above
				`Revoke<span class="keys-sr"> `+prefix)

			keys, err := env.App.Keys.List(context.Background(), f.ID)
			if err != nil || len(keys) != 1 {
				t.Fatalf("keys: %v %v", keys, err)
			}
			k := keys[0]
			if k.LastUsedAt == nil || !k.LastUsedAt.Equal(time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)) {
				t.Errorf("last used %v, want the time of the first read", k.LastUsedAt)
			}

			p = b.Post(t, fmt.Sprintf("%s/%d/revoke", path, k.ID))
			keysWant(t, "revoke", p, http.StatusSeeOther, path+"?done=key-revoked")
			if r := env.V2(t, secret, "/balances", nil); r.HTTPStatus != http.StatusUnauthorized {
				t.Errorf("the revoked key reads balances: %d %s", r.HTTPStatus, r.Raw)
			}
			list = b.Get(t, path+"?done=key-revoked")
			keysHas(t, "the keys page after revoking", list.Body, "The key is revoked", `<span class="badge off">revoked</span>`)
			keysLacks(t, "the keys page after revoking", list.Body, `Revoke<span class="keys-sr"> `+prefix)

			// A second revocation changes nothing and says why.
			p = b.Post(t, fmt.Sprintf("%s/%d/revoke", path, k.ID))
			keysWant(t, "revoke again", p, http.StatusConflict, "")
			keysHas(t, "revoke again", p.Body, "is revoked already")

			log := keysSecurityLog(t, env, alice)
			keysHas(t, "the security log", log, "key_minted "+prefix+", scopes read, send", "key_revoked "+prefix)
			keysLacks(t, "the security log", log, secret)
			keysHas(t, "the account page", b.Get(t, "/account").Body, "key minted", "key revoked", prefix)

			audit := b.Get(t, fmt.Sprintf("/manage/%d/audit", f.ID))
			keysWant(t, "the audit log", audit, http.StatusOK, "")
			keysHas(t, "the audit log", audit.Body, "revoke key", "mint key", "alice", html.EscapeString(`{"daily_usd_cap":"25.5"`), "Key "+prefix+" minted.")
			keysLacks(t, "the audit log", audit.Body, secret)
			entries, err := env.App.Audit.List(context.Background(), f.ID, 10)
			if err != nil || len(entries) != 3 {
				t.Fatalf("audit entries: %v %v", entries, err)
			}
			for _, e := range entries {
				keysLacks(t, "an audit entry", string(e.Arguments)+e.Result, secret)
			}
			env.Reconcile(t)
		})
	}
}

// Rotating the v1 key shows the new key once; both keys work until the
// rotation is confirmed, and then the old key is refused at once.
func TestKeysV1Rotation(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, eng.Open(t), apptest.Options{Console: true})
			alice := env.Member(t, "alice", false)
			f, old := keysFaucet(t, env, alice, "Alice's faucet")
			path := fmt.Sprintf("/manage/%d/keys", f.ID)
			b := env.Browser(t).LogIn(t, "alice")
			balance := func(key string) int {
				return env.Post(t, "/getbalance", url.Values{"api_key": {key}, "currency": {"BTC"}}).Status()
			}

			p := b.Post(t, path+"/v1/rotate")
			keysWant(t, "rotate", p, http.StatusOK, "")
			fresh := keysShown(t, v1KeyRE, p)
			keysHas(t, "the rotated page", p.Body, `action="`+path+`/v1/confirm"`)
			if balance(old) != 200 || balance(fresh) != 200 {
				t.Fatalf("before the confirmation: old key %d, new key %d, want both 200", balance(old), balance(fresh))
			}
			list := b.Get(t, path)
			keysHas(t, "the keys page during a rotation", list.Body, "Rotation pending", "Confirm the rotation")
			keysLacks(t, "the keys page during a rotation", list.Body, fresh, old)

			keysWant(t, "confirm", b.Post(t, path+"/v1/confirm"), http.StatusSeeOther, path+"?done=v1-confirmed")
			if balance(old) != 403 || balance(fresh) != 200 {
				t.Errorf("after the confirmation: old key %d, new key %d, want 403 and 200", balance(old), balance(fresh))
			}
			list = b.Get(t, path+"?done=v1-confirmed")
			keysHas(t, "the keys page after the rotation", list.Body, "the new v1 key is the only one", "Rotate the v1 key")
			keysLacks(t, "the keys page after the rotation", list.Body, "Rotation pending", fresh)

			// Nothing to confirm: refused, nothing changes.
			p = b.Post(t, path+"/v1/confirm")
			keysHas(t, "confirm with no rotation", p.Body, "no pending key rotation")
			if balance(fresh) != 200 {
				t.Error("a refused confirmation changed the key")
			}

			log := keysSecurityLog(t, env, alice)
			keysHas(t, "the security log", log, "v1_key_rotated", "v1_key_rotation_confirmed")
			keysLacks(t, "the security log", log, fresh, old)
			audit := b.Get(t, fmt.Sprintf("/manage/%d/audit", f.ID)).Body
			keysHas(t, "the audit log", audit, "rotate v1 key", "confirm v1 key rotation", "no pending key rotation")
			keysLacks(t, "the audit log", audit, fresh, old)
		})
	}
}

// Every key change needs a session confirmed within 15 minutes: without
// it each POST goes to confirm it is you and changes nothing; once
// confirmed (with the password, as these members have no second factor)
// the browser comes back to the page and the change goes through.
func TestKeysAskToConfirmItIsYou(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	alice := env.Member(t, "alice", false)
	f, v1 := keysFaucet(t, env, alice, "Alice's faucet")
	path := fmt.Sprintf("/manage/%d/keys", f.ID)
	b := env.Browser(t).LogIn(t, "alice")
	p := b.Post(t, path, "scope", "read")
	secret := keysShown(t, v2KeyRE, p)
	keys, _ := env.App.Keys.List(context.Background(), f.ID)

	env.Clock.Advance(16 * time.Minute)
	if p := b.Get(t, path); p.Status != http.StatusOK || !strings.Contains(p.Body, "ask for your password again first") {
		t.Errorf("the list is not sensitive, and says the changes will ask: %d", p.Status)
	}
	confirm := "/account/confirm?next=" + url.QueryEscape(path)
	for _, post := range []string{path, fmt.Sprintf("%s/%d/revoke", path, keys[0].ID), path + "/v1/rotate", path + "/v1/confirm"} {
		keysWant(t, "POST "+post, b.Post(t, post, "scope", "read"), http.StatusSeeOther, confirm)
	}
	after, _ := env.App.Keys.List(context.Background(), f.ID)
	if len(after) != 1 || after[0].RevokedAt != nil {
		t.Errorf("keys changed without a confirmation: %+v", after)
	}
	if r := env.V2(t, secret, "/balances", nil); r.HTTPStatus != http.StatusOK {
		t.Errorf("the key stopped working: %d", r.HTTPStatus)
	}
	if pending, _ := env.App.Store.FaucetKeyPending(context.Background(), f.ID); pending {
		t.Error("a rotation began without a confirmation")
	}
	if s := env.Post(t, "/getbalance", url.Values{"api_key": {v1}}).Status(); s != 200 {
		t.Errorf("the v1 key: %d", s)
	}

	keysWant(t, "confirm it is you", b.Post(t, "/account/confirm", "password", apptest.Password, "next", path),
		http.StatusSeeOther, path+"?done=confirmed")
	keysWant(t, "revoke, confirmed", b.Post(t, fmt.Sprintf("%s/%d/revoke", path, keys[0].ID)), http.StatusSeeOther, path+"?done=key-revoked")
	if r := env.V2(t, secret, "/balances", nil); r.HTTPStatus != http.StatusUnauthorized {
		t.Errorf("the revoked key: %d", r.HTTPStatus)
	}
}

// Another user's faucet, its keys and its audit log answer 404, and a
// POST to them changes nothing.
func TestKeysOfAnotherUsersFaucet(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	alice, bob := env.Member(t, "alice", false), env.Member(t, "bob", false)
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	secret := env.Key(t, f, drip.ScopeRead)
	keys, _ := env.App.Keys.List(context.Background(), f.ID)
	b := env.Browser(t).LogIn(t, "bob")
	path := fmt.Sprintf("/manage/%d/keys", f.ID)
	for _, get := range []string{path, fmt.Sprintf("/manage/%d/audit", f.ID), "/manage/99999/keys", "/manage/x/keys"} {
		if p := b.Get(t, get); p.Status != http.StatusNotFound || strings.Contains(p.Body, "Alice") {
			t.Errorf("GET %s: %d", get, p.Status)
		}
	}
	for _, post := range []string{path, fmt.Sprintf("%s/%d/revoke", path, keys[0].ID), path + "/v1/rotate", path + "/v1/confirm"} {
		if p := b.Post(t, post, "scope", "read"); p.Status != http.StatusNotFound {
			t.Errorf("POST %s: %d", post, p.Status)
		}
	}
	// Nor does a key of alice's answer under bob's own faucet.
	bobs, _ := keysFaucet(t, env, bob, "Bob's faucet")
	p := b.Post(t, fmt.Sprintf("/manage/%d/keys/%d/revoke", bobs.ID, keys[0].ID))
	keysWant(t, "revoke alice's key through bob's faucet", p, http.StatusNotFound, "")
	keysHas(t, "revoke alice's key through bob's faucet", p.Body, "no such key among this faucet")

	after, _ := env.App.Keys.List(context.Background(), f.ID)
	if len(after) != 1 || after[0].RevokedAt != nil {
		t.Errorf("keys changed: %+v", after)
	}
	if r := env.V2(t, secret, "/balances", nil); r.HTTPStatus != http.StatusOK {
		t.Errorf("alice's key: %d", r.HTTPStatus)
	}
	if pending, _ := env.App.Store.FaucetKeyPending(context.Background(), f.ID); pending {
		t.Error("bob began a rotation of alice's v1 key")
	}
	if n := keysSecurityLog(t, env, bob); strings.Contains(n, "key_") {
		t.Errorf("bob's refused changes are in his security log as made:\n%s", n)
	}
}

// A mint form with a mistake shows each error next to its field, keeps
// what was typed, and mints nothing.
func TestKeysMintBadInput(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	alice := env.Member(t, "alice", false)
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	path := fmt.Sprintf("/manage/%d/keys", f.ID)
	b := env.Browser(t).LogIn(t, "alice")
	for _, c := range []struct {
		name  string
		form  []string
		field string
		msg   string
	}{
		{"no scope", []string{"ips", "10.0.0.1"}, "scope", "A key needs at least one scope"},
		{"an unknown scope", []string{"scope", "root"}, "scope", "Unknown scope"},
		{"a bad CIDR", []string{"scope", "read", "ips", "10.0.0.0/33"}, "ips", "Invalid CIDR &#34;10.0.0.0/33&#34;"},
		{"a bad address", []string{"scope", "read", "ips", "10.0.0.1\r\nnot-an-ip"}, "ips", "Invalid IP address &#34;not-an-ip&#34;"},
		{"a past expiry", []string{"scope", "read", "expires", "2020-01-01"}, "expires", "Invalid expiry: a day after today"},
		{"today as expiry", []string{"scope", "read", "expires", "2026-03-14"}, "expires", "Invalid expiry: a day after today"},
		{"a bad date", []string{"scope", "read", "expires", "tomorrow"}, "expires", "Invalid expiry: a day such as"},
		{"an expiry too far", []string{"scope", "read", "expires", "2040-01-01"}, "expires", "Invalid expiry: between 1 second and 10 years"},
		{"a negative cap", []string{"scope", "send", "cap", "-5"}, "cap", "Invalid USD amount"},
		{"a cap with 7 decimals", []string{"scope", "send", "cap", "0.0000001"}, "cap", "Invalid USD amount"},
		{"a cap on a read key", []string{"scope", "read", "cap", "10"}, "cap", "A daily USD cap is positive and only for keys with the send scope"},
	} {
		p := b.Post(t, path, c.form...)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", c.name, p.Status)
		}
		keysHas(t, c.name, p.Body, `<p class="field-error" id="`+c.field+`-error">`+c.msg)
		keysLacks(t, c.name, p.Body, `class="form-error"`, "Your new v2 key")
	}
	p := b.Post(t, path, "scope", "send", "cap", "-5", "ips", "192.0.2.1")
	keysHas(t, "the form sent back", p.Body, `value="send" checked`, `value="-5"`, ">192.0.2.1</textarea>")
	if keys, _ := env.App.Keys.List(context.Background(), f.ID); len(keys) != 0 {
		t.Errorf("a refused form minted %d keys", len(keys))
	}
}

// A faucet name, a key's audit arguments and a result that carry markup
// are shown escaped on the keys, minted, rotated and audit pages and in
// the security log.
func TestKeysPagesEscape(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	alice := env.Member(t, "alice", false)
	const hostile = `<script>alert(1)</script>`
	const attr = `"><img src=x onerror=alert(1)>`
	f, _ := keysFaucet(t, env, alice, hostile+attr)
	path := fmt.Sprintf("/manage/%d/keys", f.ID)
	b := env.Browser(t).LogIn(t, "alice")
	k := env.Key(t, f, drip.ScopeManage)
	keys, _ := env.App.Keys.List(context.Background(), f.ID)
	if err := env.App.Audit.Record(context.Background(), f.ID, keys[0].ID, "set_ip_whitelist",
		map[string]string{"note": hostile + attr}, "Refused: "+hostile, true); err != nil {
		t.Fatal(err)
	}
	_ = k
	pages := map[string]*apptest.Page{
		"keys":    b.Get(t, path),
		"minted":  b.Post(t, path, "scope", "read"),
		"rotated": b.Post(t, path+"/v1/rotate"),
		"audit":   b.Get(t, fmt.Sprintf("/manage/%d/audit", f.ID)),
		"account": b.Get(t, "/account"),
	}
	for name, p := range pages {
		if p.Status != http.StatusOK {
			t.Fatalf("%s: status %d", name, p.Status)
		}
		keysLacks(t, name, p.Body, "<script>alert", "<img src=x")
		keysHas(t, name, p.Body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	}
	keysHas(t, "audit", pages["audit"].Body, "&lt;img src=x onerror=alert(1)&gt;", "tool server", keys[0].Prefix, "refused")
}

// The audit log shows 50 entries a page, newest first, with a link to the
// older ones; a cursor that is not an id starts at the newest.
func TestAuditLogPages(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	alice := env.Member(t, "alice", false)
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	env.Key(t, f, drip.ScopeManage)
	keys, _ := env.App.Keys.List(context.Background(), f.ID)
	for i := range 60 {
		if err := env.App.Audit.Record(context.Background(), f.ID, keys[0].ID, "toggle_anti_fraud",
			map[string]int{"n": i}, fmt.Sprintf("call %d", i), false); err != nil {
			t.Fatal(err)
		}
	}
	b := env.Browser(t).LogIn(t, "alice")
	path := fmt.Sprintf("/manage/%d/audit", f.ID)
	first := b.Get(t, path)
	if n := strings.Count(first.Body, `<td data-label="When">`); n != 50 {
		t.Errorf("the first page shows %d entries, want 50", n)
	}
	keysHas(t, "the first page", first.Body, "call 59", "call 10", html.EscapeString(`{"n":59}`), "Older entries")
	keysLacks(t, "the first page", first.Body, "call 9<", ">Newest<")
	older := regexp.MustCompile(`href="(/manage/\d+/audit\?before=\d+)"`).FindStringSubmatch(first.Body)
	if older == nil {
		t.Fatal("no link to older entries")
	}
	second := b.Get(t, html.UnescapeString(older[1]))
	if n := strings.Count(second.Body, `<td data-label="When">`); n != 10 {
		t.Errorf("the second page shows %d entries, want 10", n)
	}
	keysHas(t, "the second page", second.Body, "call 9<", "call 0<", ">Newest<")
	keysLacks(t, "the second page", second.Body, "call 10<", "Older entries")
	if p := b.Get(t, path+"?before=junk"); p.Status != http.StatusOK || !strings.Contains(p.Body, "call 59") {
		t.Errorf("a bad cursor: %d", p.Status)
	}
}

// The copy button's script is served from drip with the page's policy
// allowing it, and no other script.
func TestKeysScript(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	b := env.Browser(t)
	js := b.Get(t, "/assets/console.js")
	if js.Status != http.StatusOK || js.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || !strings.Contains(js.Body, "data-copy") {
		t.Fatalf("script: %d %v", js.Status, js.Header)
	}
	csp := b.Get(t, "/login").Header.Get("Content-Security-Policy")
	keysHas(t, "the pages' policy", csp, "script-src 'self'")
	keysLacks(t, "the pages' policy", csp, "unsafe-inline", "unsafe-eval")
}

// A key's last use is written at most once a minute (key.TouchEvery), so
// a busy key adds no write per request; the list shows it to the minute.
func TestKeyLastUsedToTheMinute(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	alice := env.Member(t, "alice", false)
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	secret := env.Key(t, f, drip.ScopeRead)
	start := env.Clock.Now()
	lastUsed := func(want time.Time) {
		t.Helper()
		if r := env.V2(t, secret, "/balances", nil); r.HTTPStatus != http.StatusOK {
			t.Fatalf("read: %d", r.HTTPStatus)
		}
		keys, err := env.App.Keys.List(context.Background(), f.ID)
		if err != nil || len(keys) != 1 || keys[0].LastUsedAt == nil || !keys[0].LastUsedAt.Equal(want) {
			t.Errorf("last used %v (%v), want %v", keys[0].LastUsedAt, err, want)
		}
	}
	lastUsed(start)
	env.Clock.Advance(30 * time.Second)
	lastUsed(start)
	env.Clock.Advance(31 * time.Second)
	lastUsed(start.Add(61 * time.Second))
	p := env.Browser(t).LogIn(t, "alice").Get(t, fmt.Sprintf("/manage/%d/keys", f.ID))
	keysHas(t, "the keys page", p.Body, `<td data-label="Last used">`+start.Add(61*time.Second).UTC().Format("2006-01-02 15:04")+`</td>`)
}
