package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
)

func TestPercentilesAreNearestRank(t *testing.T) {
	t.Parallel()
	var ls []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ls = append(ls, time.Duration(i)*time.Millisecond)
	}
	want := Latency{N: 100, P50: 50, P90: 90, P99: 99, Max: 100}
	if diff := cmp.Diff(want, percentiles(ls)); diff != "" {
		t.Errorf("percentiles of 1..100 ms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Latency{N: 1, P50: 1.5, P90: 1.5, P99: 1.5, Max: 1.5}, percentiles([]time.Duration{1500 * time.Microsecond})); diff != "" {
		t.Errorf("percentiles of one sample (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Latency{}, percentiles(nil)); diff != "" {
		t.Errorf("percentiles of nothing (-want +got):\n%s", diff)
	}
}

func TestParseBatchReplyReadsEachItem(t *testing.T) {
	t.Parallel()
	body := `{"success":true,"status":200,"message":"Batch of 4 items: 2 paid, 1 replayed, 1 not paid.","data":{"dry_run":false,"paid":2,"replayed":1,"failed":1,"rate_limit_remaining":50,"items":[` +
		`{"idempotency_key":"a","success":true,"status":200,"message":"Payout sent.","replayed":false,"data":{"payout_id":7,"dry_run":false},"error":null},` +
		`{"idempotency_key":"b","success":false,"status":409,"message":"Insufficient funds.","replayed":false,"data":null,"error":{"code":"insufficient_balance","v1_status":402}},` +
		`{"idempotency_key":"c","success":true,"status":200,"message":"Payout sent.","replayed":true,"data":{"payout_id":3,"dry_run":false},"error":null},` +
		`{"idempotency_key":"d","success":true,"status":200,"message":"Payout sent.","replayed":false,"data":{"payout_id":8,"dry_run":false},"error":null}]}}`
	got := parseBatchReply([]byte(body), 4)
	if got.status != 200 || got.batch == nil {
		t.Fatalf("parseBatchReply = %+v; want status 200 and the items", got)
	}
	want := batchReply{items: 4, paid: []int64{7, 8}, replayed: 1, firstRefusal: "409 insufficient_balance"}
	if diff := cmp.Diff(want, *got.batch, cmp.AllowUnexported(batchReply{})); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ name, body string }{
		{"a refused batch", `{"success":false,"status":400,"message":"Missing items.","data":null,"error":{"code":"invalid","v1_status":405}}`},
		{"not JSON", `<html>bad gateway</html>`},
	} {
		got := parseBatchReply([]byte(c.body), 4)
		if got.batch != nil || got.status == 200 {
			t.Errorf("%s: parseBatchReply = %+v; want no items and its status", c.name, got)
		}
	}
}

func TestParseReplyReadsStatusAndPayoutID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		body   string
		status int
		id     int64
	}{
		{"paid send", `{"status":200,"message":"Payout sent.","rate_limit_remaining":116,"currency":"BTC","balance":9999000,"balance_bitcoin":0.09999,"payout_id":4711,"payout_user_hash":"c54b"}` + "\n", 200, 4711},
		{"refusal", `{"status":402,"message":"Insufficient funds."}` + "\n", 402, 0},
		{"status not first", `{"message":"x","status":450}`, 450, 0},
		{"internal error", `{"status":500,"message":"Internal error."}`, 500, 0},
		{"a quoted status key is not the status", `{"message":"a \"status\":7","status":450}`, 450, 0},
		{"not JSON", `<html>bad gateway</html>`, statusGarbled, 0},
		{"no status", `{"message":"x"}`, statusGarbled, 0},
		{"v2 paid send", `{"success":true,"status":200,"message":"Payout sent.","data":{"rate_limit_remaining":119,"currency":"BTC","balance":999,"balance_bitcoin":0.00000999,"payout_id":4712,"payout_user_hash":"c54b"}}` + "\n", 200, 4712},
		{"v2 refusal", `{"success":false,"status":409,"message":"This idempotency_key was used for a different payout.","data":null,"error":{"code":"idempotency_key_reuse","v1_status":null}}`, 409, 0},
		{"v2 envelope reordered", `{"data":{"payout_id":9},"message":"Payout sent.","success":true,"status":200}`, 200, 9},
	}
	for _, c := range cases {
		got := parseReply([]byte(c.body))
		if got.status != c.status || got.payoutID != c.id {
			t.Errorf("%s: parseReply = %d, %d; want %d, %d", c.name, got.status, got.payoutID, c.status, c.id)
		}
	}
}

// TestClientSendsV2AsJSONAndReadsReplays: a v2 request goes with its key in
// Authorization and a JSON body, and a reply's Idempotent-Replayed is read.
func TestClientSendsV2AsJSONAndReadsReplays(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				t.Errorf("v1 request of Content-Type %q", r.Header.Get("Content-Type"))
			}
			_, _ = w.Write([]byte(`{"status":200,"payout_id":1}`))
			return
		}
		if r.Header.Get("Authorization") != "Bearer drip_k" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("v2 request with Authorization %q, Content-Type %q", r.Header.Get("Authorization"), r.Header.Get("Content-Type"))
		}
		if strings.Contains(r.URL.Path, "replay") {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		_, _ = w.Write([]byte(`{"success":true,"status":200,"message":"Payout sent.","data":{"payout_id":2}}`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(srv.URL, 1)
	t.Cleanup(c.close)
	ctx := context.Background()
	for _, tc := range []struct {
		r    request
		want reply
	}{
		{request{path: "/api/v1/send", body: "api_key=k"}, reply{status: 200, payoutID: 1}},
		{request{path: "/api/v2/send", body: "{}", authorization: "Bearer drip_k"}, reply{status: 200, payoutID: 2}},
		{request{path: "/api/v2/send/replay", body: "{}", authorization: "Bearer drip_k"}, reply{status: 200, payoutID: 2, replayed: true}},
	} {
		if got := c.do(ctx, tc.r); got != tc.want {
			t.Errorf("%s: reply %+v, want %+v", tc.r.path, got, tc.want)
		}
	}
}

// TestStormSendsEveryKeyFourTimes: each key's first copy, a twin at once,
// and the two other copies only once the first has answered; every copy of
// a key is the same request.
func TestStormSendsEveryKeyFourTimes(t *testing.T) {
	t.Parallel()
	f := &faucetFix{bearer: "Bearer drip_k"}
	rs := []recipient{{user: &drip.User{Username: "alice"}}, {user: &drip.User{Username: "bob"}}}
	s := &storm{f: f, rs: rs, prefix: "p-"}
	bodies := map[uint64]map[string]int{}
	var firsts []request
	var order []string
	send := func() request {
		r := s.next(0, false)
		if bodies[r.idem] == nil {
			bodies[r.idem] = map[string]int{}
		}
		bodies[r.idem][r.body]++
		kind := "copy"
		if r.answered != nil {
			kind = "first"
			firsts = append(firsts, r)
		} else if r.overlap {
			kind = "twin"
		}
		order = append(order, fmt.Sprintf("%d %s", r.idem, kind))
		return r
	}
	// Keys 1 and 2 are begun and twinned while their first copies are in
	// flight; when key 1's first copy answers, its two retries come next.
	for range 4 {
		send()
	}
	firsts[0].answered(sample{status: 200})
	for range 3 {
		send()
	}
	firsts[1].answered(sample{status: 200})
	firsts[2].answered(sample{status: 200})
	for range 5 {
		send()
	}
	want := []string{"1 first", "1 twin", "2 first", "2 twin", "1 copy", "1 copy", "3 first",
		"3 copy", "2 copy", "2 copy", "3 copy", "3 copy"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order of copies (-want +got):\n%s", diff)
	}
	for k, bs := range bodies {
		if len(bs) != 1 {
			t.Errorf("key %d sent as %d different requests: %v", k, len(bs), bs)
		}
		for b, n := range bs {
			if n != stormCopies || !strings.Contains(b, fmt.Sprintf(`"idempotency_key":"p-%d"`, k)) {
				t.Errorf("key %d: %d copies of %s", k, n, b)
			}
		}
	}
}

func TestKeyGatesWantOnePaidCopyAndOnePayoutAKey(t *testing.T) {
	t.Parallel()
	paid := func(key uint64, id int64, replayed bool) sample {
		return sample{op: opSend, status: 200, idem: key, payoutID: id, replayed: replayed}
	}
	cases := []struct {
		name    string
		copies  int
		samples []sample
		want    []string // the gates' statuses
	}{
		{"one copy a key, none replayed", 1, []sample{paid(1, 10, false), paid(2, 11, false)}, []string{"pass"}},
		{"a first send answered as a replay", 1, []sample{paid(1, 10, false), paid(2, 11, true)}, []string{"fail"}},
		{"retries replayed the first payout", 4, []sample{paid(1, 10, true), paid(1, 10, false), paid(1, 10, true),
			{op: opSend, status: statusTransport, idem: 1}, paid(2, 11, false)}, []string{"pass", "pass"}},
		{"a retry paid again", 4, []sample{paid(1, 10, false), paid(1, 12, false)}, []string{"fail", "fail"}},
		{"a replay of another payout", 4, []sample{paid(1, 10, false), paid(1, 12, true)}, []string{"pass", "fail"}},
		{"a replay without the header", 4, []sample{paid(1, 10, false), paid(1, 10, false)}, []string{"fail", "pass"}},
	}
	for _, c := range cases {
		var got []string
		for _, g := range keyGates(tallyKeys(c.samples), c.copies) {
			got = append(got, g.Status)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: gates (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestOverLimitGateWantsExactlyTheLimitPaidPerGroup(t *testing.T) {
	t.Parallel()
	// group returns the samples of one group of overLimitPer sends: sent of
	// them, paid answered 200 and the rest 450.
	group := func(g uint64, sent, paid int) []sample {
		var ss []sample
		for i := range sent {
			s := sample{seq: g*overLimitPer + uint64(i), op: opSend, status: 450}
			if i < paid {
				s.status = 200
			}
			ss = append(ss, s)
		}
		return ss
	}
	cases := []struct {
		name   string
		groups [][]sample
		pass   bool
	}{
		{"every group four of five", [][]sample{group(0, 5, 4), group(1, 5, 4)}, true},
		{"a group cut short by the end of the run", [][]sample{group(0, 5, 4), group(1, 3, 3)}, true},
		{"a fifth payout slipped through", [][]sample{group(0, 5, 4), group(1, 5, 5)}, false},
		{"a payout refused under the limit", [][]sample{group(0, 5, 3)}, false},
		{"a short group refused early", [][]sample{group(0, 2, 1)}, false},
	}
	for _, c := range cases {
		o := &outcome{samples: slices.Concat(c.groups...)}
		if got := overLimitGate(o, 10); (got.Status == "pass") != c.pass {
			t.Errorf("%s: gate %+v, want pass=%v", c.name, got, c.pass)
		}
	}
}

// slowServer answers every request after delay with a paid v1 reply and
// counts what it answered.
func slowServer(t *testing.T, delay time.Duration) (*client, *atomic.Int64) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(delay)
		served.Add(1)
		_, _ = w.Write([]byte(`{"status":200,"message":"Payout sent.","payout_id":` + r.URL.Query().Get("id") + `}`))
	}))
	t.Cleanup(srv.Close)
	c := newClient(srv.URL, 8)
	t.Cleanup(c.close)
	return c, &served
}

func TestClosedLoopCountsEveryReply(t *testing.T) {
	t.Parallel()
	c, served := slowServer(t, time.Millisecond)
	next := func(uint64, bool) request { return request{op: opSend, path: "/send?id=1"} }
	var measured atomic.Bool
	o := closedLoop(context.Background(), c, next, 4, phases{warmup: 20 * time.Millisecond, duration: 50 * time.Millisecond,
		atMeasure: func() { measured.Store(true) }})
	if !measured.Load() {
		t.Error("closedLoop returned before the measurement hook ran")
	}
	if int64(len(o.samples)) != served.Load() || len(o.samples) == 0 {
		t.Fatalf("%d samples for %d replies served", len(o.samples), served.Load())
	}
	var seqs []uint64
	for _, s := range o.samples {
		seqs = append(seqs, s.seq)
		if s.status != 200 || s.payoutID != 1 || s.latency < time.Millisecond {
			t.Errorf("sample %+v: want status 200, payout 1, latency at least the server's 1ms", s)
		}
	}
	slices.Sort(seqs)
	for i, seq := range seqs {
		if seq != uint64(i) {
			t.Fatalf("sequence numbers %v: want each of 0..%d once", seqs, len(seqs)-1)
		}
	}
}

// TestOpenLoopMeasuresFromTheSchedule: one request in flight at a time
// against a server taking 20ms, scheduled every 5ms. Request i cannot be
// sent before i*20ms, so its latency counted from its scheduled time i*5ms
// is at least 20ms + i*15ms: the backlog shows in the latency instead of
// slowing the schedule. These are lower bounds that causality guarantees,
// not timings.
func TestOpenLoopMeasuresFromTheSchedule(t *testing.T) {
	t.Parallel()
	c, served := slowServer(t, 20*time.Millisecond)
	next := func(uint64, bool) request { return request{op: opSend, path: "/send?id=7"} }
	o := openLoop(context.Background(), c, next, 200, 1, phases{duration: 100 * time.Millisecond, atMeasure: func() {}})
	const total = 20 // 100ms at 200/s
	if int64(len(o.samples)) != served.Load() || int64(len(o.samples))+o.dropped != total {
		t.Fatalf("%d samples, %d dropped, %d served; want samples = served and samples + dropped = %d",
			len(o.samples), o.dropped, served.Load(), total)
	}
	// The loop gives up 2 durations (200ms) after the start: at 20ms a
	// request, no more than 11 can have been sent.
	if len(o.samples) > 11 {
		t.Errorf("%d requests sent; a 20ms server cannot take more than 11 before the loop gives up", len(o.samples))
	}
	for _, s := range o.samples {
		if floor := 20*time.Millisecond + time.Duration(s.seq)*15*time.Millisecond; s.latency < floor {
			t.Errorf("request %d: latency %s, want at least %s from its scheduled time", s.seq, s.latency, floor)
		}
	}
}

func TestReportTableShowsEveryRunAndEveryFailure(t *testing.T) {
	t.Parallel()
	stored := int64(1_000_000)
	rep := &Report{
		Engine:   "sqlite",
		Settings: Settings{WarmupS: 2, DurationS: 10, Concurrency: []int{1, 64}},
		Ceiling:  []*Result{{Scenario: "ceiling", Mode: "closed", Concurrency: 64, RepliesPerS: 10000, CeilingRatio: 1, Statuses: map[string]int64{"200": 100000}}},
		Runs: []*Result{
			{Scenario: "hot", Mode: "closed", Concurrency: 64, PayoutsPerS: 4000, RepliesPerS: 4000, CeilingRatio: 0.4,
				Statuses: map[string]int64{"200": 40000}, Gates: []Gate{{Name: "no negative balance", Status: "pass"}}},
			{Scenario: "retry-storm", Mode: "closed", Concurrency: 64, Replies: 40000, Payouts: 10000, Replayed: 30000, Overlapping: 9000,
				PayoutsPerS: 1000, RepliesPerS: 4000, CeilingRatio: 0.4, Statuses: map[string]int64{"200": 40000}},
			{Scenario: "over-limit", Mode: "open", RatePercent: 80, Concurrency: 128, PayoutsPerS: 800, RepliesPerS: 1000,
				Statuses: map[string]int64{"200": 8000, "450": 2000}, Dropped: 3,
				Gates: []Gate{{Name: "paid sends = new payout rows", Status: "fail", Detail: "10 sends answered 200, 9 payout rows"}}},
		},
		Growth: []*Result{{Scenario: "payouts", Mode: "closed", Concurrency: 1, Stored: &stored, RepliesPerS: 900}},
		Gates:  []Gate{{Name: "drip admin reconcile", Status: "pass"}},
	}
	rep.finish()
	if rep.OK {
		t.Fatal("a report with a failed gate is OK")
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"ceiling ", "hot ", "over-limit ", "open 80%", "200:8000 450:2000 dropped:3", "growth 1M payouts",
		"retry-storm            closed      64      1000      4000    0.40",
		"retry-storm closed c=64: 75% of replies were replays (30000 of 40000); 9000 copies sent before their key's first copy answered",
		"FAILED over-limit open 80% c=128: paid sends = new payout rows: 10 sends answered 200, 9 payout rows",
		"SOME GATES FAILED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines < 8 {
		t.Errorf("table of %d lines:\n%s", lines, out)
	}
}

func TestConfigRefusesWhatCannotRun(t *testing.T) {
	t.Parallel()
	base := Config{Executable: "drip", OpenStore: nil}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store opener", base, "OpenStore"},
		{"unknown scenario", Config{Scenarios: []string{"hot", "cold"}}, `unknown scenario "cold"`},
		{"zero concurrency", Config{Concurrency: []int{0}}, "concurrency 0"},
		{"negative growth", Config{GrowthSizes: []int64{-1}}, "growth size -1"},
	}
	for _, c := range cases {
		err := c.cfg.withDefaults().validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: validate = %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	if got := (Config{}).withDefaults(); !slices.Equal(got.Concurrency, []int{1, 16, 64}) || got.Recipients != 10000 || len(got.Scenarios) != len(Scenarios) {
		t.Errorf("full defaults: %+v", got)
	}
	if got := (Config{Short: true}).withDefaults(); !slices.Equal(got.Concurrency, []int{1, 8}) || got.Recipients != 100 {
		t.Errorf("short defaults: %+v", got)
	}
}
