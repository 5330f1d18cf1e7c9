package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for webhook deliveries, the outbox (issue 12, D50, D52).

// hookFixture is a faucet with endpoints of every kind: subscribed to
// payout.sent, to payout.failed, disabled, and another faucet's.
type hookFixture struct {
	f, other                   *drip.Faucet
	sent, failed, off, foreign store.WebhookEndpoint
}

func newHookFixture(t *testing.T, st store.Store) *hookFixture {
	owner := newUser(t, st, "owner")
	h := &hookFixture{f: newFaucet(t, st, owner, "hookf"), other: newFaucet(t, st, owner, "hooko")}
	ep := func(f *drip.Faucet, url string, enabled bool, events ...string) store.WebhookEndpoint {
		reason := ""
		if !enabled {
			reason = "owner"
		}
		return newWebhookEndpoint(t, st, store.WebhookEndpoint{FaucetID: f.ID, URL: url, Events: events,
			SecretSealed: "sealed:" + url, Enabled: enabled, DisabledReason: reason, CreatedAt: t0, UpdatedAt: t0})
	}
	h.sent = ep(h.f, "https://sent.example.com/", true, drip.EventPayoutSent, drip.EventLowBalance)
	h.failed = ep(h.f, "https://failed.example.com/", true, drip.EventPayoutFailed)
	h.off = ep(h.f, "https://off.example.com/", false, drip.EventPayoutSent, drip.EventPayoutFailed)
	h.foreign = ep(h.other, "https://foreign.example.com/", true, drip.EventPayoutSent)
	return h
}

// event stores one event of f's, alone.
func (h *hookFixture) event(t *testing.T, st store.Store, f *drip.Faucet, id, typ string, at time.Time) drip.Event {
	t.Helper()
	ev := drip.Event{ID: id, FaucetID: f.ID, Type: typ, Data: []byte(`{"n":1}`), CreatedAt: at}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.EventInsert(ctx, &ev) })
	return ev
}

// deliveries lists the faucet's deliveries to an endpoint as "event_id".
func deliveries(t *testing.T, st store.Store, faucetID, endpointID int64) []string {
	t.Helper()
	list, err := st.WebhookDeliveryList(context.Background(), &store.WebhookDeliveryListParams{
		FaucetID: faucetID, EndpointID: endpointID, Limit: 100})
	if err != nil {
		t.Fatalf("WebhookDeliveryList: %v", err)
	}
	var out []string
	for _, d := range list {
		out = append(out, d.EventID)
	}
	slices.Sort(out)
	return out
}

// An event becomes a delivery for each enabled endpoint of its faucet
// subscribed to its type, in the transaction that writes the event,
// however it is written: alone or with a payout batch. A rolled-back
// event leaves none.
func testWebhookFanOut(t *testing.T, st store.Store) {
	ctx := context.Background()
	h := newHookFixture(t, st)
	h.event(t, st, h.f, "evt_sent1", drip.EventPayoutSent, t0)
	h.event(t, st, h.f, "evt_fail1", drip.EventPayoutFailed, t0)
	h.event(t, st, h.other, "evt_other", drip.EventPayoutSent, t0)

	r := newUser(t, st, "alice")
	deposit(t, st, h.f.AccountID, "BTC", 100)
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		b, err := newBatch(ctx, tx, h.f, t0, payment{r, "BTC", 5}, payment{r, "BTC", 6})
		if err != nil {
			return err
		}
		b.Events = []drip.Event{
			{ID: "evt_batch1", FaucetID: h.f.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0},
			{ID: "evt_batch2", FaucetID: h.f.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0},
			{ID: "evt_batchlow", FaucetID: h.f.ID, Type: drip.EventLowBalance, Data: []byte(`{}`), CreatedAt: t0},
			{ID: "evt_batchfail", FaucetID: h.f.ID, Type: drip.EventPayoutFailed, Data: []byte(`{}`), CreatedAt: t0},
		}
		return tx.PayoutsInsert(ctx, b)
	})
	rollback := errors.New("roll back")
	err := try(st, func(ctx context.Context, tx store.Tx) error {
		ev := drip.Event{ID: "evt_gone", FaucetID: h.f.ID, Type: drip.EventPayoutSent, Data: []byte(`{}`), CreatedAt: t0}
		if err := tx.EventInsert(ctx, &ev); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatalf("rolled-back transaction: %v", err)
	}

	for _, c := range []struct {
		ep   store.WebhookEndpoint
		want []string
	}{
		{h.sent, []string{"evt_batch1", "evt_batch2", "evt_batchlow", "evt_sent1"}},
		{h.failed, []string{"evt_batchfail", "evt_fail1"}},
		{h.off, nil},
		{h.foreign, nil}, // listed under its own faucet below
	} {
		if got := deliveries(t, st, h.f.ID, c.ep.ID); !slices.Equal(got, c.want) {
			t.Errorf("deliveries to %s = %v, want %v", c.ep.URL, got, c.want)
		}
	}
	if got := deliveries(t, st, h.other.ID, h.foreign.ID); !slices.Equal(got, []string{"evt_other"}) {
		t.Errorf("deliveries to the other faucet's endpoint = %v, want [evt_other]", got)
	}
	if got := deliveries(t, st, h.f.ID, 0); len(got) != 6 {
		t.Errorf("every delivery of the faucet: %v, want 6", got)
	}
	d, err := st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{FaucetID: h.f.ID, EndpointID: h.sent.ID, Limit: 1})
	if err != nil || len(d) != 1 {
		t.Fatalf("WebhookDeliveryList limit 1: %v, %v", d, err)
	}
	if d[0].State != store.DeliveryPending || d[0].Attempts != 0 || !d[0].NextAttemptAt.Equal(t0) || d[0].EventType == "" {
		t.Errorf("a new delivery = %+v; want pending, no attempts, due at its event's time, with its type", d[0])
	}
	got, err := st.WebhookDeliveryGet(ctx, h.f.ID, d[0].ID)
	if err != nil || got.ID != d[0].ID || got.EventID != d[0].EventID {
		t.Errorf("WebhookDeliveryGet = %+v, %v; want %+v", got, err, d[0])
	}
	if _, err := st.WebhookDeliveryGet(ctx, h.other.ID, d[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebhookDeliveryGet by another faucet: %v, want ErrNotFound", err)
	}
	every, err := st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{FaucetID: h.f.ID, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, e := range every {
		if e.ID < d[0].ID {
			want = append(want, e.ID)
		}
	}
	older, err := st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{FaucetID: h.f.ID, BeforeID: d[0].ID, Limit: 100})
	var gotIDs []int64
	for _, e := range older {
		gotIDs = append(gotIDs, e.ID)
	}
	if err != nil || len(want) == 0 || !slices.Equal(gotIDs, want) {
		t.Errorf("the page before %d: %v, %v; want %v, newest first", d[0].ID, gotIDs, err, want)
	}
}

// A claim leases due deliveries of enabled endpoints with what sending
// needs; a leased delivery is not claimed again until its lease runs
// out; recording an attempt logs it and moves the delivery on.
func testWebhookClaimAndRecord(t *testing.T, st store.Store) {
	ctx := context.Background()
	h := newHookFixture(t, st)
	ev := h.event(t, st, h.f, "evt_one", drip.EventPayoutSent, t0)
	h.event(t, st, h.f, "evt_later", drip.EventPayoutFailed, t0.Add(time.Hour))

	claim := func(now time.Time, lease time.Duration) []store.WebhookDelivery {
		t.Helper()
		var out []store.WebhookDelivery
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			out, err = tx.WebhookDeliveryClaim(ctx, now, now.Add(lease), 10)
			return err
		})
		return out
	}
	got := claim(t0, time.Minute)
	if len(got) != 1 {
		t.Fatalf("claim at t0: %d deliveries, want 1 (the later one is not due)", len(got))
	}
	d := got[0]
	if d.URL != h.sent.URL || d.SecretSealed != h.sent.SecretSealed || d.Event.ID != ev.ID || d.Event.Type != ev.Type ||
		string(d.Event.Data) != string(ev.Data) || !d.Event.CreatedAt.Equal(ev.CreatedAt) || d.Event.FaucetID != h.f.ID {
		t.Errorf("claimed %+v; want the endpoint's URL and sealed secret and the event %+v", d, ev)
	}
	if again := claim(t0.Add(30*time.Second), time.Minute); len(again) != 0 {
		t.Errorf("claim within the lease: %d deliveries, want none", len(again))
	}
	pending, oldest, err := st.OutboxBacklog(ctx, store.DeliveryWebhook)
	if err != nil || pending != 2 || !oldest.Equal(t0) {
		t.Errorf("WebhookBacklog = %d, %v, %v; want 2 since t0", pending, oldest, err)
	}

	// A failed attempt, then a success.
	at := t0.Add(10 * time.Second)
	d.Attempts, d.Tries, d.LastStatus, d.LastError, d.NextAttemptAt = 1, 1, 500, "HTTP 500", at.Add(5*time.Second)
	record := func(a store.OutboxAttempt, d *store.WebhookDelivery) {
		t.Helper()
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			return tx.OutboxRecordAttempts(ctx, []store.OutboxRecord{{Attempt: a, Delivery: &d.Delivery}})
		})
	}
	record(store.OutboxAttempt{DeliveryID: d.ID, N: 1, At: at, Status: 500, Latency: 1500 * time.Microsecond, Error: "HTTP 500", Reply: "oops é"}, &d)
	if got := claim(at.Add(4*time.Second), time.Minute); len(got) != 0 {
		t.Errorf("claim before the retry is due: %d, want none", len(got))
	}
	got = claim(at.Add(5*time.Second), time.Minute)
	if len(got) != 1 || got[0].Attempts != 1 || got[0].Tries != 1 || got[0].LastStatus != 500 {
		t.Fatalf("claim when the retry is due: %+v; want the delivery after 1 attempt", got)
	}
	d = got[0]
	done := at.Add(6 * time.Second)
	d.State, d.Attempts, d.Tries, d.LastStatus, d.LastError, d.DoneAt = store.DeliveryDelivered, 2, 2, 204, "", done
	record(store.OutboxAttempt{DeliveryID: d.ID, N: 2, At: done, Status: 204, Latency: time.Millisecond}, &d)

	attempts, err := st.OutboxAttemptList(ctx, d.ID)
	if err != nil || len(attempts) != 2 {
		t.Fatalf("OutboxAttemptList = %+v, %v; want 2", attempts, err)
	}
	if a := attempts[0]; a.N != 1 || !a.At.Equal(at) || a.Status != 500 || a.Latency != 1500*time.Microsecond || a.Error != "HTTP 500" || a.Reply != "oops é" {
		t.Errorf("first attempt %+v", a)
	}
	if a := attempts[1]; a.N != 2 || a.Status != 204 {
		t.Errorf("second attempt %+v", a)
	}
	saved, err := st.WebhookDeliveryGet(ctx, h.f.ID, d.ID)
	if err != nil || saved.State != store.DeliveryDelivered || !saved.DoneAt.Equal(done) || saved.Tries != 2 || saved.LastStatus != 204 {
		t.Errorf("delivered: %+v, %v", saved, err)
	}
	if got := claim(t0.Add(24*time.Hour), time.Minute); len(got) != 1 || got[0].EventID != "evt_later" {
		t.Errorf("a day later, the claim = %+v; want only evt_later (the delivered one is done)", got)
	}
	counts, err := st.WebhookDeliveryCount(ctx, h.sent.ID)
	if err != nil || counts[store.DeliveryDelivered] != 1 || counts[store.DeliveryPending] != 0 {
		t.Errorf("WebhookDeliveryCount(sent) = %v, %v", counts, err)
	}

	// A disabled endpoint's deliveries wait, pending, unclaimed.
	e := h.failed
	e.Enabled, e.DisabledReason, e.UpdatedAt = false, "owner", t0
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointSetEnabled(ctx, &e) })
	h.event(t, st, h.f, "evt_fail2", drip.EventPayoutFailed, t0) // disabled: no delivery made
	if got := claim(t0.Add(48*time.Hour), time.Minute); len(got) != 0 {
		t.Errorf("claim with the endpoint disabled: %+v; want none", got)
	}
	// Parked out of every claim's due range, so that no claim reads it
	// (D52), and due at once when the endpoint is enabled again.
	failedList := func() []store.WebhookDelivery {
		t.Helper()
		list, err := st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{FaucetID: h.f.ID, EndpointID: h.failed.ID, Limit: 10})
		if err != nil || len(list) != 1 || list[0].EventID != "evt_later" {
			t.Fatalf("the failed endpoint's deliveries: %+v, %v; want evt_later", list, err)
		}
		return list
	}
	if next := failedList()[0].NextAttemptAt; !next.After(t0.AddDate(1000, 0, 0)) {
		t.Errorf("evt_later's next attempt with its endpoint disabled: %v; want it parked past any claim's time", next)
	}
	enabled := t0.Add(47 * time.Hour)
	e.Enabled, e.DisabledReason, e.UpdatedAt = true, "", enabled
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointSetEnabled(ctx, &e) })
	if next := failedList()[0].NextAttemptAt; !next.Equal(enabled) {
		t.Errorf("evt_later's next attempt once its endpoint is enabled: %v; want %v, when it was enabled", next, enabled)
	}
	if got := claim(enabled, time.Minute); len(got) != 1 || got[0].EventID != "evt_later" {
		t.Errorf("claim once enabled again: %+v; want evt_later", got)
	}
}

// Two claims at once never take the same delivery (D31): on PostgreSQL
// the second skips the rows the first holds; on SQLite it waits for the
// first to commit and finds them leased.
func testWebhookClaimsDisjoint(t *testing.T, st store.Store) {
	h := newHookFixture(t, st)
	for i := range 40 {
		h.event(t, st, h.f, "evt_"+string(rune('a'+i%26))+string(rune('a'+i/26)), drip.EventPayoutSent, t0)
	}
	held := make(chan struct{})
	release := make(chan struct{})
	var first, second []store.WebhookDelivery
	errc := make(chan error, 1)
	go func() {
		errc <- st.Transact(context.Background(), func(tx store.Tx) error {
			var err error
			first, err = tx.WebhookDeliveryClaim(context.Background(), t0, t0.Add(time.Minute), 25)
			close(held)
			<-release
			return err
		})
	}()
	<-held
	go func() { time.Sleep(50 * time.Millisecond); close(release) }()
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		second, err = tx.WebhookDeliveryClaim(ctx, t0, t0.Add(time.Minute), 25)
		return err
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, d := range append(first, second...) {
		if seen[d.ID] {
			t.Errorf("delivery %d claimed twice", d.ID)
		}
		seen[d.ID] = true
	}
	if len(first) != 25 || len(seen) != 40 {
		t.Errorf("claims took %d and %d of 40; want 25 and the 15 others", len(first), len(second))
	}
}

// A record made by a claim whose lease ran out, after another claim
// recorded the same attempt, is dropped: the later record stands.
func testWebhookStaleRecordDropped(t *testing.T, st store.Store) {
	ctx := context.Background()
	h := newHookFixture(t, st)
	h.event(t, st, h.f, "evt_stale", drip.EventPayoutSent, t0)
	var d store.WebhookDelivery
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.WebhookDeliveryClaim(ctx, t0, t0.Add(time.Minute), 1)
		if err == nil && len(got) != 1 {
			err = errors.New("want one claimed")
		}
		if err == nil {
			d = got[0]
		}
		return err
	})
	stale, fresh := d, d
	fresh.State, fresh.Attempts, fresh.Tries, fresh.LastStatus, fresh.DoneAt = store.DeliveryDelivered, 1, 1, 200, t0.Add(2*time.Minute)
	stale.Attempts, stale.Tries, stale.LastStatus, stale.LastError, stale.NextAttemptAt = 1, 1, 500, "HTTP 500", t0.Add(3*time.Minute)
	for _, r := range []store.OutboxRecord{
		{Attempt: store.OutboxAttempt{DeliveryID: d.ID, N: 1, At: fresh.DoneAt, Status: 200}, Delivery: &fresh.Delivery},
		{Attempt: store.OutboxAttempt{DeliveryID: d.ID, N: 1, At: t0.Add(3 * time.Minute), Status: 500, Error: "HTTP 500"}, Delivery: &stale.Delivery},
	} {
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			return tx.OutboxRecordAttempts(ctx, []store.OutboxRecord{r})
		})
	}
	got, err := st.WebhookDeliveryGet(ctx, h.f.ID, d.ID)
	if err != nil || got.State != store.DeliveryDelivered || got.LastStatus != 200 {
		t.Errorf("after a stale record: %+v, %v; want the first record's delivered state", got, err)
	}
	if a, err := st.OutboxAttemptList(ctx, d.ID); err != nil || len(a) != 1 || a[0].Status != 200 {
		t.Errorf("attempts %+v, %v; want the one 200", a, err)
	}
}

// Resending restarts failed or delivered deliveries, one or an
// endpoint's failed ones in a time range; pending ones are left alone.
func testWebhookResend(t *testing.T, st store.Store) {
	ctx := context.Background()
	h := newHookFixture(t, st)
	for i, at := range []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour), t0.Add(3 * time.Hour)} {
		h.event(t, st, h.f, "evt_r"+string(rune('0'+i)), drip.EventPayoutSent, at)
	}
	all, err := st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{FaucetID: h.f.ID, EndpointID: h.sent.ID, Limit: 10})
	if err != nil || len(all) != 4 {
		t.Fatalf("deliveries: %v, %v", all, err)
	}
	slices.Reverse(all) // oldest first: r0, r1, r2, r3
	var records []store.OutboxRecord
	for i := range all[:3] { // r0..r2 failed; r3 stays pending
		d := &all[i]
		d.State, d.Attempts, d.Tries, d.LastError, d.DoneAt = store.DeliveryFailed, 1, 1, "timeout", t0.Add(100*time.Hour)
		records = append(records, store.OutboxRecord{Attempt: store.OutboxAttempt{DeliveryID: d.ID, N: 1, At: d.DoneAt, Error: "timeout"}, Delivery: &d.Delivery})
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.OutboxRecordAttempts(ctx, records) })

	resend := func(p store.WebhookResendParams) int64 {
		t.Helper()
		var n int64
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			n, err = tx.WebhookDeliveriesResend(ctx, &p, t0.Add(200*time.Hour))
			return err
		})
		return n
	}
	// The failed ones created in [t0+1h, t0+3h]: r1 and r2 (r3 is pending).
	if n := resend(store.WebhookResendParams{FaucetID: h.f.ID, EndpointID: h.sent.ID, From: t0.Add(time.Hour), To: t0.Add(4 * time.Hour)}); n != 2 {
		t.Errorf("resend of a range restarted %d, want 2", n)
	}
	if n := resend(store.WebhookResendParams{FaucetID: h.other.ID, ID: all[0].ID}); n != 0 {
		t.Errorf("resend by another faucet restarted %d, want 0", n)
	}
	if n := resend(store.WebhookResendParams{FaucetID: h.f.ID, ID: all[0].ID}); n != 1 {
		t.Errorf("resend of one restarted %d, want 1", n)
	}
	if n := resend(store.WebhookResendParams{FaucetID: h.f.ID, ID: all[3].ID}); n != 0 {
		t.Errorf("resend of a pending delivery restarted %d, want 0", n)
	}
	for _, d := range all[:3] {
		got, err := st.WebhookDeliveryGet(ctx, h.f.ID, d.ID)
		if err != nil || got.State != store.DeliveryPending || got.Attempts != 0 || got.Tries != 1 ||
			!got.NextAttemptAt.Equal(t0.Add(200*time.Hour)) || !got.DoneAt.IsZero() {
			t.Errorf("resent delivery %+v, %v; want pending, a new schedule, the log's numbering kept", got, err)
		}
	}
}

// An endpoint's health: a failure starts failing_since, later failures
// keep it, a success clears it; those failing since the cut-off are
// returned while enabled.
func testWebhookEndpointHealth(t *testing.T, st store.Store) {
	ctx := context.Background()
	h := newHookFixture(t, st)
	health := func(ok, failed []int64, at, cut time.Time) []store.WebhookEndpoint {
		t.Helper()
		var out []store.WebhookEndpoint
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			out, err = tx.WebhookEndpointsHealth(ctx, ok, failed, at, cut)
			return err
		})
		return out
	}
	if got := health(nil, []int64{h.sent.ID, h.failed.ID, h.off.ID}, t0, t0.Add(-72*time.Hour)); len(got) != 0 {
		t.Errorf("first failures: %d returned, want none", len(got))
	}
	later := t0.Add(73 * time.Hour)
	got := health([]int64{h.failed.ID}, []int64{h.sent.ID, h.off.ID}, later, later.Add(-72*time.Hour))
	if len(got) != 1 || got[0].ID != h.sent.ID || !got[0].FailingSince.Equal(t0) {
		t.Errorf("73 h of failures: %+v; want only the enabled endpoint failing since t0", got)
	}
	e, err := st.WebhookEndpointGet(ctx, h.f.ID, h.failed.ID)
	if err != nil || !e.FailingSince.IsZero() {
		t.Errorf("after a success, failing_since = %v, %v; want unset", e.FailingSince, err)
	}
}

// Deleting an endpoint deletes its deliveries and their attempts.
func testWebhookEndpointDeleteTakesDeliveries(t *testing.T, st store.Store) {
	ctx := context.Background()
	h := newHookFixture(t, st)
	h.event(t, st, h.f, "evt_del", drip.EventPayoutSent, t0)
	var claimed []store.WebhookDelivery
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		if claimed, err = tx.WebhookDeliveryClaim(ctx, t0, t0.Add(time.Minute), 10); err != nil || len(claimed) != 1 {
			return errors.Join(err, errors.New("want one claimed"))
		}
		d := &claimed[0]
		d.Attempts, d.Tries = 1, 1
		return tx.OutboxRecordAttempts(ctx, []store.OutboxRecord{{Attempt: store.OutboxAttempt{DeliveryID: d.ID, N: 1, At: t0}, Delivery: &d.Delivery}})
	})
	if err := try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.WebhookEndpointDelete(ctx, h.other.ID, h.sent.ID)
	}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete by another faucet: %v, want ErrNotFound", err)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.WebhookEndpointDelete(ctx, h.f.ID, h.sent.ID) })
	if _, err := st.WebhookDeliveryGet(ctx, h.f.ID, claimed[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted endpoint's delivery: %v, want ErrNotFound", err)
	}
	if a, err := st.OutboxAttemptList(ctx, claimed[0].ID); err != nil || len(a) != 0 {
		t.Errorf("its attempts: %v, %v; want none", a, err)
	}
	var id int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		id, err = tx.WebhookDeliveryInsert(ctx, h.f.ID, h.failed.ID, "evt_del", t0)
		return err
	})
	if d, err := st.WebhookDeliveryGet(ctx, h.f.ID, id); err != nil || d.EndpointID != h.failed.ID || d.State != store.DeliveryPending {
		t.Errorf("WebhookDeliveryInsert: %+v, %v", d, err)
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.WebhookDeliveryInsert(ctx, h.other.ID, h.failed.ID, "evt_del", t0)
		return err
	}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebhookDeliveryInsert to another faucet's endpoint: %v, want ErrNotFound", err)
	}
}
