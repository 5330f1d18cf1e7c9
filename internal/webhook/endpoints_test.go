package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/seal"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// names is a resolver of fixed answers; any other name does not resolve,
// so no test reaches a real DNS server.
type names map[string][]string

func (n names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range n[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return out, nil
}

var (
	resolver = names{
		"hooks.example.com":    {"93.184.216.34"},
		"other.example.com":    {"2606:2800:220:1:248:1893:25c8:1946"},
		"internal.example.com": {"93.184.216.34", "10.1.2.3"}, // one private answer is enough to refuse
		"metadata.example.com": {"169.254.169.254"},
	}
	madeAt = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)
)

// setup is a service over a fresh store of the engine, and two faucets.
type setup struct {
	st       store.Store
	svc      *webhook.Endpoints
	f, other *drip.Faucet
}

func newSetup(t *testing.T, eng storetest.Engine) *setup {
	t.Helper()
	st := eng.Open(t)
	env := apptest.New(t, st, apptest.Options{})
	f, _ := env.Faucet(t, nil)
	other, _ := env.Faucet(t, nil)
	svc, err := webhook.NewEndpoints(t.Context(), st, webhook.EndpointOptions{
		HTTP: safehttp.Options{Resolver: resolver},
		Now:  func() time.Time { return madeAt },
	})
	if err != nil {
		t.Fatal(err)
	}
	return &setup{st: st, svc: svc, f: f, other: other}
}

// engines runs fn on each engine, in parallel.
func engines(t *testing.T, fn func(t *testing.T, s *setup)) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newSetup(t, eng))
		})
	}
}

// code fails the test unless err is a *drip.Error of code, with a message.
func code(t *testing.T, err error, want drip.Code) {
	t.Helper()
	var e *drip.Error
	if !errors.As(err, &e) || e.Code != want || e.Message == "" {
		t.Fatalf("error %v; want a *drip.Error %s with a message", err, want)
	}
}

// count fails the test unless the faucet has n endpoints stored.
func count(t *testing.T, s *setup, faucetID int64, n int) {
	t.Helper()
	got, err := s.st.WebhookEndpointCount(t.Context(), faucetID)
	if err != nil || got != n {
		t.Fatalf("faucet %d has %d endpoints stored (%v); want %d", faucetID, got, err, n)
	}
}

// TestCreateStoresTheSecretSealedOnly: an endpoint is created enabled,
// its events in the documented order, and read back as made; its secret
// is a whsec_ secret that Secret opens from the stored row, and the row
// holds neither the secret nor its key bytes.
func TestCreateStoresTheSecretSealedOnly(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		ctx := t.Context()
		e, secret, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/drip", []string{drip.EventLowBalance, drip.EventPayoutSent})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(secret, webhook.SecretPrefix) || len(secret) < 40 {
			t.Fatalf("secret %q is not a whsec_ secret", secret)
		}
		want := webhook.Endpoint{
			ID: e.ID, FaucetID: s.f.ID, URL: "https://hooks.example.com/drip",
			Events:       []string{drip.EventPayoutSent, drip.EventLowBalance},
			SecretSealed: e.SecretSealed, Enabled: true, CreatedAt: madeAt, UpdatedAt: madeAt,
		}
		if diff := cmp.Diff(&want, e); diff != "" {
			t.Errorf("Create returned (-want +got):\n%s", diff)
		}
		row, err := s.st.WebhookEndpointGet(ctx, s.f.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&want, row); diff != "" {
			t.Errorf("stored row (-want +got):\n%s", diff)
		}
		keyPart := strings.TrimPrefix(secret, webhook.SecretPrefix)
		if row.SecretSealed == "" || strings.Contains(row.SecretSealed, keyPart) || strings.Contains(row.SecretSealed, secret) {
			t.Errorf("stored secret_sealed %q is empty or holds the secret", row.SecretSealed)
		}
		if got, err := s.svc.Secret(ctx, row); err != nil || got != secret {
			t.Errorf("Secret(stored row) = %q, %v; want the secret Create showed", got, err)
		}
		list, err := s.svc.List(ctx, s.f.ID)
		if err != nil || len(list) != 1 || list[0].ID != e.ID {
			t.Errorf("List = %+v, %v; want the one endpoint", list, err)
		}
	})
}

// TestSecretIsBoundToItsEndpoint: a sealed secret copied onto another
// endpoint's row does not open there, and a second service over the same
// database (another node) opens what the first sealed.
func TestSecretIsBoundToItsEndpoint(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		ctx := t.Context()
		a, secretA, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/a", []string{drip.EventPayoutSent})
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/b", []string{drip.EventPayoutSent})
		if err != nil {
			t.Fatal(err)
		}
		copied := *b
		copied.SecretSealed = a.SecretSealed
		if got, err := s.svc.Secret(ctx, &copied); !errors.Is(err, seal.ErrOpen) || got != "" {
			t.Errorf("a's sealed secret on b's row opened: %q, %v; want seal.ErrOpen", got, err)
		} else if strings.Contains(err.Error(), secretA) {
			t.Errorf("the error shows the secret: %v", err)
		}
		node2, err := webhook.NewEndpoints(ctx, s.st, webhook.EndpointOptions{HTTP: safehttp.Options{Resolver: resolver}})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := node2.Secret(ctx, a); err != nil || got != secretA {
			t.Errorf("another node's Secret = %q, %v; want a's secret", got, err)
		}
	})
}

// TestEleventhEndpointRefused: a faucet has at most 10 endpoints; the
// 11th is refused and not stored, other faucets are not affected, and
// deleting one makes room again.
func TestEleventhEndpointRefused(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		ctx := t.Context()
		var ids []int64
		for i := range webhook.MaxEndpoints {
			e, _, err := s.svc.Create(ctx, s.f.ID, fmt.Sprintf("https://hooks.example.com/%d", i), []string{drip.EventPayoutSent})
			if err != nil {
				t.Fatalf("endpoint %d: %v", i+1, err)
			}
			ids = append(ids, e.ID)
		}
		_, secret, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/11", []string{drip.EventPayoutSent})
		code(t, err, drip.CodeConflict)
		if secret != "" {
			t.Error("a refused create returned a secret")
		}
		count(t, s, s.f.ID, webhook.MaxEndpoints)
		if _, _, err := s.svc.Create(ctx, s.other.ID, "https://hooks.example.com/x", []string{drip.EventPayoutSent}); err != nil {
			t.Errorf("another faucet's first endpoint: %v", err)
		}
		if err := s.svc.Delete(ctx, s.f.ID, ids[3]); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/11", []string{drip.EventPayoutSent}); err != nil {
			t.Errorf("after a delete: %v", err)
		}
		count(t, s, s.f.ID, webhook.MaxEndpoints)
	})
}

// TestConcurrentCreatesStopAtTheLimit: creates racing on one faucet
// (counted in their transactions, under the faucet's lock) leave exactly
// MaxEndpoints endpoints; the others are refused as over the limit.
func TestConcurrentCreatesStopAtTheLimit(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		const tries = 2*webhook.MaxEndpoints + 4
		var wg sync.WaitGroup
		errs := make([]error, tries)
		start := make(chan struct{})
		for i := range tries {
			wg.Go(func() {
				<-start
				_, _, errs[i] = s.svc.Create(context.Background(), s.f.ID, fmt.Sprintf("https://hooks.example.com/%d", i), []string{drip.EventPayoutFailed})
			})
		}
		close(start)
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			} else if drip.ErrorCode(err) != drip.CodeConflict {
				t.Errorf("a racing create: %v; want success or the limit", err)
			}
		}
		if ok != webhook.MaxEndpoints {
			t.Errorf("%d creates succeeded; want %d", ok, webhook.MaxEndpoints)
		}
		count(t, s, s.f.ID, webhook.MaxEndpoints)
	})
}

// TestCreateRefusesBadURLsAndStoresNothing: URLs D53 forbids (http, a
// private, loopback or metadata address, a name resolving to one, a name
// that does not resolve) are refused with a message naming the Webhook
// URL, and nothing is stored.
func TestCreateRefusesBadURLsAndStoresNothing(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		for _, url := range []string{
			"http://hooks.example.com/drip",
			"https://10.0.0.8/drip",
			"https://127.0.0.1/drip",
			"https://[::ffff:127.0.0.1]/drip",
			"https://169.254.169.254/latest/meta-data",
			"https://internal.example.com/drip",
			"https://metadata.example.com/drip",
			"https://unknown.example.com/drip",
			"https://user:pass@hooks.example.com/drip",
			"",
		} {
			_, secret, err := s.svc.Create(t.Context(), s.f.ID, url, []string{drip.EventPayoutSent})
			code(t, err, drip.CodeInvalid)
			if !strings.Contains(drip.ErrorMessage(err), webhook.URLName) {
				t.Errorf("%q: message %q does not name the %s", url, drip.ErrorMessage(err), webhook.URLName)
			}
			if secret != "" {
				t.Errorf("%q: a refused create returned a secret", url)
			}
		}
		count(t, s, s.f.ID, 0)
		if _, _, err := s.svc.Create(t.Context(), s.f.ID, "https://other.example.com:8443/in?x=1", []string{drip.EventPayoutSent}); err != nil {
			t.Errorf("a public IPv6 name with a port: %v", err)
		}
	})
}

// TestCreateAdmitsALocalReceiverOnlyInDevelopment: AllowInsecure (D53's
// development flag) admits http and loopback, and still not a private
// address.
func TestCreateAdmitsALocalReceiverOnlyInDevelopment(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		dev, err := webhook.NewEndpoints(t.Context(), s.st, webhook.EndpointOptions{
			HTTP: safehttp.Options{Resolver: resolver, AllowInsecure: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := dev.Create(t.Context(), s.f.ID, "http://127.0.0.1:8080/hook", []string{drip.EventPayoutSent}); err != nil {
			t.Errorf("development, loopback over http: %v", err)
		}
		_, _, err = dev.Create(t.Context(), s.f.ID, "https://192.168.1.1/hook", []string{drip.EventPayoutSent})
		code(t, err, drip.CodeInvalid)
		count(t, s, s.f.ID, 1)
	})
}

// TestCreateValidatesEvents: at least one event, each known, none twice.
func TestCreateValidatesEvents(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		for _, events := range [][]string{
			nil,
			{},
			{"payout.created"},
			{drip.EventPayoutSent, "PAYOUT.FAILED"},
			{drip.EventPayoutSent, ""},
			{drip.EventPayoutSent, drip.EventPayoutFailed, drip.EventPayoutSent},
		} {
			_, _, err := s.svc.Create(t.Context(), s.f.ID, "https://hooks.example.com/drip", events)
			code(t, err, drip.CodeInvalid)
		}
		count(t, s, s.f.ID, 0)
		e, _, err := s.svc.Create(t.Context(), s.f.ID, "https://hooks.example.com/drip", webhook.Events)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(webhook.Events, e.Events); diff != "" {
			t.Errorf("all events (-want +got):\n%s", diff)
		}
	})
}

// TestRotateSecret: rotation gives a new secret, which the stored row
// now opens to; the old secret no longer comes out, and the new one is
// not stored in the clear either.
func TestRotateSecret(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		ctx := t.Context()
		e, old, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/drip", []string{drip.EventPayoutSent})
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := s.svc.RotateSecret(ctx, s.f.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if fresh == old || !strings.HasPrefix(fresh, webhook.SecretPrefix) {
			t.Fatalf("rotated secret %q: want a new whsec_ secret", fresh)
		}
		row, err := s.svc.Get(ctx, s.f.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if row.SecretSealed == e.SecretSealed || strings.Contains(row.SecretSealed, strings.TrimPrefix(fresh, webhook.SecretPrefix)) {
			t.Errorf("stored secret_sealed %q did not change or holds the secret", row.SecretSealed)
		}
		got, err := s.svc.Secret(ctx, row)
		if err != nil || got != fresh {
			t.Errorf("Secret after rotation = %q, %v; want the rotated secret", got, err)
		}
		if got == old {
			t.Error("the old secret still comes out of the stored row")
		}
		if webhook.Signature(got, []byte("{}")) == webhook.Signature(old, []byte("{}")) {
			t.Error("the rotated secret signs as the old one")
		}
	})
}

// TestSetEnabled: disabling records why, enabling clears it, and a
// state with the wrong reason is refused without a change.
func TestSetEnabled(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		ctx := t.Context()
		e, _, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/drip", []string{drip.EventPayoutSent})
		if err != nil {
			t.Fatal(err)
		}
		state := func(enabled bool, reason string) {
			t.Helper()
			got, err := s.svc.Get(ctx, s.f.ID, e.ID)
			if err != nil || got.Enabled != enabled || got.DisabledReason != reason {
				t.Fatalf("endpoint %+v, %v; want enabled %v, reason %q", got, err, enabled, reason)
			}
		}
		for _, c := range []struct {
			enabled bool
			reason  string
		}{{false, webhook.DisabledByOwner}, {true, ""}, {false, webhook.DisabledFailing}, {true, ""}} {
			if err := s.svc.SetEnabled(ctx, s.f.ID, e.ID, c.enabled, c.reason); err != nil {
				t.Fatal(err)
			}
			state(c.enabled, c.reason)
		}
		for _, c := range []struct {
			enabled bool
			reason  string
		}{{true, webhook.DisabledByOwner}, {false, ""}, {false, "bored"}} {
			code(t, s.svc.SetEnabled(ctx, s.f.ID, e.ID, c.enabled, c.reason), drip.CodeInvalid)
			state(true, "")
		}
	})
}

// TestAnotherFaucetsEndpointIsNotFound: every call naming an endpoint
// through a faucet it is not of is CodeNotFound and changes nothing; a
// missing endpoint or faucet is CodeNotFound too.
func TestAnotherFaucetsEndpointIsNotFound(t *testing.T) {
	engines(t, func(t *testing.T, s *setup) {
		ctx := t.Context()
		e, secret, err := s.svc.Create(ctx, s.f.ID, "https://hooks.example.com/drip", []string{drip.EventPayoutSent})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.svc.Get(ctx, s.other.ID, e.ID)
		code(t, err, drip.CodeNotFound)
		_, err = s.svc.RotateSecret(ctx, s.other.ID, e.ID)
		code(t, err, drip.CodeNotFound)
		code(t, s.svc.SetEnabled(ctx, s.other.ID, e.ID, false, webhook.DisabledByOwner), drip.CodeNotFound)
		code(t, s.svc.Delete(ctx, s.other.ID, e.ID), drip.CodeNotFound)
		code(t, s.svc.Delete(ctx, s.f.ID, e.ID+1000), drip.CodeNotFound)
		_, _, err = s.svc.Create(ctx, s.other.ID+1000, "https://hooks.example.com/drip", []string{drip.EventPayoutSent})
		code(t, err, drip.CodeNotFound)

		if list, err := s.svc.List(ctx, s.other.ID); err != nil || len(list) != 0 {
			t.Errorf("the other faucet lists %+v, %v; want none", list, err)
		}
		got, err := s.svc.Get(ctx, s.f.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(e, got); diff != "" {
			t.Errorf("the endpoint changed (-want +got):\n%s", diff)
		}
		if opened, err := s.svc.Secret(ctx, got); err != nil || opened != secret {
			t.Errorf("Secret = %q, %v; want the secret unchanged", opened, err)
		}
		if err := s.svc.Delete(ctx, s.f.ID, e.ID); err != nil {
			t.Fatal(err)
		}
		count(t, s, s.f.ID, 0)
	})
}
