package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// The hostile reply of a receiver: the attempt's page shows it as text.
const hooksHostileReply = `{"ok":true}<script>alert("reply")</script><img src=x onerror=alert(3)>`

// A test event sent from the page is delivered to that endpoint alone:
// its delivery leads the endpoint's list, and its page shows the attempt
// (time, status, latency, the reply escaped). A delivered delivery can be
// resent, which starts its schedule again; a pending one cannot. Every
// change is in the audit log. On both engines.
func TestWebhookTestEventAndResend(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			srv, rules := hooksReceiver(t, http.StatusOK, hooksHostileReply)
			env, _ := hooksEnv(t, eng.Open(t), rules)
			alice, b, _ := hooksOwner(t, env, "alice")
			f, _ := keysFaucet(t, env, alice, "Alice's faucet")
			ctx := context.Background()
			e, _, err := env.App.Endpoints.Create(ctx, f.ID, srv.URL+"/hook", []string{drip.EventPayoutSent})
			if err != nil {
				t.Fatal(err)
			}
			other, _, err := env.App.Endpoints.Create(ctx, f.ID, srv.URL+"/other", []string{drip.EventPayoutSent})
			if err != nil {
				t.Fatal(err)
			}
			ep := fmt.Sprintf("/manage/%d/webhooks/%d", f.ID, e.ID)

			keysWant(t, "send a test event", b.Post(t, ep+"/test"), http.StatusSeeOther, ep+"?done=webhook-test")
			p := b.Get(t, ep+"?done=webhook-test")
			keysWant(t, "the deliveries page", p, http.StatusOK, "")
			keysHas(t, "the deliveries page", p.Body, "A test event is queued", "<code>webhook.test</code>", `<span class="badge off">pending</span>`,
				"not tried yet", "1 pending", `action="`+ep+`/resend-failed"`, `value="2026-03-13T15:09"`, `value="2026-03-14T15:10"`)
			if d, _ := env.App.Endpoints.Deliveries(ctx, f.ID, other.ID, "", 0, 10); len(d) != 0 {
				t.Errorf("the test went to the other endpoint too: %+v", d)
			}

			if _, err := env.App.Webhooks.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			list, err := env.App.Endpoints.Deliveries(ctx, f.ID, e.ID, "", 0, 10)
			if err != nil || len(list) != 1 || list[0].State != store.DeliveryDelivered {
				t.Fatalf("deliveries after the worker: %+v %v", list, err)
			}
			d := list[0]
			one := fmt.Sprintf("%s/deliveries/%d", ep, d.ID)
			p = b.Get(t, ep)
			keysHas(t, "the deliveries page after the worker", p.Body, `<span class="badge on">delivered</span>`, "HTTP 200", d.EventID, `href="`+one+`"`, "1 delivered")

			p = b.Get(t, one)
			keysWant(t, "the delivery's page", p, http.StatusOK, "")
			keysHas(t, "the delivery's page", p.Body, d.EventID, "<code>webhook.test</code>", "Attempt 1", "2026-03-14 15:09:56 UTC",
				`<span class="badge on">HTTP 200</span> OK`, "0 ms",
				`<pre class="webhooks-reply">{&#34;ok&#34;:true}&lt;script&gt;alert(&#34;reply&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(3)&gt;</pre>`,
				`action="`+one+`/resend"`)
			keysLacks(t, "the delivery's page", p.Body, `<script>alert("reply")`, "<img src=x")

			keysWant(t, "resend", b.Post(t, one+"/resend"), http.StatusSeeOther, one+"?done=webhook-resent")
			p = b.Get(t, one+"?done=webhook-resent")
			keysHas(t, "after resending", p.Body, "The delivery is queued again", `<span class="badge off">pending</span>`, "Attempt 1")
			keysLacks(t, "after resending", p.Body, `action="`+one+`/resend"`)
			p = b.Post(t, one+"/resend")
			keysWant(t, "resend a pending delivery", p, http.StatusConflict, "")
			keysHas(t, "resend a pending delivery", p.Body, "waiting for its next attempt already", d.EventID)

			if _, err := env.App.Webhooks.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			keysHas(t, "after the second attempt", b.Get(t, one).Body, "Attempt 2", `<span class="badge on">delivered</span>`)

			// A delivery of another endpoint is not found under this one.
			otherDelivery, err := env.App.Endpoints.SendTest(ctx, f.ID, other.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p := b.Get(t, fmt.Sprintf("%s/deliveries/%d", ep, otherDelivery)); p.Status != http.StatusNotFound {
				t.Errorf("another endpoint's delivery under this one: %d", p.Status)
			}
			if p := b.Post(t, fmt.Sprintf("%s/deliveries/%d/resend", ep, otherDelivery)); p.Status != http.StatusNotFound {
				t.Errorf("resend another endpoint's delivery under this one: %d", p.Status)
			}

			audit := hooksAudit(t, env, f)
			keysHas(t, "the audit log", audit, "send_webhook_test", "Test delivery", "resend_webhook_delivery",
				fmt.Sprintf(`"event":"%s"`, d.EventID), "waiting for its next attempt already. refused=true")
		})
	}
}

// A delivery the receiver refuses at every attempt fails after the last
// (D52); "resend failed deliveries" over a time range that holds its
// event starts it again, and says how many; a range without it resends
// none; a range that is not one is refused next to its field.
func TestWebhookResendFailed(t *testing.T) {
	t.Parallel()
	srv, rules := hooksReceiver(t, http.StatusInternalServerError, "down for maintenance")
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), rules)
	alice, _, totpSecret := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	ctx := context.Background()
	e, _, err := env.App.Endpoints.Create(ctx, f.ID, srv.URL+"/hook", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	ep := fmt.Sprintf("/manage/%d/webhooks/%d", f.ID, e.ID)
	id, err := env.App.Endpoints.SendTest(ctx, f.ID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Each attempt when it is due: the whole schedule, about 28 hours,
	// short of the 3 days that disable an endpoint.
	for range webhook.MaxAttempts {
		if _, err := env.App.Webhooks.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		d, _, err := env.App.Endpoints.Delivery(ctx, f.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if d.State != store.DeliveryPending {
			break
		}
		env.Clock.Advance(d.NextAttemptAt.Sub(env.Clock.Now()))
	}
	d, attempts, err := env.App.Endpoints.Delivery(ctx, f.ID, id)
	if err != nil || d.State != store.DeliveryFailed || len(attempts) != webhook.MaxAttempts {
		t.Fatalf("after the schedule: %+v, %d attempts, %v", d, len(attempts), err)
	}
	// The schedule took a day and more: the session ended; a new one.
	b := hooksLogIn(t, env, "alice", totpSecret)

	p := b.Get(t, ep)
	keysHas(t, "the deliveries page", p.Body, `<span class="badge fail">failed</span>`, "HTTP 500: Internal Server Error", "1 failed",
		fmt.Sprintf(`<td data-label="Attempts" class="num">%d</td>`, webhook.MaxAttempts))
	one := fmt.Sprintf("%s/deliveries/%d", ep, id)
	p = b.Get(t, one)
	keysHas(t, "the failed delivery's page", p.Body, fmt.Sprintf("Attempt %d", webhook.MaxAttempts), `<span class="badge fail">HTTP 500</span> Internal Server Error`,
		"down for maintenance", `action="`+one+`/resend"`)
	if n := strings.Count(p.Body, `<p class="webhooks-attempt">`); n != webhook.MaxAttempts {
		t.Errorf("the page shows %d attempts, want %d", n, webhook.MaxAttempts)
	}

	for _, c := range []struct {
		name, from, to, field, msg string
	}{
		{"no start", "", "2026-03-16T00:00", "from", "Invalid start: a date and time (UTC)"},
		{"a bad end", "2026-03-14T00:00", "tomorrow", "to", "Invalid end: a date and time (UTC)"},
		{"an end before the start", "2026-03-15T00:00", "2026-03-14T00:00", "to", "The time range must start before it ends."},
		{"too long", "2026-01-01T00:00", "2026-03-16T00:00", "to", "The time range may cover at most 31 days."},
	} {
		p := b.Post(t, ep+"/resend-failed", "from", c.from, "to", c.to)
		if p.Status != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", c.name, p.Status)
		}
		keysHas(t, c.name, p.Body, `<p class="field-error" id="`+c.field+`-error">`+c.msg, `value="`+c.to+`"`)
	}

	keysWant(t, "a range without it", b.Post(t, ep+"/resend-failed", "from", "2026-03-10T00:00", "to", "2026-03-14T15:00"),
		http.StatusSeeOther, ep+"?done=webhook-resent-failed&count=0")
	keysWant(t, "a range with it", b.Post(t, ep+"/resend-failed", "from", "2026-03-14T15:00", "to", "2026-03-14T15:10:00"),
		http.StatusSeeOther, ep+"?done=webhook-resent-failed&count=1")
	keysHas(t, "the notice", b.Get(t, ep+"?done=webhook-resent-failed&count=1").Body,
		"The failed deliveries of that time range are queued again: 1.", `<span class="badge off">pending</span>`)
	if p := b.Get(t, ep+"?done=webhook-resent-failed&count=%3Cb%3E"); strings.Contains(p.Body, "queued again") {
		t.Error("a count that is not a number made a notice")
	}
	if d, _, _ := env.App.Endpoints.Delivery(ctx, f.ID, id); d.State != store.DeliveryPending || d.Attempts != 0 {
		t.Errorf("after resending: %+v", d)
	}
	keysHas(t, "the audit log", hooksAudit(t, env, f), "resend_failed_webhook_deliveries", `"from":"2026-03-14T15:00:00Z"`,
		"1 failed deliveries queued again.", "0 failed deliveries queued again.", "The time range may cover at most 31 days. refused=true")
}

// An endpoint's deliveries show 25 a page, newest first, with a link to
// older ones, and filter by state.
func TestWebhookDeliveriesPaged(t *testing.T) {
	t.Parallel()
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), nil)
	alice, b, _ := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	ctx := context.Background()
	e, _, err := env.App.Endpoints.Create(ctx, f.ID, "https://hooks.example.com/a", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for range 30 {
		id, err := env.App.Endpoints.SendTest(ctx, f.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	ep := fmt.Sprintf("/manage/%d/webhooks/%d", f.ID, e.ID)
	row := func(id int64) string { return fmt.Sprintf(`href="%s/deliveries/%d"`, ep, id) }
	first := b.Get(t, ep)
	if n := strings.Count(first.Body, `<td data-label="Event">`); n != 25 {
		t.Errorf("the first page shows %d deliveries, want 25", n)
	}
	keysHas(t, "the first page", first.Body, row(ids[29]), row(ids[5]), "Older deliveries", "30 pending")
	keysLacks(t, "the first page", first.Body, row(ids[4]), ">Newest<")
	older := regexp.MustCompile(`href="(` + regexp.QuoteMeta(ep) + `\?before=\d+)"`).FindStringSubmatch(first.Body)
	if older == nil {
		t.Fatal("no link to older deliveries")
	}
	second := b.Get(t, older[1])
	if n := strings.Count(second.Body, `<td data-label="Event">`); n != 5 {
		t.Errorf("the second page shows %d deliveries, want 5", n)
	}
	keysHas(t, "the second page", second.Body, row(ids[4]), row(ids[0]), ">Newest<")
	keysLacks(t, "the second page", second.Body, row(ids[5]), "Older deliveries")

	delivered := b.Get(t, ep+"?state=delivered")
	keysHas(t, "delivered only", delivered.Body, "No deliveries delivered yet", `href="`+ep+`?state=delivered" aria-current="page"`)
	if p := b.Get(t, ep+"?state=junk&before=junk"); p.Status != http.StatusOK || strings.Count(p.Body, `<td data-label="Event">`) != 25 {
		t.Errorf("a bad filter and cursor: %d", p.Status)
	}
}

// An attempt that got no reply shows why; one that got a refusal shows
// its status once, not again as its error.
func TestWebhookAttemptWithoutReply(t *testing.T) {
	t.Parallel()
	srv, rules := hooksReceiver(t, http.StatusBadGateway, "")
	env, _ := hooksEnv(t, storetest.OpenSQLite(t), rules)
	alice, b, _ := hooksOwner(t, env, "alice")
	f, _ := keysFaucet(t, env, alice, "Alice's faucet")
	ctx := context.Background()
	e, _, err := env.App.Endpoints.Create(ctx, f.ID, srv.URL+"/hook", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	refused, err := env.App.Endpoints.SendTest(ctx, f.ID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Webhooks.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	ep := fmt.Sprintf("/manage/%d/webhooks/%d", f.ID, e.ID)
	p := b.Get(t, fmt.Sprintf("%s/deliveries/%d", ep, refused))
	keysHas(t, "a refused attempt", p.Body, `<span class="badge fail">HTTP 502</span> Bad Gateway`, "The reply had no body.")
	keysLacks(t, "a refused attempt", p.Body, `class="webhooks-error"`)

	// A receiver that hangs up without a word.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	mute, _, err := env.App.Endpoints.Create(ctx, f.ID, "https://"+l.Addr().String()+"/hook", []string{drip.EventPayoutSent})
	if err != nil {
		t.Fatal(err)
	}
	unanswered, err := env.App.Endpoints.SendTest(ctx, f.ID, mute.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.App.Webhooks.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	p = b.Get(t, fmt.Sprintf("/manage/%d/webhooks/%d/deliveries/%d", f.ID, mute.ID, unanswered))
	keysHas(t, "an unanswered attempt", p.Body, `<span class="badge fail">no reply</span>`, `<p class="webhooks-error">Post &#34;https://`+l.Addr().String()+"/hook&#34;: ")
	keysLacks(t, "an unanswered attempt", p.Body, "The reply had no body.")

	// Its endpoint disabled, the pending delivery waits for it (D52): its
	// page names no time for the next attempt, and names one once the
	// endpoint is enabled again.
	if err := env.App.Endpoints.SetEnabled(ctx, f.ID, mute.ID, false, "owner"); err != nil {
		t.Fatal(err)
	}
	p = b.Get(t, fmt.Sprintf("/manage/%d/webhooks/%d/deliveries/%d", f.ID, mute.ID, unanswered))
	keysHas(t, "a disabled endpoint's delivery", p.Body, `<span class="badge off">pending</span> <span class="meta">waits for the endpoint to be enabled</span>`)
	keysLacks(t, "a disabled endpoint's delivery", p.Body, "next attempt")
	if err := env.App.Endpoints.SetEnabled(ctx, f.ID, mute.ID, true, ""); err != nil {
		t.Fatal(err)
	}
	p = b.Get(t, fmt.Sprintf("/manage/%d/webhooks/%d/deliveries/%d", f.ID, mute.ID, unanswered))
	keysHas(t, "an enabled endpoint's delivery", p.Body, `<span class="meta">next attempt `)
	keysLacks(t, "an enabled endpoint's delivery", p.Body, "waits for the endpoint")
}
