package webhook_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/clocktest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/logtest"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/notify"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// The delivery worker against a local HTTPS receiver (the development
// option admits loopback, D53), on each engine, with an injected clock.

// hookReceiver is a local HTTPS receiver that checks every delivery as
// spec 6.1 rule 3 says, both signatures, and answers as told.
type hookReceiver struct {
	*httptest.Server
	t      *testing.T
	mu     sync.Mutex
	secret string
	now    func() time.Time
	answer func(n int, w http.ResponseWriter) // the n-th request (from 1); 200 when nil
	got    []received
}

type received struct {
	event        client.WebhookEvent
	header       http.Header
	body         []byte
	sigOK, stdOK bool
}

func newHookReceiver(t *testing.T, now func() time.Time) *hookReceiver {
	r := &hookReceiver{t: t, now: now}
	r.Server = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body) // the raw bytes first
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	secret := r.secret
	rec := received{header: req.Header.Clone(), body: body}
	rec.sigOK = client.VerifySignature(secret, body, req.Header.Get(webhook.HeaderSignature)) == nil
	rec.stdOK = client.VerifyStandard(secret, body, req.Header, r.now(), 0) == nil
	_ = json.Unmarshal(body, &rec.event)
	r.got = append(r.got, rec)
	n, answer := len(r.got), r.answer
	r.mu.Unlock()
	if !rec.sigOK || !rec.stdOK {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if answer != nil {
		answer(n, w)
		return
	}
	w.Write([]byte(`{"ok":true}`))
}

func (r *hookReceiver) received() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// hookSetup is a faucet with an endpoint at a local receiver, and a
// worker, over a fresh store of one engine.
type hookSetup struct {
	st       store.Store
	env      *apptest.Env
	clock    *clocktest.Clock
	svc      *webhook.Endpoints
	worker   *webhook.Worker
	recv     *hookReceiver
	f        *drip.Faucet
	endpoint *webhook.Endpoint
	opts     safehttp.Options
	v1key    string
}

func newHookSetup(t *testing.T, eng storetest.Engine, timeout time.Duration, events ...string) *hookSetup {
	t.Helper()
	st := eng.Open(t)
	s := &hookSetup{st: st}
	s.env = apptest.New(t, st, apptest.Options{})
	s.clock = s.env.Clock
	s.f, s.v1key = s.env.Faucet(t, map[string]int64{"BTC": 1_000_000})
	s.recv = newHookReceiver(t, s.clock.Now)
	pool := x509.NewCertPool()
	pool.AddCert(s.recv.Certificate())
	s.opts = safehttp.Options{AllowInsecure: true, RootCAs: pool, Timeout: timeout, Resolver: resolver}
	var err error
	s.svc, err = webhook.NewEndpoints(t.Context(), st, webhook.EndpointOptions{HTTP: s.opts, Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) == 0 {
		events = webhook.Events
	}
	var secret string
	s.endpoint, secret, err = s.svc.Create(t.Context(), s.f.ID, s.recv.URL+"/hooks", events)
	if err != nil {
		t.Fatal(err)
	}
	s.recv.secret = secret
	s.worker = webhook.NewWorker(webhook.WorkerConfig{Store: st, Endpoints: s.svc, Client: safehttp.NewClient(s.opts),
		Now: s.clock.Now, Rand: func() float64 { return 0.5 }}) // no jitter: the gaps exactly
	return s
}

// run claims and attempts once and returns how many it claimed.
func (s *hookSetup) run(t *testing.T) int {
	t.Helper()
	n, err := s.worker.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	return n
}

func (s *hookSetup) attempts(t *testing.T, id int64) (*webhook.Delivery, []webhook.Attempt) {
	t.Helper()
	d, attempts, err := s.svc.Delivery(t.Context(), s.f.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return d, attempts
}

// A payout's event reaches the receiver once, signed both ways over the
// exact body of spec 2.8, with the D51 headers; the attempt is logged.
func TestWorkerDeliversSignedPayoutEvents(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			s := newHookSetup(t, eng, 0, drip.EventPayoutSent)
			recipient := s.env.User(t, "alice")
			reply := s.env.Post(t, "/send", url.Values{"api_key": {s.v1key}, "to": {"alice"}, "amount": {"1234"}, "currency": {"BTC"}})
			var payoutID int64
			if err := json.Unmarshal(reply.Body["payout_id"], &payoutID); reply.Status() != 200 || err != nil {
				t.Fatalf("v1 send: %s", reply.Raw)
			}
			if n := s.run(t); n != 1 {
				t.Fatalf("claimed %d deliveries, want 1", n)
			}
			got := s.recv.received()
			if len(got) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(got))
			}
			r := got[0]
			if !r.sigOK || !r.stdOK {
				t.Errorf("signatures: X-Service-Signature ok=%v, Standard Webhooks ok=%v; want both", r.sigOK, r.stdOK)
			}
			var data client.PayoutSent
			if err := json.Unmarshal(r.event.Data, &data); err != nil {
				t.Fatal(err)
			}
			if r.event.Event != drip.EventPayoutSent || r.event.FaucetID != s.f.ID || data.Amount != 1234 ||
				data.PayoutID != strconv.FormatInt(payoutID, 10) || data.To != recipient.Username {
				t.Errorf("body %s; want payout.sent of payout %d, 1234 to %s", r.body, payoutID, recipient.Username)
			}
			h := r.header
			if h.Get(webhook.HeaderEvent) != drip.EventPayoutSent || h.Get(webhook.HeaderDelivery) != r.event.ID ||
				h.Get(webhook.HeaderStandardID) != r.event.ID || h.Get("Content-Type") != "application/json" {
				t.Errorf("headers %v", h)
			}
			list, err := s.svc.Deliveries(t.Context(), s.f.ID, s.endpoint.ID, "", 0, 10)
			if err != nil || len(list) != 1 {
				t.Fatalf("deliveries %v, %v", list, err)
			}
			d, attempts := s.attempts(t, list[0].ID)
			if d.State != store.DeliveryDelivered || len(attempts) != 1 || attempts[0].Status != 200 || attempts[0].Reply != `{"ok":true}` {
				t.Errorf("delivery %+v, attempts %+v; want delivered after one 200", d, attempts)
			}
			if n := s.run(t); n != 0 || len(s.recv.received()) != 1 {
				t.Errorf("a second run claimed %d; the receiver has %d requests; want nothing more", n, len(s.recv.received()))
			}
		})
	}
}

// A receiver's own check refuses a tampered body and a wrong secret.
func TestReceiverCheckRefusesTamperingAndWrongSecret(t *testing.T) {
	t.Parallel()
	eng := storetest.Engines(t)[0]
	s := newHookSetup(t, eng, 0)
	if _, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID); err != nil {
		t.Fatal(err)
	}
	s.run(t)
	got := s.recv.received()
	if len(got) != 1 || !got[0].sigOK || !got[0].stdOK {
		t.Fatalf("the test event: %+v", got)
	}
	r := got[0]
	tampered := []byte(strings.Replace(string(r.body), "test event", "test evenT", 1))
	if err := client.VerifySignature(s.recv.secret, tampered, r.header.Get(webhook.HeaderSignature)); !errors.Is(err, client.ErrBadSignature) {
		t.Errorf("tampered body, X-Service-Signature: %v, want ErrBadSignature", err)
	}
	if err := client.VerifyStandard(s.recv.secret, tampered, r.header, s.clock.Now(), 0); !errors.Is(err, client.ErrBadSignature) {
		t.Errorf("tampered body, Standard Webhooks: %v, want ErrBadSignature", err)
	}
	wrong := webhook.NewSecret()
	if err := client.VerifySignature(wrong, r.body, r.header.Get(webhook.HeaderSignature)); !errors.Is(err, client.ErrBadSignature) {
		t.Errorf("wrong secret, X-Service-Signature: %v, want ErrBadSignature", err)
	}
	if err := client.VerifyStandard(wrong, r.body, r.header, s.clock.Now(), 0); !errors.Is(err, client.ErrBadSignature) {
		t.Errorf("wrong secret, Standard Webhooks: %v, want ErrBadSignature", err)
	}
	// And the receiver in the loop: after a rotation the old secret's
	// check refuses the next delivery (401), which is logged and retried.
	if _, err := s.svc.RotateSecret(t.Context(), s.f.ID, s.endpoint.ID); err != nil {
		t.Fatal(err)
	}
	id, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID)
	if err != nil {
		t.Fatal(err)
	}
	s.run(t)
	d, attempts := s.attempts(t, id)
	if d.State != store.DeliveryPending || len(attempts) != 1 || attempts[0].Status != http.StatusUnauthorized {
		t.Errorf("delivery under the old secret: %+v %+v; want a 401 logged and a retry pending", d, attempts)
	}
}

// A receiver that fails, times out, redirects and drops the connection
// gets its attempts on D52's schedule, each logged, until a 2xx; resend
// starts again what was delivered.
func TestWorkerRetriesOnTheSchedule(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			s := newHookSetup(t, eng, 300*time.Millisecond)
			s.recv.answer = func(n int, w http.ResponseWriter) {
				switch n {
				case 1:
					http.Error(w, "down for maintenance", http.StatusInternalServerError)
				case 2:
					time.Sleep(time.Second) // past the client's timeout
				case 3:
					w.Header().Set("Location", "https://127.0.0.1:1/elsewhere")
					w.WriteHeader(http.StatusFound)
				case 4:
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
				default:
					w.WriteHeader(http.StatusNoContent)
				}
			}
			id, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID)
			if err != nil {
				t.Fatal(err)
			}
			gaps := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour}
			for i, gap := range gaps {
				if n := s.run(t); n != 1 {
					t.Fatalf("attempt %d: claimed %d, want 1", i+1, n)
				}
				d, _ := s.attempts(t, id)
				if d.State != store.DeliveryPending || d.Attempts != i+1 {
					t.Fatalf("after attempt %d: %+v", i+1, d)
				}
				if want := s.clock.Now().Add(gap); d.NextAttemptAt.Sub(want).Abs() > 2*time.Second {
					t.Errorf("after attempt %d the next is at %v, want %v (gap %v)", i+1, d.NextAttemptAt, want, gap)
				}
				s.clock.Advance(gap - time.Second)
				if n := s.run(t); n != 0 {
					t.Errorf("a second before the gap of %v ends: claimed %d, want 0", gap, n)
				}
				s.clock.Advance(2 * time.Second)
			}
			if n := s.run(t); n != 1 {
				t.Fatalf("fifth attempt: claimed %d", n)
			}
			d, attempts := s.attempts(t, id)
			if d.State != store.DeliveryDelivered || len(attempts) != 5 {
				t.Fatalf("after the 204: %+v, %d attempts", d, len(attempts))
			}
			for i, want := range []struct {
				status int
				err    string
			}{{500, "HTTP 500"}, {0, "no reply within"}, {302, "HTTP 302"}, {0, "EOF"}, {204, ""}} {
				a := attempts[i]
				if a.N != i+1 || a.Status != want.status || !strings.Contains(a.Error, want.err) || (want.err == "" && a.Error != "") {
					t.Errorf("attempt %d: status %d, error %q; want %d and %q", i+1, a.Status, a.Error, want.status, want.err)
				}
			}
			if attempts[0].Reply != "down for maintenance\n" {
				t.Errorf("the 500's reply kept as %q", attempts[0].Reply)
			}
			if got := len(s.recv.received()); got != 5 {
				t.Errorf("the receiver saw %d requests, want 5 (the redirect not followed)", got)
			}
			if err := s.svc.Resend(t.Context(), s.f.ID, id); err != nil {
				t.Fatal(err)
			}
			if err := s.svc.Resend(t.Context(), s.f.ID, id); err == nil {
				t.Error("resending a pending delivery: no error")
			}
			s.run(t)
			if d, attempts := s.attempts(t, id); d.State != store.DeliveryDelivered || len(attempts) != 6 || attempts[5].N != 6 {
				t.Errorf("after the resend: %+v, %d attempts", d, len(attempts))
			}
		})
	}
}

// A delivery failing every attempt is failed after the 8th; an endpoint
// failing every attempt for 3 days is disabled, its owner's email queued
// in the same transaction; resend of a range restarts the failed ones.
func TestWorkerGivesUpAndDisablesAFailingEndpoint(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			s := newHookSetup(t, eng, 0)
			s.recv.answer = func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }
			start := s.clock.Now()
			first, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID)
			if err != nil {
				t.Fatal(err)
			}
			for i := range webhook.MaxAttempts {
				if n := s.run(t); n != 1 {
					t.Fatalf("attempt %d: claimed %d", i+1, n)
				}
				d, _ := s.attempts(t, first)
				if i+1 < webhook.MaxAttempts {
					s.clock.Advance(d.NextAttemptAt.Sub(s.clock.Now()))
				}
			}
			d, attempts := s.attempts(t, first)
			if d.State != store.DeliveryFailed || len(attempts) != webhook.MaxAttempts {
				t.Fatalf("after %d failures: %+v, %d attempts", webhook.MaxAttempts, d, len(attempts))
			}
			e, err := s.svc.Get(t.Context(), s.f.ID, s.endpoint.ID)
			if err != nil || !e.Enabled || !e.FailingSince.Equal(start) {
				t.Fatalf("endpoint after one failed delivery: %+v, %v; want enabled, failing since the first attempt", e, err)
			}
			// Three days after the first failure, one more failed attempt.
			s.clock.Advance(start.Add(72*time.Hour + time.Second).Sub(s.clock.Now()))
			second, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID)
			if err != nil {
				t.Fatal(err)
			}
			s.run(t)
			e, err = s.svc.Get(t.Context(), s.f.ID, s.endpoint.ID)
			if err != nil || e.Enabled || e.DisabledReason != webhook.DisabledFailing {
				t.Fatalf("endpoint failing for 3 days: %+v, %v; want disabled for failing", e, err)
			}
			// The attempt that disabled it is recorded first, then its
			// delivery parked with the endpoint's others (D52): no claim
			// reads it until the endpoint is enabled again.
			if d, _ := s.attempts(t, second); d.State != store.DeliveryPending || !d.NextAttemptAt.After(s.clock.Now().AddDate(1000, 0, 0)) {
				t.Errorf("the disabling attempt's delivery: %+v; want pending, parked past any claim's time", d)
			}
			// The owner's email went into the outbox with the disabling.
			inbox := &mailbox{}
			sent, err := notify.NewWorker(notify.Config{Store: s.st, Mail: inbox, Now: s.clock.Now}).RunOnce(t.Context())
			if err != nil || sent != 1 || len(inbox.got) != 1 || !strings.Contains(inbox.got[0].Body, s.endpoint.URL) ||
				!strings.Contains(inbox.got[0].Subject, "was disabled") {
				t.Errorf("owner's email: %d sent, %v, %+v; want one naming %s", sent, err, inbox.got, s.endpoint.URL)
			}
			notes, err := s.st.NotificationListByFaucet(t.Context(), s.f.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range notes {
				if n.Kind != drip.NotifyLowBalance {
					t.Errorf("the low-balance list shows a %q notification", n.Kind)
				}
			}
			if n := s.run(t); n != 0 {
				t.Errorf("a disabled endpoint's deliveries were claimed: %d", n)
			}
			// The owner fixes the receiver, enables the endpoint and resends
			// the failed deliveries of the period.
			s.recv.answer = nil
			if err := s.svc.SetEnabled(t.Context(), s.f.ID, s.endpoint.ID, true, ""); err != nil {
				t.Fatal(err)
			}
			n, err := s.svc.ResendFailed(t.Context(), s.f.ID, s.endpoint.ID, start.Add(-time.Hour), s.clock.Now().Add(time.Hour))
			if err != nil || n != 1 {
				t.Fatalf("ResendFailed = %d, %v; want the 1 failed delivery", n, err)
			}
			s.run(t)
			// The other, parked while the endpoint was disabled, was due
			// when it was enabled again.
			s.clock.Advance(10 * time.Second)
			s.run(t)
			for _, d := range mustList(t, s) {
				if d.State != store.DeliveryDelivered {
					t.Errorf("delivery %d is %s after the resend, want delivered", d.ID, d.State)
				}
			}
		})
	}
}

// mailbox keeps the emails it is given.
type mailbox struct{ got []mail.Message }

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.got = append(m.got, msg)
	return nil
}

func mustList(t *testing.T, s *hookSetup) []webhook.Delivery {
	t.Helper()
	list, err := s.svc.Deliveries(t.Context(), s.f.ID, s.endpoint.ID, "", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// rebinding answers a public address when the URL is saved and a private
// one when the worker connects: the dialer's check refuses the
// connection, so no request reaches anything (D53).
type rebinding struct {
	mu    sync.Mutex
	calls int
}

func (r *rebinding) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == 1 {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}
	return []netip.Addr{netip.MustParseAddr("10.0.0.7")}, nil
}

func TestWorkerRefusesAPrivateAddressAtConnect(t *testing.T) {
	t.Parallel()
	eng := storetest.Engines(t)[0]
	s := newHookSetup(t, eng, 0)
	// A listener on a private-looking address is not needed: the dialer
	// refuses before connecting, which the empty receiver shows.
	res := &rebinding{}
	opts := safehttp.Options{Resolver: res}
	svc, err := webhook.NewEndpoints(t.Context(), s.st, webhook.EndpointOptions{HTTP: opts, Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e, _, err := svc.Create(t.Context(), s.f.ID, "https://rebind.example.com/hook", webhook.Events)
	if err != nil {
		t.Fatalf("saving a name that resolves publicly: %v", err)
	}
	if err := s.svc.SetEnabled(t.Context(), s.f.ID, s.endpoint.ID, false, webhook.DisabledByOwner); err != nil {
		t.Fatal(err)
	}
	worker := webhook.NewWorker(webhook.WorkerConfig{Store: s.st, Endpoints: svc, Client: safehttp.NewClient(opts), Now: s.clock.Now})
	id, err := svc.SendTest(t.Context(), s.f.ID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := worker.RunOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, attempts, err := svc.Delivery(t.Context(), s.f.ID, id)
	if err != nil || len(attempts) != 1 {
		t.Fatalf("attempts %+v, %v", attempts, err)
	}
	if a := attempts[0]; a.Status != 0 || !strings.Contains(a.Error, "10.0.0.7") {
		t.Errorf("attempt to a name rebound to 10.0.0.7: %+v; want refused naming the address", a)
	}
}

// The signing secret is never logged, whatever the worker meets, and is
// stored only sealed: drip must sign with it, so it keeps it encrypted
// (AES-GCM, internal/seal) rather than hashed (D51).
func TestSigningSecretNeverLoggedNorStoredPlain(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			s := newHookSetup(t, eng, 200*time.Millisecond)
			logs := &logtest.Buffer{}
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			s.worker = webhook.NewWorker(webhook.WorkerConfig{Store: s.st, Endpoints: s.svc, Client: safehttp.NewClient(s.opts),
				Now: s.clock.Now, Log: log})
			s.recv.answer = func(n int, w http.ResponseWriter) {
				if n == 1 {
					time.Sleep(400 * time.Millisecond) // a timeout
					return
				}
				w.WriteHeader(http.StatusBadGateway)
			}
			for range 2 {
				if _, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID); err != nil {
					t.Fatal(err)
				}
			}
			s.run(t)
			// A sealed value that does not open (moved from another row):
			// the delivery fails, and the log says so without any secret.
			other, otherSecret, err := s.svc.Create(t.Context(), s.f.ID, s.recv.URL+"/other", webhook.Events)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.st.Transact(t.Context(), func(tx store.Tx) error {
				return tx.WebhookEndpointSetSecret(t.Context(), s.f.ID, other.ID, s.endpoint.SecretSealed, s.clock.Now())
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.svc.SendTest(t.Context(), s.f.ID, other.ID); err != nil {
				t.Fatal(err)
			}
			s.clock.Advance(time.Minute)
			s.run(t)
			if !strings.Contains(logs.String(), "delivery cannot be made") {
				t.Errorf("the log does not tell of the delivery that could not be made:\n%s", logs)
			}
			for _, secret := range []string{s.recv.secret, otherSecret} {
				key := strings.TrimPrefix(secret, webhook.SecretPrefix)
				if strings.Contains(logs.String(), key) {
					t.Errorf("the log holds a signing secret:\n%s", logs)
				}
				for _, e := range mustEndpoints(t, s) {
					if strings.Contains(e.SecretSealed, key) || strings.Contains(e.URL, key) {
						t.Errorf("endpoint %d stores a secret in the clear", e.ID)
					}
				}
			}
		})
	}
}

func mustEndpoints(t *testing.T, s *hookSetup) []webhook.Endpoint {
	t.Helper()
	list, err := s.svc.List(t.Context(), s.f.ID)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// A worker stopped with deliveries in hand hands back those it did not
// finish, due at once, rather than leaving them leased (D50).
func TestWorkerStoppedReleasesWhatItHolds(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			s := newHookSetup(t, eng, 0)
			started := make(chan struct{}, 10)
			s.recv.answer = func(_ int, w http.ResponseWriter) {
				started <- struct{}{}
				time.Sleep(2 * time.Second) // until the worker gives up
			}
			for range 3 {
				if _, err := s.svc.SendTest(t.Context(), s.f.ID, s.endpoint.ID); err != nil {
					t.Fatal(err)
				}
			}
			worker := webhook.NewWorker(webhook.WorkerConfig{Store: s.st, Endpoints: s.svc, Client: safehttp.NewClient(s.opts),
				Now: s.clock.Now, Concurrency: 1})
			ctx, cancel := context.WithCancel(t.Context())
			go func() { <-started; cancel() }()
			n, err := worker.RunOnce(ctx)
			if n != 3 || !errors.Is(err, context.Canceled) && err != nil {
				t.Fatalf("RunOnce = %d, %v; want 3 claimed", n, err)
			}
			for _, d := range mustList(t, s) {
				if d.State != store.DeliveryPending || d.Tries != 0 || d.NextAttemptAt.After(s.clock.Now()) {
					t.Errorf("delivery %d after the stop: %+v; want pending, unattempted, due now", d.ID, d)
				}
			}
		})
	}
}
