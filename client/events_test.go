package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
)

// TestCatchUpReadsEveryEventOnceAndResumes (D59): a receiver that was
// down catches up on the feed from its last cursor: every event in
// order, the payouts' payout.sent and a refusal's payout.failed; a
// handler that fails stops CatchUp at the cursor before that read, so the
// next catch-up hands the event again; a catch-up from the kept cursor
// reads only what came after. A cursor the feed did not give is "invalid".
func TestCatchUpReadsEveryEventOnceAndResumes(t *testing.T) {
	eachEngine(t, apptest.Options{}, func(t *testing.T, e *apptest.Env) {
		ctx := context.Background()
		e.User(t, "bob")
		f, _ := e.Faucet(t, map[string]int64{"BTC": 10_000_000})
		c := newClient(t, e.Server.URL, e.Key(t, f, drip.ScopeRead, drip.ScopeSend), newRecorder(t, nil))
		for range 3 {
			if _, err := c.Send(ctx, SendRequest{To: "bob", Amount: 1000, Currency: "BTC"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.Send(ctx, SendRequest{To: "nobody_here", Amount: 1000, Currency: "BTC"}); ErrorCode(err) != CodeRecipientNotPayable {
			t.Fatalf("send to nobody: %v", err)
		}
		want := []string{EventPayoutSent, EventPayoutSent, EventPayoutSent, EventPayoutFailed}

		var got []WebhookEvent
		var cursor string
		for deadline := time.Now().Add(30 * time.Second); len(got) < len(want) && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			got = got[:0]
			var err error
			cursor, err = c.CatchUp(ctx, "", nil, func(ev WebhookEvent) error { got = append(got, ev); return nil })
			if err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("CatchUp read %d events, want %d", len(got), len(want))
		}
		for i, ev := range got {
			if ev.Event != want[i] || ev.FaucetID != f.ID {
				t.Errorf("event %d: %s of faucet %d, want %s of %d", i, ev.Event, ev.FaucetID, want[i], f.ID)
			}
		}

		down := errors.New("receiver down")
		n := 0
		stopped, err := c.CatchUp(ctx, "", nil, func(WebhookEvent) error {
			if n++; n == 3 {
				return down
			}
			return nil
		})
		if !errors.Is(err, down) || stopped != "" {
			t.Errorf("a failing handler: cursor %q, err %v; want the cursor before the read (\"\") and its error", stopped, err)
		}

		failed, err := c.Events(ctx, EventsQuery{Types: []string{EventPayoutFailed}})
		if err != nil || len(failed.Events) != 1 || failed.Events[0].ID != got[3].ID {
			t.Errorf("Events of payout.failed: %+v, %v; want the refusal's", failed, err)
		}

		if _, err := c.Send(ctx, SendRequest{To: "bob", Amount: 1000, Currency: "BTC"}); err != nil {
			t.Fatal(err)
		}
		var more []WebhookEvent
		for deadline := time.Now().Add(30 * time.Second); len(more) == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			next, err := c.CatchUp(ctx, cursor, nil, func(ev WebhookEvent) error { more = append(more, ev); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if len(more) > 0 {
				cursor = next
			}
		}
		if len(more) != 1 || more[0].Event != EventPayoutSent {
			t.Errorf("catching up from the kept cursor: %+v, want the one new payout.sent", more)
		}

		if _, err := c.Events(ctx, EventsQuery{After: "not-a-cursor"}); ErrorCode(err) != CodeInvalid {
			t.Errorf("a bad cursor: %v, want %s", err, CodeInvalid)
		}
	})
}
