package apiv2_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/payout"
)

// TestIdempotencyKeysKeptForTheirRetention: a bound key replays for the
// whole retention (D35, at least 7 days, longer if configured), and once
// pruned after it, the key is free again and pays a new payout.
func TestIdempotencyKeysKeptForTheirRetention(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		send := func() (int64, bool) {
			t.Helper()
			r := env.V2(t, fx.send, "/send", `{"idempotency_key":"weekly","to":"bob","amount":1000,"currency":"BTC"}`)
			if r.HTTPStatus != http.StatusOK {
				t.Fatalf("send: %s", r.Raw)
			}
			var d struct {
				PayoutID int64 `json:"payout_id"`
			}
			r.Data(t, &d)
			return d.PayoutID, r.Header.Get("Idempotent-Replayed") == "true"
		}
		prune := func(retention time.Duration) int64 {
			t.Helper()
			n, err := env.App.Payouts.PruneIdempotency(ctx, retention)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		first, _ := send()

		// A retention below the minimum is raised to it: nothing goes early.
		env.Clock.Advance(payout.MinIdempotencyRetention - time.Second)
		if n := prune(time.Hour); n != 0 {
			t.Errorf("pruned %d keys before the 7 days were over", n)
		}
		if id, replayed := send(); id != first || !replayed {
			t.Errorf("within the retention: payout %d replayed %v, want %d replayed", id, replayed, first)
		}
		// A longer retention keeps the key past the minimum.
		env.Clock.Advance(2 * time.Second)
		if n := prune(30 * 24 * time.Hour); n != 0 {
			t.Errorf("pruned %d keys inside a 30-day retention", n)
		}
		if n := prune(payout.MinIdempotencyRetention); n != 1 {
			t.Errorf("pruned %d keys after 7 days, want 1", n)
		}
		if id, replayed := send(); id == first || replayed {
			t.Errorf("after pruning: payout %d replayed %v, want a new payout", id, replayed)
		}
	})
}
