package webhook_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// TestBodyOfStoredEvents: the events the ledger records for a real v1
// payout that crosses the low-balance threshold, and for a refused one,
// read back from each engine, make the bodies of spec 2.8 and D51, with
// the payout's own id (as a string), hash, and the refusal's v1 status
// and v2 code.
func TestBodyOfStoredEvents(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			st := eng.Open(t)
			ctx := t.Context()
			env := apptest.New(t, st, apptest.Options{})
			f, key := env.Faucet(t, map[string]int64{"BTC": 10_000})
			on := true
			if _, err := env.App.Faucets.SetLowBalance(ctx, f.ID, faucet.LowBalanceChange{
				Enabled: &on, Thresholds: map[string]int64{"BTC": 500},
			}); err != nil {
				t.Fatal(err)
			}
			alice := env.User(t, "alice")

			paid := env.Post(t, "/send", url.Values{"api_key": {key}, "to": {"alice"}, "amount": {"9600"}, "currency": {"BTC"}})
			if paid.Status() != 200 {
				t.Fatalf("send: %s", paid.Raw)
			}
			var payoutID int64
			if err := json.Unmarshal(paid.Body["payout_id"], &payoutID); err != nil {
				t.Fatalf("payout_id of %s: %v", paid.Raw, err)
			}
			refused := env.Post(t, "/send", url.Values{"api_key": {key}, "to": {"nobody"}, "amount": {"100"}, "currency": {"BTC"}})
			if refused.Status() != 456 {
				t.Fatalf("send to nobody: %s", refused.Raw)
			}
			var refusal string
			_ = json.Unmarshal(refused.Body["message"], &refusal)

			events, err := st.EventList(ctx, f.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			created := env.Clock.Now().Unix()
			want := map[string]map[string]any{
				drip.EventPayoutSent: {"event": "payout.sent", "faucet_id": float64(f.ID), "created_at": float64(created),
					"data": map[string]any{"to": "alice", "amount": 9600.0, "currency": "BTC",
						"payout_id": strconv.FormatInt(payoutID, 10), "payout_user_hash": alice.PayoutUserHash, "message": "Payout sent."}},
				drip.EventPayoutFailed: {"event": "payout.failed", "faucet_id": float64(f.ID), "created_at": float64(created),
					"data": map[string]any{"to": "nobody", "amount": 100.0, "currency": "BTC",
						"status": 456.0, "error": string(drip.CodeRecipientUnknown), "message": refusal}},
				drip.EventLowBalance: {"event": "faucet.low_balance", "faucet_id": float64(f.ID), "created_at": float64(created),
					"data": map[string]any{"currency": "BTC", "balance": 400.0, "balance_bitcoin": 0.000004, "threshold": 500.0,
						"message": "The faucet's BTC balance fell below the alert threshold."}},
			}
			if len(events) != len(want) {
				t.Fatalf("%d events, want %d: %+v", len(events), len(want), events)
			}
			for _, ev := range events {
				body, err := webhook.Body(ev)
				if err != nil {
					t.Errorf("Body of the stored %s: %v", ev.Type, err)
					continue
				}
				var got map[string]any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("%s body %s: %v", ev.Type, body, err)
				}
				if got["id"] != ev.ID || len(ev.ID) != len("evt_")+36 {
					t.Errorf("%s body id %v, want the event's evt_ id %s", ev.Type, got["id"], ev.ID)
				}
				delete(got, "id")
				if diff := cmp.Diff(want[ev.Type], got); diff != "" {
					t.Errorf("%s body (-want +got):\n%s", ev.Type, diff)
				}
				delete(want, ev.Type)
			}
		})
	}
}
