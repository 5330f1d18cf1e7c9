package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/logtest"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// hookInbox is a local HTTPS receiver that keeps every delivery with
// what its two signatures said, checked with the client package as a
// receiver would: on the raw bytes, against the secret read from the
// page.
type hookInbox struct {
	*httptest.Server
	now    func() time.Time
	mu     sync.Mutex
	secret string
	got    []hookGot
}

type hookGot struct {
	header         http.Header
	body           []byte
	event          client.WebhookEvent
	sigErr, stdErr error
}

func newHookInbox(t *testing.T, now func() time.Time) *hookInbox {
	in := &hookInbox{now: now}
	in.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		in.mu.Lock()
		g := hookGot{header: r.Header.Clone(), body: body}
		g.sigErr = client.VerifySignature(in.secret, body, r.Header.Get(client.SignatureHeader))
		g.stdErr = client.VerifyStandard(in.secret, body, r.Header, in.now(), 0)
		if e, err := client.ParseWebhook([]byte(in.secret), body, r.Header.Get(client.SignatureHeader)); err == nil {
			g.event = *e
		}
		in.got = append(in.got, g)
		in.mu.Unlock()
		if g.sigErr != nil || g.stdErr != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if g.event.Event == "webhook.test" {
			// A receiver down for maintenance, answering with a page
			// longer than the 1 KB an attempt keeps, carrying markup.
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(hookDownPage))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(in.Close)
	return in
}

// hookDownPage is what the receiver answers a test event with.
var hookDownPage = `<html><script>alert("from the receiver")</script><body><h1>Down for maintenance</h1><p>` +
	strings.Repeat("We are upgrading the payout ledger; back soon. ", 40) + `</p></body></html>`

func (in *hookInbox) setSecret(s string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.secret = s
}

// wait returns the deliveries received once n of them are events of
// type event, failing the test after 20 s.
func (in *hookInbox) wait(t *testing.T, event string, n int) []hookGot {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		in.mu.Lock()
		var of []hookGot
		for _, g := range in.got {
			if g.event.Event == event {
				of = append(of, g)
			}
		}
		in.mu.Unlock()
		if len(of) >= n {
			return of
		}
	}
	t.Fatalf("the receiver got no %d %s events in 20 s", n, event)
	return nil
}

// TestBrowserWebhooks is issue 12's end to end, in a real Chromium: an
// owner with two-factor authentication logs in, registers an endpoint at
// a local HTTPS receiver on the faucet's webhooks page and reads its
// signing secret from the page; a payout through v1 and one through v2
// each reach the receiver as a payout.sent event whose X-Service-Signature
// and Standard Webhooks headers both verify with that secret (the
// client package's VerifySignature and VerifyStandard); the deliveries
// page then shows both delivered, and a delivery's page its attempt. The
// delivery worker runs as drip serve runs it (App.Run). The webhooks
// list, the secret shown once, the deliveries and an attempt are saved
// at desktop and phone width.
func TestBrowserWebhooks(t *testing.T) {
	t.Parallel()
	chromiumPath(t) // skips without one, before anything starts
	logs := &logtest.Buffer{}
	// Registered first, so it runs last: the app has stopped logging.
	t.Cleanup(func() { noteLog(bytes.NewBufferString(logs.String())) })

	var env *apptest.Env
	in := newHookInbox(t, func() time.Time { return env.Clock.Now() })
	pool := x509.NewCertPool()
	pool.AddCert(in.Certificate())
	// The receiver is on loopback: development's rules (D53), with its
	// certificate trusted.
	env = apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true,
		Webhooks: safehttp.Options{AllowInsecure: true, RootCAs: pool},
		Log:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { env.App.Run(ctx); close(stopped) }()
	t.Cleanup(func() { cancel(); <-stopped })

	alice := env.Member(t, "alice", false)
	env.Member(t, "bob", false)
	f, v1, err := env.App.Faucets.Create(ctx, faucet.CreateParams{OwnerID: alice.ID, Name: "Webhook faucet",
		Domain: "hooks.example.com", URL: "https://hooks.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Ledger.Deposit(ctx, f, "BTC", 100_000_000); err != nil {
		t.Fatal(err)
	}
	v2Key := env.Key(t, f, drip.ScopeSend)
	noteSecret("a v1 key", v1)
	noteSecret("a v2 key", v2Key)

	c := newChrome(t, env.Server.URL)
	c.dir = shotsDir(t, "DRIP_WEBHOOK_SHOTS", "webhook-shots")
	open := func(path, h1 string) {
		t.Helper()
		c.run("open "+path, chromedp.Navigate(env.Server.URL+path), title(h1))
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

	// Without two-factor authentication the page says webhooks need it,
	// and offers no form (D54).
	hooks := fmt.Sprintf("/manage/%d/webhooks", f.ID)
	c.login("alice", apptest.Password)
	open(hooks, "Webhooks")
	has("the page without two-factor authentication", "main", "Webhooks need two-factor authentication")
	if n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('main form').length`)); err != nil || n != 0 {
		t.Errorf("the page without two-factor authentication has %d forms (%v)", n, err)
	}
	c.shot("00-webhooks-need-two-factor")

	// Alice turns two-factor authentication on, then logs in with it.
	c.run("account", chromedp.Click(chromedp.CSS(`a[href="/account#two-factor"]`)), title("Account security"))
	code := c.enableTOTP(env.Clock)
	c.logout()
	c.login("alice", apptest.Password)
	c.run("second factor", title("Two-factor authentication"), fill("#code", code()), submit("form.card button"), title("Wallet"))
	c.noteCookies()

	// The webhooks page: register the receiver.
	open(hooks, "Webhooks")
	has("the empty webhooks page", "main", "No endpoints yet", "Add an endpoint")
	c.run("add form", fill("#url", in.URL+"/drip-events"))
	c.send("add the endpoint", `form[action="`+hooks+`"] button[type="submit"]`)
	c.run("secret page", title("Your webhook signing secret"))
	secret := c.value("#webhook-secret")
	noteSecret("a webhook signing secret", secret)
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("the page shows %q as the signing secret", secret)
	}
	copyShown, err := chromedp.Run(c.ctx, chromedp.Evaluate[bool](`!document.querySelector('button[data-copy="webhook-secret"]').hidden`))
	if err != nil || !copyShown {
		t.Errorf("the Copy button is not shown with the script running (%v)", err)
	}
	c.shot("01-webhook-secret-once")
	in.setSecret(secret)

	// One payout through v1, one through v2.
	if r := env.Post(t, "/send", url.Values{"api_key": {v1}, "to": {"bob"}, "amount": {"5000"}, "currency": {"BTC"}}); r.Status() != 200 {
		t.Fatalf("v1 send: %s", r.Raw)
	}
	if r := env.V2(t, v2Key, "/send", map[string]any{"idempotency_key": "webhooks-browser-1", "to": "bob", "amount": 7000, "currency": "BTC"}); r.HTTPStatus != http.StatusOK {
		t.Fatalf("v2 send: %d %s", r.HTTPStatus, r.Raw)
	}
	got := in.wait(t, client.EventPayoutSent, 2)
	amounts := map[int64]bool{}
	for _, g := range got {
		if g.sigErr != nil {
			t.Errorf("X-Service-Signature does not verify with the secret from the page: %v", g.sigErr)
		}
		if g.stdErr != nil {
			t.Errorf("the Standard Webhooks headers do not verify with the secret from the page: %v", g.stdErr)
		}
		if g.event.FaucetID != f.ID || !strings.HasPrefix(g.event.ID, "evt_") || g.header.Get("X-Service-Delivery") != g.event.ID ||
			g.header.Get("X-Service-Event") != client.EventPayoutSent || g.header.Get(client.StandardIDHeader) != g.event.ID {
			t.Errorf("delivery %s of faucet %d, headers %v", g.event.ID, g.event.FaucetID, g.header)
		}
		sent, err := g.event.PayoutSent()
		if err != nil || sent.To != "bob" || sent.Currency != "BTC" || sent.PayoutID == "" {
			t.Errorf("payout.sent data: %+v %v\n%s", sent, err, g.body)
			continue
		}
		amounts[sent.Amount] = true
	}
	if len(got) != 2 || !amounts[5000] || !amounts[7000] {
		t.Errorf("the receiver got %d payout.sent events, amounts %v; want the v1 and the v2 payout, 5000 and 7000", len(got), amounts)
	}

	// The console shows them delivered.
	open(hooks, "Webhooks")
	has("the webhooks list", "#endpoints", in.URL+"/drip-events", "enabled", "2 delivered", "0 pending", "0 failed", "payout.sent", "payout.failed")
	if strings.Contains(c.text("main"), secret) {
		t.Error("the webhooks list shows the signing secret")
	}
	c.shot("02-webhooks-list")
	c.run("deliveries", chromedp.Click(chromedp.CSS(`#endpoints a.button[href^="`+hooks+`/"]`)), title("Webhook deliveries"))
	has("the deliveries page", ".webhooks-list", got[0].event.ID, got[1].event.ID, "payout.sent", "delivered", "HTTP 200")
	if n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('.webhooks-list .badge.on').length`)); err != nil || n != 2 {
		t.Errorf("the deliveries page shows %d delivered, want 2 (%v)", n, err)
	}
	c.shot("03-deliveries")
	c.run("a delivery", chromedp.Click(chromedp.CSS(`.webhooks-list a[href*="/deliveries/"]`)), title("Webhook delivery"))
	has("the delivery's page", "#attempts", "Attempt 1", "HTTP 200", "OK", `{"received":true}`)
	c.shot("04-attempt")

	// A test event from the endpoint's page, which the receiver answers
	// 503: the deliveries page shows it waiting for its next attempt, and
	// its page the error and the reply, cut at 1 KB and escaped.
	c.run("back to the deliveries", chromedp.Click(chromedp.CSS(`.webhooks-back a`)), title("Webhook deliveries"))
	c.send("send a test event", `form[action$="/test"] button`)
	has("after the test", ".flash", "A test event is queued")
	in.wait(t, "webhook.test", 1)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(c.text(".webhooks-list"), "HTTP 503"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the deliveries page never showed the test's attempt: %s", c.text(".webhooks-list"))
		}
		c.run("reload", chromedp.Reload(), title("Webhook deliveries"))
	}
	has("the deliveries page after the test", ".webhooks-list", "webhook.test", "pending", "HTTP 503: Service Unavailable")
	c.shot("05-deliveries-with-a-failure")
	c.run("the test's delivery", chromedp.Click(chromedp.CSS(`.webhooks-list tbody tr:first-child a`)), title("Webhook delivery"))
	has("the failed attempt", "#attempts", "HTTP 503", "Service Unavailable", `<script>alert("from the receiver")</script>`, "Down for maintenance")
	if n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int](`document.querySelectorAll('script').length`)); err != nil || n != 0 {
		t.Errorf("the attempt's page runs %d scripts (%v): the reply was not escaped", n, err)
	}
	c.shot("06-failed-attempt")

	// The endpoint disabled, the test's delivery, still pending, waits for
	// it to be enabled again (D52): its page names no time for it.
	eps, err := env.App.Endpoints.List(ctx, f.ID)
	if err != nil || len(eps) != 1 {
		t.Fatalf("the faucet's endpoints: %+v, %v; want one", eps, err)
	}
	if err := env.App.Endpoints.SetEnabled(ctx, f.ID, eps[0].ID, false, "owner"); err != nil {
		t.Fatal(err)
	}
	c.run("reload", chromedp.Reload(), title("Webhook delivery"))
	has("a disabled endpoint's delivery", "#delivery", "pending", "waits for the endpoint to be enabled")
	c.shot("07-delivery-waits-for-its-endpoint")
	c.logout()
	env.Reconcile(t)
}
