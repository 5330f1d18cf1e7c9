package console_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/logtest"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// hooksNames resolve the tests' host names: a URL is checked against the
// addresses its host resolves to (D53).
type hooksNames map[string]string

func (n hooksNames) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

var hooksResolver = hooksNames{
	"hooks.example.com":    "93.184.216.34",
	"internal.example.com": "10.1.2.3",
}

// hooksEnv is a console over st with production's URL rules (with the
// tests' names) unless rules says otherwise, and the application's log.
func hooksEnv(t *testing.T, st store.Store, rules *safehttp.Options) (*apptest.Env, *logtest.Buffer) {
	t.Helper()
	logs := &logtest.Buffer{}
	opts := safehttp.Options{Resolver: hooksResolver}
	if rules != nil {
		opts = *rules
	}
	env := apptest.New(t, st, apptest.Options{Console: true, Webhooks: opts,
		Log: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return env, logs
}

// hooksReceiver is a local HTTPS receiver answering status with body,
// and the URL rules that admit it (development's, D53).
func hooksReceiver(t *testing.T, status int, body string) (*httptest.Server, *safehttp.Options) {
	t.Helper()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, &safehttp.Options{AllowInsecure: true, RootCAs: pool, Resolver: hooksResolver}
}

var (
	hooksTOTPRE    = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)
	hooksOtpauthRE = regexp.MustCompile(`name="otpauth" value="([^"]+)"`)
	hooksSecretRE  = regexp.MustCompile(`<textarea id="webhook-secret"[^>]*>(whsec_[^<]+)</textarea>`)
)

// hooksCode is the authenticator's code now.
func hooksCode(t *testing.T, env *apptest.Env, secret string) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hooksOwner is a member who turned two-factor authentication on through
// the account page, which verifies the session with its first code; it
// returns the browser and the authenticator's secret, the clock moved to
// the next code.
func hooksOwner(t *testing.T, env *apptest.Env, name string) (*drip.User, *apptest.Browser, string) {
	t.Helper()
	u := env.Member(t, name, false)
	b := env.Browser(t).LogIn(t, name)
	p := b.Post(t, "/account/totp")
	m, o := hooksTOTPRE.FindStringSubmatch(p.Body), hooksOtpauthRE.FindStringSubmatch(p.Body)
	if m == nil || o == nil {
		t.Fatalf("the enrolment page shows no secret: %d\n%s", p.Status, p.Body)
	}
	p = b.Post(t, "/account/totp/confirm", "code", hooksCode(t, env, m[1]), "otpauth", html.UnescapeString(o[1]))
	if p.Status != http.StatusOK {
		t.Fatalf("turn on two-factor authentication: %d\n%s", p.Status, p.Body)
	}
	env.Clock.Advance(30 * time.Second)
	return u, b, m[1]
}

// hooksLogIn logs a new browser in as a member with two-factor
// authentication: the password, then the authenticator's code.
func hooksLogIn(t *testing.T, env *apptest.Env, name, totpSecret string) *apptest.Browser {
	t.Helper()
	b := env.Browser(t)
	keysWant(t, "log in as "+name, b.Post(t, "/login", "identifier", name, "password", apptest.Password), http.StatusSeeOther, "/login/code")
	keysWant(t, "the code of "+name, b.Post(t, "/login/code", "code", hooksCode(t, env, totpSecret)), http.StatusSeeOther, "/wallet")
	env.Clock.Advance(30 * time.Second)
	return b
}

// hooksShown is the signing secret a page shows, once.
func hooksShown(t *testing.T, p *apptest.Page) string {
	t.Helper()
	m := hooksSecretRE.FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no signing secret shown (status %d):\n%s", p.Status, p.Body)
	}
	if p.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("a page showing a signing secret has Cache-Control %q, want no-store", p.Header.Get("Cache-Control"))
	}
	return html.UnescapeString(m[1])
}

// hooksNoSecret fails the test if the secret is anywhere in body, as it
// is or as a page escapes it.
func hooksNoSecret(t *testing.T, what, body, secret string) {
	t.Helper()
	if strings.Contains(body, secret) || strings.Contains(body, html.EscapeString(secret)) || strings.Contains(body, secret[len(webhook.SecretPrefix):]) {
		t.Errorf("%s holds the signing secret", what)
	}
}

// hooksAudit is the faucet's audit log as text: action, arguments, result.
func hooksAudit(t *testing.T, env *apptest.Env, f *drip.Faucet) string {
	t.Helper()
	entries, err := env.App.Audit.List(context.Background(), f.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "%s %s %s refused=%v user=%d\n", e.Tool, e.Arguments, e.Result, e.IsError, e.UserID)
	}
	return b.String()
}

func hooksEndpoints(t *testing.T, env *apptest.Env, f *drip.Faucet) []webhook.Endpoint {
	t.Helper()
	list, err := env.App.Endpoints.List(context.Background(), f.ID)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// An endpoint added on the page shows its signing secret once, on a page
// not cached; the secret signs with the endpoint (the worker opens the
// same one), and is then nowhere: not on the list, not in the audit log,
// not in the log. Rotating shows a new one, once, and the old one is
// gone. On both engines.
func TestWebhooksSecretShownOnce(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env, logs := hooksEnv(t, eng.Open(t), nil)
			alice, b, _ := hooksOwner(t, env, "alice")
			f, _ := keysFaucet(t, env, alice, "Alice's faucet")
			path := fmt.Sprintf("/manage/%d/webhooks", f.ID)

			p := b.Get(t, path)
			keysWant(t, "the webhooks page", p, http.StatusOK, "")
			keysHas(t, "the webhooks page", p.Body, "No endpoints yet", `<label for="url">URL</label>`,
				`value="payout.sent" checked`, `value="payout.failed" checked`, `value="faucet.low_balance">`,
				`href="`+path+`" aria-current="page">Webhooks</a>`)

			p = b.Post(t, path, "url", "https://hooks.example.com/drip", "event", "payout.sent", "event", "faucet.low_balance")
			keysWant(t, "add", p, http.StatusOK, "")
			secret := hooksShown(t, p)
			keysHas(t, "the secret page", p.Body, "shown only this once", "https://hooks.example.com/drip",
				"<code>payout.sent</code>, <code>faucet.low_balance</code>", `data-copy="webhook-secret" hidden`, `src="/assets/console.js"`)
			list := hooksEndpoints(t, env, f)
			if len(list) != 1 || !list[0].Enabled || strings.Join(list[0].Events, ",") != "payout.sent,faucet.low_balance" {
				t.Fatalf("endpoints: %+v", list)
			}
			if got, err := env.App.Endpoints.Secret(context.Background(), &list[0]); err != nil || got != secret {
				t.Errorf("the endpoint signs with %q (%v), not the secret shown", got, err)
			}

			p = b.Get(t, path)
			keysHas(t, "the list", p.Body, "https://hooks.example.com/drip", `<span class="badge on">enabled</span>`,
				"0 delivered", "0 pending", "0 failed", "2026-03-14 15:09", "Rotate the secret", "Send a test event")
			hooksNoSecret(t, "the list", p.Body, secret)

			p = b.Post(t, fmt.Sprintf("%s/%d/rotate", path, list[0].ID))
			keysWant(t, "rotate", p, http.StatusOK, "")
			rotated := hooksShown(t, p)
			keysHas(t, "the rotated page", p.Body, "The endpoint has a new signing secret")
			if rotated == secret {
				t.Fatal("rotating showed the same secret")
			}
			if got, _ := env.App.Endpoints.Get(context.Background(), f.ID, list[0].ID); got != nil {
				if s, err := env.App.Endpoints.Secret(context.Background(), got); err != nil || s != rotated {
					t.Errorf("after rotating the endpoint signs with %q (%v)", s, err)
				}
			}
			hooksNoSecret(t, "the list after rotating", b.Get(t, path).Body, rotated)

			audit := hooksAudit(t, env, f)
			keysHas(t, "the audit log", audit, "create_webhook_endpoint", `"url":"https://hooks.example.com/drip"`,
				"rotate_webhook_secret", fmt.Sprintf(`"endpoint":%d`, list[0].ID), fmt.Sprintf("user=%d", alice.ID))
			page := b.Get(t, fmt.Sprintf("/manage/%d/audit", f.ID)).Body
			keysHas(t, "the audit page", page, "create webhook endpoint", "rotate webhook secret", "alice")
			for _, s := range []string{secret, rotated} {
				hooksNoSecret(t, "the audit log", audit, s)
				hooksNoSecret(t, "the audit page", page, s)
				hooksNoSecret(t, "the log", logs.String(), s)
			}
		})
	}
}

// Another user's faucet answers 404 on every webhook page and change,
// and nothing changes; nor does an endpoint of one faucet answer under
// another faucet of the same owner's.
func TestWebhooksOfAnotherUsersFaucet(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice := env.Member(t, "alice", false)
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	e, _, err := env.App.Endpoints.Create(context.Background(), f.ID, "https://hooks.example.com/a", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	delivery, err := env.App.Endpoints.SendTest(context.Background(), f.ID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	bob, b, _ := hooksOwner(t, env, "bob")
	base := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	ep := fmt.Sprintf("%s/%d", base, e.ID)
	for _, get := range []string{base, ep, ep + "/delete", fmt.Sprintf("%s/deliveries/%d", ep, delivery), "/manage/99999/webhooks"} {
		if p := b.Get(t, get); p.Status != http.StatusNotFound || strings.Contains(p.Body, "Alice") || strings.Contains(p.Body, "hooks.example.com") {
			t.Errorf("GET %s: %d", get, p.Status)
		}
	}
	for _, post := range []string{base, ep + "/rotate", ep + "/disable", ep + "/enable", ep + "/delete", ep + "/test",
		ep + "/resend-failed", fmt.Sprintf("%s/deliveries/%d/resend", ep, delivery)} {
		if p := b.Post(t, post, "url", "https://hooks.example.com/bob", "event", "payout.sent", "from", "2026-03-14T00:00", "to", "2026-03-15T00:00"); p.Status != http.StatusNotFound {
			t.Errorf("POST %s: %d", post, p.Status)
		}
	}
	// Bob's own faucet does not reach alice's endpoint either.
	bobs, _ := keysFaucet(t, env, bob, "Bob's faucet")
	p := b.Post(t, fmt.Sprintf("/manage/%d/webhooks/%d/disable", bobs.ID, e.ID))
	keysWant(t, "disable alice's endpoint through bob's faucet", p, http.StatusNotFound, "")
	keysHas(t, "disable alice's endpoint through bob's faucet", p.Body, "no such webhook endpoint among this faucet")
	if p := b.Get(t, fmt.Sprintf("/manage/%d/webhooks/%d", bobs.ID, e.ID)); p.Status != http.StatusNotFound {
		t.Errorf("alice's deliveries under bob's faucet: %d", p.Status)
	}

	list := hooksEndpoints(t, env, f)
	if len(list) != 1 || !list[0].Enabled || list[0].URL != "https://hooks.example.com/a" {
		t.Errorf("alice's endpoints changed: %+v", list)
	}
	if n := len(hooksEndpoints(t, env, bobs)); n != 0 {
		t.Errorf("bob's faucet has %d endpoints", n)
	}
	if audit := hooksAudit(t, env, f); strings.Contains(audit, "webhook") {
		t.Errorf("bob's refused changes are in alice's audit log:\n%s", audit)
	}
}

// Without two-factor authentication the page explains that webhooks need
// it and links to turning it on, with no form; the endpoints are listed
// without their buttons, and every change is refused (403) and changes
// nothing (D54), even in a session just verified by the password.
func TestWebhooksNeedTwoFactor(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice := env.Member(t, "alice", false)
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	e, _, err := env.App.Endpoints.Create(context.Background(), f.ID, "https://hooks.example.com/a", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	b := env.Browser(t).LogIn(t, "alice")
	base := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	ep := fmt.Sprintf("%s/%d", base, e.ID)

	p := b.Get(t, base)
	keysWant(t, "the webhooks page", p, http.StatusOK, "")
	keysHas(t, "the webhooks page", p.Body, "Webhooks need two-factor authentication", `href="/account#two-factor"`, "https://hooks.example.com/a")
	keysLacks(t, "the webhooks page", p.Body, `action="`+base+`"`, `name="url"`, "/rotate", "/disable", "/delete", "/test")
	keysLacks(t, "the deliveries page", b.Get(t, ep).Body, "/resend-failed", "/test")

	for _, post := range []string{base, ep + "/rotate", ep + "/disable", ep + "/delete", ep + "/test", ep + "/resend-failed"} {
		p := b.Post(t, post, "url", "https://hooks.example.com/b", "event", "payout.sent", "from", "2026-03-14T00:00", "to", "2026-03-15T00:00")
		keysWant(t, "POST "+post, p, http.StatusForbidden, "")
		keysHas(t, "POST "+post, p.Body, "Webhooks need two-factor authentication: turn it on", `href="/account#two-factor"`)
		keysLacks(t, "POST "+post, p.Body, "webhook-secret")
	}
	if p := b.Get(t, ep+"/delete"); p.Status != http.StatusForbidden {
		t.Errorf("the delete question without two-factor authentication: %d", p.Status)
	}
	list := hooksEndpoints(t, env, f)
	if len(list) != 1 || !list[0].Enabled || list[0].SecretSealed != e.SecretSealed {
		t.Errorf("endpoints changed: %+v", list)
	}
	if d, _ := env.App.Endpoints.Deliveries(context.Background(), f.ID, e.ID, "", 0, 10); len(d) != 0 {
		t.Errorf("a test event was sent: %+v", d)
	}
}

// With two-factor authentication on but no code for 15 minutes, the list
// still shows (it holds no secret) and says changes will ask; each change
// goes to enter a code and changes nothing. The code given, the browser
// comes back, and the change goes through.
func TestWebhooksAskForARecentCode(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice, b, totpSecret := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	e, _, err := env.App.Endpoints.Create(context.Background(), f.ID, "https://hooks.example.com/a", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	ep := fmt.Sprintf("%s/%d", base, e.ID)

	env.Clock.Advance(16 * time.Minute)
	p := b.Get(t, base)
	keysWant(t, "the list, not recent", p, http.StatusOK, "")
	keysHas(t, "the list, not recent", p.Body, "ask for a code from your authenticator app again first", `action="`+base+`"`)
	confirm := "/account/confirm?next=" + url.QueryEscape(base)
	for _, post := range []string{base, ep + "/rotate", ep + "/disable", ep + "/enable", ep + "/delete", ep + "/test"} {
		keysWant(t, "POST "+post, b.Post(t, post, "url", "https://hooks.example.com/b", "event", "payout.sent"), http.StatusSeeOther, confirm)
	}
	keysWant(t, "resend failed", b.Post(t, ep+"/resend-failed", "from", "2026-03-14T00:00", "to", "2026-03-15T00:00"),
		http.StatusSeeOther, "/account/confirm?next="+url.QueryEscape(ep))
	keysWant(t, "the delete question", b.Get(t, ep+"/delete"), http.StatusSeeOther, "/account/confirm?next="+url.QueryEscape(ep+"/delete"))
	list := hooksEndpoints(t, env, f)
	if len(list) != 1 || !list[0].Enabled || list[0].SecretSealed != e.SecretSealed {
		t.Errorf("endpoints changed without a code: %+v", list)
	}
	if d, _ := env.App.Endpoints.Deliveries(context.Background(), f.ID, e.ID, "", 0, 10); len(d) != 0 {
		t.Errorf("a test event was sent without a code: %+v", d)
	}

	keysWant(t, "confirm with a code", b.Post(t, "/account/confirm", "code", hooksCode(t, env, totpSecret), "next", ep+"/delete"),
		http.StatusSeeOther, ep+"/delete?done=confirmed")
	p = b.Get(t, ep+"/delete?done=confirmed")
	keysWant(t, "the delete question", p, http.StatusOK, "")
	keysHas(t, "the delete question", p.Body, "Delete the endpoint <strong", "https://hooks.example.com/a", `action="`+ep+`/delete"`, "Keep it")
	keysWant(t, "delete", b.Post(t, ep+"/delete"), http.StatusSeeOther, base+"?done=webhook-deleted")
	if n := len(hooksEndpoints(t, env, f)); n != 0 {
		t.Errorf("%d endpoints after deleting", n)
	}
	keysHas(t, "the list after deleting", b.Get(t, base+"?done=webhook-deleted").Body, "The endpoint is deleted", "No endpoints yet")
}

// The add form's refusals show next to their field, with the service's
// words (D53's for an address that is not public), keep what was typed,
// add nothing, and are in the audit log as refused.
func TestWebhooksAddRefused(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice, b, _ := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	path := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	for _, c := range []struct {
		name, url string
		events    []string
		field     string
		msg       string
	}{
		{"a private address", "https://10.0.0.1/hook", []string{"payout.sent"}, "url", "Webhook URL points to a private address (10.0.0.1)."},
		{"loopback", "https://127.0.0.1:8443/hook", []string{"payout.sent"}, "url", "Webhook URL points to a loopback address (127.0.0.1)."},
		{"the metadata address", "https://169.254.169.254/latest", []string{"payout.sent"}, "url", "Webhook URL points to the cloud metadata address"},
		{"a name resolving to a private address", "https://internal.example.com/hook", []string{"payout.sent"}, "url", "Webhook URL resolves to a private address (10.1.2.3)."},
		{"http", "http://hooks.example.com/hook", []string{"payout.sent"}, "url", "Webhook URL must use https."},
		{"no URL", "", []string{"payout.sent"}, "url", "Webhook URL is required."},
		{"no event", "https://hooks.example.com/hook", nil, "event", "Choose at least one event"},
		{"an unknown event", "https://hooks.example.com/hook", []string{"payout.maybe"}, "event", "Unknown event &#34;payout.maybe&#34;"},
	} {
		form := []string{"url", c.url}
		for _, ev := range c.events {
			form = append(form, "event", ev)
		}
		p := b.Post(t, path, form...)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", c.name, p.Status)
		}
		keysHas(t, c.name, p.Body, `<p class="field-error" id="`+c.field+`-error">`+c.msg)
		keysLacks(t, c.name, p.Body, `class="form-error"`, "webhook-secret")
		if c.url != "" {
			keysHas(t, c.name, p.Body, `value="`+c.url+`"`)
		}
	}
	if n := len(hooksEndpoints(t, env, f)); n != 0 {
		t.Errorf("refused forms added %d endpoints", n)
	}
	keysHas(t, "the audit log", hooksAudit(t, env, f), "create_webhook_endpoint", "Webhook URL points to a private address (10.0.0.1). refused=true")
}

// A faucet has at most 10 endpoints: at 10 the page says so instead of
// showing the form, and an 11th sent anyway is refused.
func TestWebhooksAtMostTen(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice, b, _ := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	path := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	for i := range webhook.MaxEndpoints - 1 {
		if _, _, err := env.App.Endpoints.Create(context.Background(), f.ID, fmt.Sprintf("https://hooks.example.com/%d", i), []string{drip.EventPayoutSent}); err != nil {
			t.Fatal(err)
		}
	}
	keysHas(t, "at 9", b.Get(t, path).Body, `action="`+path+`"`)
	hooksShown(t, b.Post(t, path, "url", "https://hooks.example.com/10th", "event", "payout.sent"))
	p := b.Get(t, path)
	keysHas(t, "at 10", p.Body, "This faucet has 10 endpoints, the most it may have")
	keysLacks(t, "at 10", p.Body, `action="`+path+`"`)
	p = b.Post(t, path, "url", "https://hooks.example.com/11th", "event", "payout.sent")
	keysWant(t, "an 11th", p, http.StatusConflict, "")
	keysHas(t, "an 11th", p.Body, `class="form-error"`, "the most it may have; delete one to add another")
	keysLacks(t, "an 11th", p.Body, "webhook-secret")
	if n := len(hooksEndpoints(t, env, f)); n != webhook.MaxEndpoints {
		t.Errorf("%d endpoints, want %d", n, webhook.MaxEndpoints)
	}
}

// Disabling and enabling show in the list with why an endpoint is off:
// by its owner, or by the worker after 3 days of failures (D52); each
// change is in the audit log.
func TestWebhooksDisableAndEnable(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice, b, _ := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	path := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	e, _, err := env.App.Endpoints.Create(context.Background(), f.ID, "https://hooks.example.com/a", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	ep := fmt.Sprintf("%s/%d", path, e.ID)

	keysWant(t, "disable", b.Post(t, ep+"/disable"), http.StatusSeeOther, path+"?done=webhook-disabled")
	p := b.Get(t, path+"?done=webhook-disabled")
	keysHas(t, "disabled", p.Body, "nothing is sent to it until you enable it", `<span class="badge off">disabled by you</span>`, `action="`+ep+`/enable"`)
	keysLacks(t, "disabled", p.Body, `action="`+ep+`/test"`)
	// A disabled endpoint is sent no test.
	p = b.Post(t, ep+"/test")
	keysWant(t, "test a disabled endpoint", p, http.StatusConflict, "")
	keysHas(t, "test a disabled endpoint", p.Body, "This webhook endpoint is disabled")

	keysWant(t, "enable", b.Post(t, ep+"/enable"), http.StatusSeeOther, path+"?done=webhook-enabled")
	keysHas(t, "enabled", b.Get(t, path).Body, `<span class="badge on">enabled</span>`)

	if err := env.App.Endpoints.SetEnabled(context.Background(), f.ID, e.ID, false, webhook.DisabledFailing); err != nil {
		t.Fatal(err)
	}
	keysHas(t, "disabled by the worker", b.Get(t, path).Body, "disabled after failing every attempt for 3 days")

	audit := hooksAudit(t, env, f)
	keysHas(t, "the audit log", audit, "disable_webhook_endpoint", "enable_webhook_endpoint", "send_webhook_test", "This webhook endpoint is disabled")
}

// The pages show a URL and a faucet name carrying markup escaped.
func TestWebhooksPagesEscape(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice, b, _ := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, `<script>alert(1)</script>`)
	path := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	hostile := `https://hooks.example.com/"><script>alert(2)</script>`
	p := b.Post(t, path, "url", hostile, "event", "payout.sent")
	hooksShown(t, p)
	list := hooksEndpoints(t, env, f)
	if len(list) != 1 {
		t.Fatalf("endpoints: %+v", list)
	}
	ep := fmt.Sprintf("%s/%d", path, list[0].ID)
	for name, page := range map[string]*apptest.Page{"added": p, "list": b.Get(t, path), "deliveries": b.Get(t, ep), "delete": b.Get(t, ep+"/delete")} {
		if page.Status != http.StatusOK {
			t.Fatalf("%s: %d", name, page.Status)
		}
		keysLacks(t, name, page.Body, "<script>alert")
		keysHas(t, name, page.Body, "&lt;script&gt;alert(1)&lt;/script&gt;")
	}
}
