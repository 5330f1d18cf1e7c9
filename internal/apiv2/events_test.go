package apiv2_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

// The events feed, /events (issue 17, D59).

// eventsData is the data of /events.
type eventsData struct {
	Events  []json.RawMessage `json:"events"`
	Next    string            `json:"next"`
	HasMore bool              `json:"has_more"`
}

// feedEvent is the part of an event body the tests read.
type feedEvent struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Data  struct {
		PayoutID string `json:"payout_id"`
	} `json:"data"`
}

// readEvents GETs /events with query and decodes its data.
func readEvents(t testing.TB, env *apptest.Env, key string, query url.Values) eventsData {
	t.Helper()
	r := env.V2Do(t, http.MethodGet, key, "/events?"+query.Encode(), nil, nil)
	wantOK(t, r)
	var d eventsData
	r.Data(t, &d)
	if d.Next == "" {
		t.Fatalf("no next cursor: %s", r.Raw)
	}
	return d
}

// readFeed pages through the feed from after until has_more is false,
// in pages of limit, and returns the bodies and the last cursor.
func readFeed(t testing.TB, env *apptest.Env, key, after, types string, limit int) ([]json.RawMessage, string) {
	t.Helper()
	var out []json.RawMessage
	for {
		q := url.Values{"limit": {strconv.Itoa(limit)}}
		if after != "" {
			q.Set("after", after)
		}
		if types != "" {
			q.Set("types", types)
		}
		d := readEvents(t, env, key, q)
		if len(d.Events) > limit {
			t.Fatalf("limit %d answered %d events", limit, len(d.Events))
		}
		out, after = append(out, d.Events...), d.Next
		if !d.HasMore {
			return out, after
		}
	}
}

// readFeedN is readFeed from the start repeated until it answers n events
// or 30 s pass: on PostgreSQL an event is answered once no transaction
// of the server still open could commit one before it (D59), and other
// tests' transactions run beside these.
func readFeedN(t testing.TB, env *apptest.Env, key, types string, limit, n int) ([]json.RawMessage, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, last := readFeed(t, env, key, "", types, limit)
		if len(got) >= n || time.Now().After(deadline) {
			return got, last
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func decodeEvent(t testing.TB, raw json.RawMessage) feedEvent {
	t.Helper()
	var e feedEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("event %s: %v", raw, err)
	}
	return e
}

// TestEventsFeedAnswersTheWebhookBodies: /events answers the faucet's
// events, a paid send's payout.sent and the faucet.low_balance it caused,
// and a refused send's payout.failed, in the order they committed, each
// exactly the body webhook.Body makes for its delivery; by GET and POST,
// in pages of any size, filtered by type; reading on from the last cursor
// answers nothing until there is more.
func TestEventsFeedAnswersTheWebhookBodies(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		st := eng.Open(t)
		env := checkedEnv(t, st, apptest.Options{Rate: unlimited, CallerRate: unlimited})
		fx := newFixture(t, env, map[string]int64{"BTC": 10_000})
		on := true
		if _, err := env.App.Faucets.SetLowBalance(t.Context(), fx.f.ID, faucet.LowBalanceChange{
			Enabled: &on, Thresholds: map[string]int64{"BTC": 500},
		}); err != nil {
			t.Fatal(err)
		}
		pay(t, env, fx.send, "bob", 9600, "BTC")
		wantError(t, env.V2(t, fx.send, "/send", freshSend("nobody", 100, "BTC")), http.StatusBadRequest, "recipient_not_payable")

		stored, err := st.EventList(t.Context(), fx.f.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		slices.Reverse(stored) // oldest first
		var want []string
		for _, ev := range stored {
			body, err := webhook.Body(ev)
			if err != nil {
				t.Fatalf("Body(%s): %v", ev.Type, err)
			}
			want = append(want, string(body))
		}
		if len(want) != 3 {
			t.Fatalf("%d events stored, want payout.sent, faucet.low_balance and payout.failed", len(want))
		}
		got, last := readFeedN(t, env, fx.read, "", 100, 3)
		if diff := cmp.Diff(want, texts(got)); diff != "" {
			t.Fatalf("/events (-want +got):\n%s", diff)
		}
		for _, limit := range []int{1, 2} {
			if paged, _ := readFeed(t, env, fx.read, "", "", limit); !cmp.Equal(want, texts(paged)) {
				t.Errorf("in pages of %d: %s", limit, texts(paged))
			}
		}
		// POST takes the same fields in a body.
		r := env.V2(t, fx.read, "/events", map[string]any{"limit": 2, "types": "payout.sent,payout.failed,faucet.low_balance"})
		wantOK(t, r)
		var d eventsData
		r.Data(t, &d)
		if !cmp.Equal(want[:2], texts(d.Events)) || !d.HasMore {
			t.Errorf("POST limit 2: %s", r.Raw)
		}
		r = env.V2(t, fx.read, "/events", map[string]any{"after": d.Next, "limit": nil, "types": nil})
		wantOK(t, r)
		r.Data(t, &d)
		if !cmp.Equal(want[2:], texts(d.Events)) || d.HasMore {
			t.Errorf("POST after the first two: %s", r.Raw)
		}
		// Only the types asked for.
		failed, _ := readFeed(t, env, fx.read, "", "payout.failed", 100)
		if !cmp.Equal(want[2:], texts(failed)) {
			t.Errorf("types=payout.failed: %s", texts(failed))
		}
		sentLow, _ := readFeed(t, env, fx.read, "", "faucet.low_balance,payout.sent", 100)
		if !cmp.Equal(want[:2], texts(sentLow)) {
			t.Errorf("types=faucet.low_balance,payout.sent: %s", texts(sentLow))
		}
		// From the last cursor: nothing, the same cursor, until a payout.
		d = readEvents(t, env, fx.read, url.Values{"after": {last}})
		if len(d.Events) != 0 || d.HasMore || d.Next != last {
			t.Errorf("after the last cursor: %d events, has_more %v, next moved %v", len(d.Events), d.HasMore, d.Next != last)
		}
		id := pay(t, env, fx.send, "bob", 100, "BTC")
		deadline := time.Now().Add(30 * time.Second)
		for len(d.Events) == 0 && time.Now().Before(deadline) {
			d = readEvents(t, env, fx.read, url.Values{"after": {last}})
		}
		if len(d.Events) != 1 || decodeEvent(t, d.Events[0]).Data.PayoutID != strconv.FormatInt(id, 10) {
			t.Errorf("after a new payout %d: %s", id, texts(d.Events))
		}
	})
}

func texts(list []json.RawMessage) []string {
	out := make([]string, len(list))
	for i, b := range list {
		out[i] = string(b)
	}
	return out
}

// TestEventsFeedRefusesBadInput: a cursor the faucet's feed did not give,
// an unknown or empty type and a limit outside 1-100 or not a whole
// number are each 400 invalid with a message saying what is wrong (a
// repeated parameter 400 malformed_request), never a 500 nor a read.
func TestEventsFeedRefusesBadInput(t *testing.T) {
	t.Parallel()
	env := checkedEnv(t, storetest.OpenSQLite(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
	fx := newFixture(t, env, map[string]int64{"BTC": 10_000})
	pay(t, env, fx.send, "bob", 100, "BTC")
	other, _ := env.Faucet(t, nil)
	otherKey := env.Key(t, other, drip.ScopeRead)
	otherCursor := readEvents(t, env, otherKey, nil).Next
	own := readEvents(t, env, fx.read, nil).Next
	for _, c := range []struct{ query, code string }{
		{"after=not-a-cursor", "invalid"},
		{"after=" + url.QueryEscape(otherCursor), "invalid"},
		{"after=" + url.QueryEscape(own+"A"), "invalid"},
		{"after=" + url.QueryEscape("abc%2F"), "invalid"},
		{"types=bogus", "invalid"},
		{"types=payout.sent,bogus", "invalid"},
		{"types=payout.sent,", "invalid"},
		{"types=webhook.test", "invalid"},
		{"types=PAYOUT.SENT", "invalid"},
		{"limit=0", "invalid"},
		{"limit=101", "invalid"},
		{"limit=-1", "invalid"},
		{"limit=abc", "invalid"},
		{"limit=1.5", "invalid"},
		{"limit=", "invalid"},
		{"cursor=x", "invalid"},
		{"limit=1&limit=2", "malformed_request"},
	} {
		r := env.V2Do(t, http.MethodGet, fx.read, "/events?"+c.query, nil, nil)
		wantError(t, r, http.StatusBadRequest, c.code)
		t.Logf("%s: %s", c.query, r.Envelope.Message)
	}
	for _, body := range []string{`{"limit":"10"}`, `{"types":["payout.sent"]}`, `{"after":5}`, `{"limit":0}`, `{"after":"` + otherCursor + `"}`} {
		wantError(t, env.V2(t, fx.read, "/events", body), http.StatusBadRequest, "invalid")
	}
	// A send key cannot read it: read scope.
	wantError(t, env.V2Do(t, http.MethodGet, fx.send, "/events", nil, nil), http.StatusForbidden, "insufficient_scope")
}

// TestEventsFeedPagesWithoutGapsOrRepeatsWhileSendsArrive is issue 17's
// test end to end: a client pages through the feed, 100 events a read,
// each read from the last next, while concurrent v2 sends pay 2,000
// payouts from the same faucet (group commits of many payouts, on
// PostgreSQL overlapping and committing out of seq order); it reads
// each payout's payout.sent exactly once. The store's suite pages
// through 10,000 events so, and holds transactions open on purpose to
// commit them out of seq order (storetest's EventFeed tests).
func TestEventsFeedPagesWithoutGapsOrRepeatsWhileSendsArrive(t *testing.T) {
	const senders, total = 16, 2_000
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
		fx := newFixture(t, env, map[string]int64{"BTC": total})
		start := time.Now()
		var mu sync.Mutex
		paid := map[string]bool{}
		var wg sync.WaitGroup
		for range senders {
			wg.Go(func() {
				for range total / senders {
					r := env.V2(t, fx.send, "/send", freshSend("bob", 1, "BTC"))
					if r.HTTPStatus != http.StatusOK {
						t.Errorf("send: %s", r.Raw)
						return
					}
					var d sendData
					r.Data(t, &d)
					mu.Lock()
					paid[strconv.FormatInt(d.PayoutID, 10)] = true
					mu.Unlock()
				}
			})
		}
		sending := make(chan struct{})
		go func() { wg.Wait(); close(sending) }()

		seen := map[string]bool{}
		after, reads, caughtUp := "", 0, time.Time{}
		for len(seen) < total {
			select {
			case <-sending:
				if caughtUp.IsZero() {
					caughtUp = time.Now()
				}
				if t.Failed() || time.Since(caughtUp) > 30*time.Second {
					t.Fatalf("read %d of %d payouts' events in %d reads, none new for 30 s after the sends ended: the feed skipped some", len(seen), total, reads)
				}
			default:
			}
			q := url.Values{"limit": {"100"}}
			if after != "" {
				q.Set("after", after)
			}
			d := readEvents(t, env, fx.read, q)
			reads++
			for _, raw := range d.Events {
				e := decodeEvent(t, raw)
				if e.Event != drip.EventPayoutSent {
					t.Fatalf("event %s of type %s", e.ID, e.Event)
				}
				if seen[e.Data.PayoutID] {
					t.Fatalf("payout %s's event read twice (read %d)", e.Data.PayoutID, reads)
				}
				seen[e.Data.PayoutID] = true
			}
			if len(d.Events) > 0 && !caughtUp.IsZero() {
				caughtUp = time.Now()
			}
			after = d.Next
			if !d.HasMore {
				time.Sleep(time.Millisecond)
			}
		}
		<-sending
		if diff := cmp.Diff(paid, seen); diff != "" {
			t.Errorf("payouts paid and payouts read (-paid +read):\n%s", diff)
		}
		if d := readEvents(t, env, fx.read, url.Values{"after": {after}}); len(d.Events) != 0 || d.HasMore {
			t.Errorf("after every payout's event: %d more", len(d.Events))
		}
		t.Logf("read %d events in %d reads while %d senders paid them (%v)", len(seen), reads, senders, time.Since(start).Round(time.Millisecond))
	})
}

// TestEventsTypesPatternIsTheFeedsTypes: the document's pattern of types
// takes each type the feed serves and lists of them, and refuses what
// the server refuses, so that a client checking against the document
// and the server agree.
func TestEventsTypesPatternIsTheFeedsTypes(t *testing.T) {
	t.Parallel()
	var pattern string
	for _, p := range object(object(openAPIJSON(t), "paths"), "/events")["get"].(map[string]any)["parameters"].([]any) {
		if p := p.(map[string]any); p["name"] == "types" {
			pattern, _ = object(p, "schema")["pattern"].(string)
		}
	}
	re, err := regexp.Compile(pattern)
	if err != nil || pattern == "" {
		t.Fatalf("types pattern %q: %v", pattern, err)
	}
	take := append([]string{"", strings.Join(webhook.Events, ",")}, webhook.Events...)
	for _, s := range take {
		if !re.MatchString(s) {
			t.Errorf("the pattern refuses %q, which the feed takes", s)
		}
	}
	for _, s := range []string{"webhook.test", "payout.sent,", ",payout.sent", "payout.sent,,payout.failed", "PAYOUT.SENT", "payout.sent payout.failed", "payout_sent"} {
		if re.MatchString(s) {
			t.Errorf("the pattern takes %q, which the feed refuses", s)
		}
	}
}
