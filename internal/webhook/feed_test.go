package webhook_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// feedFixture is a store with two faucets, and a way to write their events.
type feedFixture struct {
	st     store.Store
	f, g   int64 // faucet ids
	feed   *webhook.Feed
	events map[string]drip.Event // by id, as written
}

func newFeedFixture(t *testing.T, st store.Store) *feedFixture {
	t.Helper()
	env := apptest.New(t, st, apptest.Options{})
	f, _ := env.Faucet(t, nil)
	g, _ := env.Faucet(t, nil)
	return &feedFixture{st: st, f: f.ID, g: g.ID, feed: webhook.NewFeed(st), events: map[string]drip.Event{}}
}

// write commits one transaction of events of faucet faucetID: a
// payout.sent, payout.failed or faucet.low_balance with its real data, or
// a webhook.test.
func (fx *feedFixture) write(t *testing.T, faucetID int64, types ...string) []string {
	t.Helper()
	var ids []string
	err := fx.st.Transact(t.Context(), func(tx store.Tx) error {
		ids = ids[:0]
		for _, typ := range types {
			ev := drip.Event{ID: drip.NewEventID(), FaucetID: faucetID, Type: typ, CreatedAt: time.Unix(1_700_000_000+int64(len(fx.events)), 0).UTC()}
			status := 456
			switch typ {
			case drip.EventPayoutSent:
				ev.Data = []byte(`{"to":"alice","amount":5,"currency":"BTC","payout_id":"7","payout_user_hash":"ab","message":"Payout sent."}`)
			case drip.EventPayoutFailed:
				ev.Data = fmt.Appendf(nil, `{"to":"bob","amount":5,"currency":"BTC","status":%d,"error":"recipient_unknown","message":"No."}`, status)
			case drip.EventLowBalance:
				ev.Data = []byte(`{"currency":"BTC","balance":4,"balance_bitcoin":0.00000004,"threshold":5,"message":"Low."}`)
			case drip.EventWebhookTest:
				ev.Data = []byte(`{"message":"A test."}`)
			case "broken":
				ev.Type, ev.Data = drip.EventPayoutSent, []byte(`{"to":"alice"}`) // members missing: Body refuses it
			}
			if err := tx.EventInsert(t.Context(), &ev); err != nil {
				return err
			}
			fx.events[ev.ID] = ev
			ids = append(ids, ev.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// readAll pages through the faucet's feed from after until a read says
// there is no more, returning the events' ids and the last cursor. Each
// body must be exactly what Body makes of the stored event: the bytes a
// webhook delivery carries.
func (fx *feedFixture) readAll(t *testing.T, faucetID int64, after string, types []string, limit int) ([]string, string) {
	t.Helper()
	var ids []string
	for reads := 0; ; reads++ {
		if reads > 1000 {
			t.Fatal("the feed never said it had no more")
		}
		page, err := fx.feed.Read(t.Context(), faucetID, after, types, limit)
		if err != nil {
			t.Fatalf("Read after %q: %v", after, err)
		}
		if len(page.Bodies) > limit {
			t.Fatalf("Read with limit %d answered %d events", limit, len(page.Bodies))
		}
		for _, body := range page.Bodies {
			id := bodyID(t, body)
			want, err := webhook.Body(fx.events[id])
			if err != nil || string(want) != string(body) {
				t.Errorf("feed body %s\nwebhook body %s (%v)", body, want, err)
			}
			ids = append(ids, id)
		}
		if page.Next == "" {
			t.Fatal("a read gave no cursor")
		}
		after = page.Next
		if !page.HasMore {
			return ids, after
		}
	}
}

// readN is readAll repeated until it reads n events or 30 s pass: on
// PostgreSQL the feed holds back what any transaction of the server still
// open may precede (D59), and the tests of other packages run beside this
// one.
func (fx *feedFixture) readN(t *testing.T, faucetID int64, after string, types []string, limit, n int) ([]string, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ids, last := fx.readAll(t, faucetID, after, types, limit)
		if len(ids) >= n || time.Now().After(deadline) {
			return ids, last
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func bodyID(t *testing.T, body []byte) string {
	t.Helper()
	ev := struct {
		ID string `json:"id"`
	}{}
	if err := json.Unmarshal(body, &ev); err != nil || ev.ID == "" {
		t.Fatalf("body %s: %v", body, err)
	}
	return ev.ID
}

// TestFeedReadsTheWebhookBodiesInOrder (D59): the feed is the faucet's
// events in the order written, each the exact bytes of its webhook body,
// paged by cursor; test events and events that cannot make a body are
// not in it, as no endpoint is sent them; another faucet's events never
// are.
func TestFeedReadsTheWebhookBodiesInOrder(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fx := newFeedFixture(t, eng.Open(t))
			var want []string
			want = append(want, fx.write(t, fx.f, drip.EventPayoutSent, drip.EventLowBalance)...)
			fx.write(t, fx.g, drip.EventPayoutSent)
			fx.write(t, fx.f, drip.EventWebhookTest, "broken")
			want = append(want, fx.write(t, fx.f, drip.EventPayoutFailed)...)
			for range 3 {
				want = append(want, fx.write(t, fx.f, drip.EventPayoutSent, drip.EventPayoutSent)...)
			}
			for _, limit := range []int{1, 2, 3, 100} {
				got, last := fx.readN(t, fx.f, "", nil, limit, len(want))
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("limit %d (-want +got):\n%s", limit, diff)
				}
				// Read on from the last cursor: nothing, until more is written.
				if more, _ := fx.readAll(t, fx.f, last, nil, limit); len(more) != 0 {
					t.Errorf("limit %d: after the last cursor, %v", limit, more)
				}
			}
			got, last := fx.readAll(t, fx.f, "", nil, 100)
			next := fx.write(t, fx.f, drip.EventPayoutSent)
			if more, _ := fx.readN(t, fx.f, last, nil, 100, 1); !cmp.Equal(next, more) {
				t.Errorf("after %d events and one more written: %v, want %v", len(got), more, next)
			}
			if gs, _ := fx.readN(t, fx.g, "", nil, 100, 1); len(gs) != 1 {
				t.Errorf("g's feed: %v, want its one event", gs)
			}
		})
	}
}

// TestFeedTypesMoveTheCursorThroughOtherTypes: asking for some types
// answers only those, and a read that finds none of them in a long
// stretch of others still moves the cursor past it, so a client waiting
// for a rare event does not read the whole history on every poll.
func TestFeedTypesMoveTheCursorThroughOtherTypes(t *testing.T) {
	t.Parallel()
	fx := newFeedFixture(t, storetest.OpenSQLite(t))
	sent := make([]string, 1500)
	for i := range sent {
		sent[i] = drip.EventPayoutSent
	}
	first := fx.write(t, fx.f, drip.EventPayoutFailed)
	fx.write(t, fx.f, sent...)
	low := fx.write(t, fx.f, drip.EventLowBalance)

	page, err := fx.feed.Read(t.Context(), fx.f, "", []string{drip.EventLowBalance, drip.EventPayoutFailed}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Bodies) != 1 || bodyID(t, page.Bodies[0]) != first[0] || !page.HasMore {
		t.Fatalf("first read: %d bodies, has_more %v; want the payout.failed and more", len(page.Bodies), page.HasMore)
	}
	// The next read looks at 1,000 payout.sent, finds nothing asked for,
	// and moves on: has_more, and a cursor past them.
	page2, err := fx.feed.Read(t.Context(), fx.f, page.Next, []string{drip.EventLowBalance}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page2.Bodies) != 0 || !page2.HasMore || page2.Next == page.Next {
		t.Fatalf("second read: %d bodies, has_more %v, cursor moved %v; want none, more, moved", len(page2.Bodies), page2.HasMore, page2.Next != page.Next)
	}
	got, _ := fx.readAll(t, fx.f, page2.Next, []string{drip.EventLowBalance}, 100)
	if diff := cmp.Diff(low, got); diff != "" {
		t.Errorf("the low-balance event (-want +got):\n%s", diff)
	}
	all, _ := fx.readAll(t, fx.f, "", []string{drip.EventPayoutFailed, drip.EventLowBalance}, 1)
	if diff := cmp.Diff(append(first, low...), all); diff != "" {
		t.Errorf("payout.failed and faucet.low_balance, one a read (-want +got):\n%s", diff)
	}
}

// TestFeedRefusesCursorsItDidNotGive: a cursor is the faucet's own, as
// the feed wrote it; anything else is 400 invalid, never a read of
// another position or another faucet's feed.
func TestFeedRefusesCursorsItDidNotGive(t *testing.T) {
	t.Parallel()
	fx := newFeedFixture(t, storetest.OpenSQLite(t))
	fx.write(t, fx.f, drip.EventPayoutSent)
	fx.write(t, fx.g, drip.EventPayoutSent)
	page, err := fx.feed.Read(t.Context(), fx.f, "", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	good := page.Next
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	enc := base64.RawURLEncoding.EncodeToString
	bad := map[string]string{
		"another faucet's":    func() string { p, _ := fx.feed.Read(t.Context(), fx.g, "", nil, 100); return p.Next }(),
		"not base64":          "not a cursor!",
		"padded":              base64.URLEncoding.EncodeToString(raw),
		"standard alphabet":   base64.StdEncoding.EncodeToString(append(raw, 0xfb, 0xff)),
		"version only":        enc([]byte{1}),
		"another version":     enc(append([]byte{2}, raw[1:]...)),
		"trailing bytes":      enc(append(append([]byte{}, raw...), 0)),
		"cut short":           enc(raw[:len(raw)-1]),
		"non-minimal varint":  enc(append(append([]byte{}, raw...)[:len(raw)-1], raw[len(raw)-1]|0x80, 0)),
		"seq beyond int64":    enc(append(append([]byte{}, raw[:len(raw)-1]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)),
		"too long":            good + string(make([]byte, 64)),
		"a position of text?": "MTIzNDU2",
	}
	for name, c := range bad {
		_, err := fx.feed.Read(t.Context(), fx.f, c, nil, 100)
		if drip.ErrorCode(err) != drip.CodeInvalid {
			t.Errorf("%s cursor %q: err %v, want %s", name, c, err, drip.CodeInvalid)
		}
	}
	if _, err := fx.feed.Read(t.Context(), fx.f, good, nil, 100); err != nil {
		t.Errorf("the feed's own cursor: %v", err)
	}
	if _, err := fx.feed.Read(context.Background(), fx.g, good, nil, 100); drip.ErrorCode(err) != drip.CodeInvalid {
		t.Errorf("f's cursor on g's feed: %v, want %s", err, drip.CodeInvalid)
	}
}
