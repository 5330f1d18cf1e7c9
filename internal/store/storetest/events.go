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

// The suite's part for the webhook events' outbox (D51).

func testEvents(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	g := newFaucet(t, st, owner, "key2")
	events := []drip.Event{
		{ID: "evt_a", FaucetID: f.ID, Type: drip.EventPayoutSent, Data: []byte(`{"to":"alice","amount":5,"payout_id":"1"}`), CreatedAt: t0},
		{ID: "evt_c", FaucetID: f.ID, Type: drip.EventPayoutFailed, Data: []byte(`{"status":402,"message":"é \"quoted\""}`), CreatedAt: t0.Add(time.Second)},
		{ID: "evt_b", FaucetID: f.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0.Add(time.Second)},
		{ID: "evt_g", FaucetID: g.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0.Add(time.Hour)},
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for i := range events {
			if err := tx.EventInsert(ctx, &events[i]); err != nil {
				return err
			}
		}
		return nil
	})
	// Newest first in the order they were written, whatever their times
	// and ids (random in production), so delivery follows causation.
	got, err := st.EventList(ctx, f.ID, 10)
	if err != nil {
		t.Fatalf("EventList: %v", err)
	}
	if diff := cmp.Diff([]drip.Event{events[2], events[1], events[0]}, got); diff != "" {
		t.Errorf("EventList (-want +got):\n%s", diff)
	}
	got, _ = st.EventList(ctx, f.ID, 1)
	if diff := cmp.Diff([]drip.Event{events[2]}, got); diff != "" {
		t.Errorf("EventList with limit 1 (-want +got):\n%s", diff)
	}
	got, _ = st.EventList(ctx, g.ID, 10)
	if diff := cmp.Diff([]drip.Event{events[3]}, got); diff != "" {
		t.Errorf("EventList of the other faucet (-want +got):\n%s", diff)
	}
	dup := drip.Event{ID: "evt_a", FaucetID: g.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.EventInsert(ctx, &dup) }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("EventInsert with a used id: err = %v, want ErrConflict", err)
	}
}
