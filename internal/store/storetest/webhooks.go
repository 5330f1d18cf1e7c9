package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for webhook endpoints (issue 12, D53, D54).

// newWebhookEndpoint stores e and returns it with its id.
func newWebhookEndpoint(t *testing.T, st store.Store, e store.WebhookEndpoint) store.WebhookEndpoint {
	t.Helper()
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		e.ID, err = tx.WebhookEndpointCreate(ctx, &e)
		return err
	})
	return e
}

// Endpoints round-trip every column, list oldest first per faucet, count,
// change their secret and their state, and are deleted.
func testWebhookEndpointsRoundTrip(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f, other := newFaucet(t, st, owner, "hookf"), newFaucet(t, st, owner, "hooko")
	a := newWebhookEndpoint(t, st, store.WebhookEndpoint{
		FaucetID: f.ID, URL: "https://a.example.com/hook", Events: []string{drip.EventPayoutSent, drip.EventLowBalance},
		SecretSealed: "sealed-a", Enabled: true, CreatedAt: t0, UpdatedAt: t0,
	})
	b := newWebhookEndpoint(t, st, store.WebhookEndpoint{
		FaucetID: f.ID, URL: "https://b.example.com/hook", Events: []string{drip.EventPayoutFailed},
		SecretSealed: "sealed-b", Enabled: false, DisabledReason: "owner", CreatedAt: t0.Add(time.Second), UpdatedAt: t0.Add(time.Second),
	})
	c := newWebhookEndpoint(t, st, store.WebhookEndpoint{
		FaucetID: other.ID, URL: "https://c.example.com/hook", Events: []string{drip.EventPayoutSent},
		SecretSealed: "sealed-c", Enabled: true, CreatedAt: t0, UpdatedAt: t0,
	})
	if a.ID == 0 || b.ID <= a.ID {
		t.Fatalf("ids %d, %d: want increasing from 1", a.ID, b.ID)
	}
	list := func(faucetID int64, want ...store.WebhookEndpoint) {
		t.Helper()
		got, err := st.WebhookEndpointList(ctx, faucetID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("WebhookEndpointList(%d) (-want +got):\n%s", faucetID, diff)
		}
		n, err := st.WebhookEndpointCount(ctx, faucetID)
		if err != nil || n != len(want) {
			t.Errorf("WebhookEndpointCount(%d) = %d, %v; want %d", faucetID, n, err, len(want))
		}
	}
	list(f.ID, a, b)
	list(other.ID, c)
	got, err := st.WebhookEndpointGet(ctx, f.ID, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&b, got); diff != "" {
		t.Errorf("WebhookEndpointGet (-want +got):\n%s", diff)
	}

	t1 := t0.Add(time.Hour)
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.WebhookEndpointSetSecret(ctx, f.ID, a.ID, "sealed-a2", t1)
	})
	a.SecretSealed, a.UpdatedAt = "sealed-a2", t1
	b.Enabled, b.DisabledReason, b.UpdatedAt = true, "", t1
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointSetEnabled(ctx, &b) })
	list(f.ID, a, b)
	a.Enabled, a.DisabledReason = false, "failing"
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointSetEnabled(ctx, &a) })
	list(f.ID, a, b)

	bad := a
	bad.DisabledReason = "bored"
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointSetEnabled(ctx, &bad) }); err == nil {
		t.Error("disabled_reason \"bored\" was stored; want it refused")
	}

	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointDelete(ctx, f.ID, a.ID) })
	list(f.ID, b)
	list(other.ID, c)
	if _, err := st.WebhookEndpointGet(ctx, f.ID, a.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a deleted endpoint: %v, want ErrNotFound", err)
	}
}

// An endpoint named with another faucet is not found by any read or
// write, and is left as it was.
func testWebhookEndpointsOfAnotherFaucetNotFound(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f, other := newFaucet(t, st, owner, "hookf"), newFaucet(t, st, owner, "hooko")
	e := newWebhookEndpoint(t, st, store.WebhookEndpoint{
		FaucetID: f.ID, URL: "https://a.example.com/hook", Events: []string{drip.EventPayoutSent},
		SecretSealed: "sealed", Enabled: true, CreatedAt: t0, UpdatedAt: t0,
	})
	if _, err := st.WebhookEndpointGet(ctx, other.ID, e.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get through another faucet: %v, want ErrNotFound", err)
	}
	moved := e
	moved.FaucetID, moved.Enabled, moved.DisabledReason = other.ID, false, "owner"
	for name, fn := range map[string]func(ctx context.Context, tx store.Tx) error{
		"SetSecret": func(ctx context.Context, tx store.Tx) error {
			return tx.WebhookEndpointSetSecret(ctx, other.ID, e.ID, "x", t0)
		},
		"SetEnabled": func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointSetEnabled(ctx, &moved) },
		"Delete":     func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointDelete(ctx, other.ID, e.ID) },
	} {
		if err := try(st, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s through another faucet: %v, want ErrNotFound", name, err)
		}
	}
	got, err := st.WebhookEndpointGet(ctx, f.ID, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&e, got); diff != "" {
		t.Errorf("the endpoint changed (-want +got):\n%s", diff)
	}
	if n, err := st.WebhookEndpointCount(ctx, other.ID); err != nil || n != 0 {
		t.Errorf("the other faucet counts %d, %v; want 0", n, err)
	}
}
