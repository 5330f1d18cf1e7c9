package bench

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/webhook"
)

// TestReceiverCountsOnlyVerifiedDeliveries: the webhooks scenario's
// receiver counts a payout.sent of its faucet once and its repeats as
// duplicates, refuses (401) what does not verify, and counts apart a
// verified delivery that is not one it awaits.
func TestReceiverCountsOnlyVerifiedDeliveries(t *testing.T) {
	t.Parallel()
	rc, err := newReceiver()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.close)
	secret := webhook.NewSecret()
	const faucet = 7
	rc.start(secret, faucet)

	deliver := func(secret string, faucetID, payoutID int64, typ string) int {
		t.Helper()
		data, err := json.Marshal(drip.SentData{To: "alice", Amount: 1, Currency: "BTC", PayoutID: strconv.FormatInt(payoutID, 10), PayoutUserHash: "ab", Message: "Payout sent."})
		if err != nil {
			t.Fatal(err)
		}
		if typ == drip.EventLowBalance {
			data = []byte(`{"currency":"BTC","balance":1,"balance_bitcoin":0.00000001,"threshold":2,"message":"low"}`)
		}
		ev := drip.Event{ID: drip.NewEventID(), FaucetID: faucetID, Type: typ, Data: data, CreatedAt: time.Now()}
		body, err := webhook.Body(ev)
		if err != nil {
			t.Fatal(err)
		}
		req, err := webhook.NewRequest(context.Background(), rc.url, secret, ev.ID, ev, body, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	statuses := []int{
		deliver(secret, faucet, 41, drip.EventPayoutSent),
		deliver(secret, faucet, 41, drip.EventPayoutSent), // a retry: a duplicate
		deliver(secret, faucet, 42, drip.EventPayoutSent),
		deliver(webhook.NewSecret(), faucet, 43, drip.EventPayoutSent), // another secret
		deliver(secret, faucet+1, 44, drip.EventPayoutSent),            // another faucet
		deliver(secret, faucet, 45, drip.EventLowBalance),              // another event
	}
	if diff := cmp.Diff([]int{204, 204, 204, 401, 204, 204}, statuses); diff != "" {
		t.Errorf("statuses answered (-want +got):\n%s", diff)
	}
	want := receiverCounts{delivered: 3, duplicates: 1, refused: 1, stray: 2}
	if diff := cmp.Diff(want, rc.counts(), cmp.AllowUnexported(receiverCounts{})); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	arrived := rc.arrivals([]int64{41, 42, 43, 44})
	if arrived[0].IsZero() || arrived[1].IsZero() || !arrived[2].IsZero() || !arrived[3].IsZero() {
		t.Errorf("arrivals of 41, 42, 43, 44: %v; want only the first two", arrived)
	}

	if missing, err := rc.await(context.Background(), []int64{41, 42}, time.Second); missing != 0 || err != nil {
		t.Errorf("await of delivered payouts: %d missing, %v", missing, err)
	}
	if missing, err := rc.await(context.Background(), []int64{41, 43}, 50*time.Millisecond); missing != 1 || !errors.Is(err, errStalled) {
		t.Errorf("await of a payout never delivered: %d missing, %v; want 1, errStalled", missing, err)
	}
}

func TestReportTableShowsWebhookFigures(t *testing.T) {
	t.Parallel()
	rep := &Report{
		Engine: "postgres",
		Runs: []*Result{
			{Scenario: "webhooks", Variant: "off", Mode: "closed", Concurrency: 64, PayoutsPerS: 2000, RepliesPerS: 2000, Statuses: map[string]int64{"200": 20000}},
			{Scenario: "webhooks", Variant: "on", Mode: "closed", Concurrency: 64, PayoutsPerS: 1900, RepliesPerS: 1900, Statuses: map[string]int64{"200": 19000},
				Webhooks: &WebhookRun{Paid: 23000, Delivered: 23000, Behind: 120, CatchUpS: 0.25, WithoutRatio: 0.95, Lag: Latency{P50: 80, P99: 400, Max: 700}}},
		},
		Drain: &Drain{Backlog: 100000, BuildS: 30, DrainS: 40, PerS: 2500, FirstToLastS: 39, FirstToLastPerS: 2564, Delivered: 100000,
			Gates: []Gate{{Name: "the outbox is empty once drained", Status: "fail", Detail: "3 pending (<nil>)"}}},
	}
	rep.finish()
	if rep.OK {
		t.Error("a report whose drain failed a gate is OK")
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"webhooks off           closed      64      2000",
		"webhooks on closed c=64: 0.950× the payouts/s without endpoint; lag p50 80.0 ms, p99 400.0 ms, max 700.0 ms; 23000 of 23000 payouts delivered, 0 duplicates; 120 behind at the last reply, the last 0.25s after it",
		"webhooks drain: a backlog of 100000 deliveries (made in 30.0s with drip serve stopped) drained in 40.00s from starting drip serve: 2500/s",
		"FAILED webhooks drain: the outbox is empty once drained: 3 pending",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}
