// Tests of v2 /send/batch (issue 17, D61): each item judged and answered
// as /send would answer it alone, duplicates inside a batch, repeated
// batches, the request rate, bad input, and batches racing single sends
// for a balance that runs out. Every test runs on each engine and
// reconciles the ledger (D3) when it ends.
package apiv2_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// batchData is the data of a /send/batch reply.
type batchData struct {
	DryRun             bool        `json:"dry_run"`
	Paid               int         `json:"paid"`
	Replayed           int         `json:"replayed"`
	Failed             int         `json:"failed"`
	RateLimitRemaining float64     `json:"rate_limit_remaining"`
	Items              []batchItem `json:"items"`
}

type batchItem struct {
	IdempotencyKey string `json:"idempotency_key"`
	Success        bool   `json:"success"`
	Status         int    `json:"status"`
	Message        string `json:"message"`
	Replayed       bool   `json:"replayed"`
	Data           *struct {
		sendData
		DryRun bool `json:"dry_run"`
	} `json:"data"`
	Error *struct {
		Code     string `json:"code"`
		V1Status *int   `json:"v1_status"`
	} `json:"error"`
}

// outcome is an item's outcome in a word: "200", "200 replayed" or
// "<status> <code>".
func (it batchItem) outcome() string {
	switch {
	case it.Success && it.Replayed:
		return "200 replayed"
	case it.Success:
		return "200"
	case it.Error == nil:
		return fmt.Sprintf("%d without error", it.Status)
	}
	return fmt.Sprintf("%d %s", it.Status, it.Error.Code)
}

// batch POSTs items (and dry_run) to /send/batch and decodes the reply,
// which must be a 200 success.
func batch(t *testing.T, env *apptest.Env, secret string, dry bool, items ...sendBody) batchData {
	t.Helper()
	r := env.V2(t, secret, "/send/batch", map[string]any{"items": items, "dry_run": dry})
	wantOK(t, r)
	var d batchData
	r.Data(t, &d)
	if len(d.Items) != len(items) {
		t.Fatalf("%d items answered, %d sent: %s", len(d.Items), len(items), r.Raw)
	}
	for i, it := range d.Items {
		if it.IdempotencyKey != items[i].IdempotencyKey {
			t.Errorf("item %d answers key %q, want %q: the order is the request's", i, it.IdempotencyKey, items[i].IdempotencyKey)
		}
		if it.Success != (it.Data != nil) || it.Success == (it.Error != nil) || it.Success != (it.Status == http.StatusOK) {
			t.Errorf("item %d: success %v with status %d, data %v and error %v: the members disagree", i, it.Success, it.Status, it.Data != nil, it.Error != nil)
		}
		if it.Error != nil {
			if want, known := v1StatusOf[it.Error.Code]; known && fmt.Sprint(deref(want)) != fmt.Sprint(deref(it.Error.V1Status)) {
				t.Errorf("item %d: %s with v1_status %v, want %v (as /send answers it)", i, it.Error.Code, deref(it.Error.V1Status), deref(want))
			}
		}
	}
	return d
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSendBatchMixed: one batch holding a payout, a refusal for each
// reason /send has, a key given twice (same request: the first's payout
// replayed; another request: idempotency_key_reuse) and a key that paid
// before the batch (replayed, or reuse). Each item is answered in order
// as /send would answer it; the batch is 200; only the payable items are
// paid, once, and every refusal has its payout.failed event (D51).
func TestSendBatchMixed(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		ctx := context.Background()
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000, "DOGE": 500})
		for _, name := range []string{"bob", "carol", "dave", "erin", "frank", "grace", "sam"} {
			env.User(t, name)
		}
		sam, err := env.App.Users.Resolve(ctx, "sam", "BTC")
		if err != nil {
			t.Fatal(err)
		}
		if err := env.App.Users.SetStatus(ctx, sam, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		if err := env.App.Coins.SetMinPayout(ctx, "BTC", 10); err != nil {
			t.Fatal(err)
		}
		blacklist := []string{"carol"}
		if _, _, err := env.App.Faucets.SetRules(ctx, f.ID, faucet.RulesChange{Blacklist: &blacklist}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.App.Faucets.SetLimits(ctx, f.ID, []drip.Limit{
			{Coin: "BTC", Per: drip.PerRecipient, WindowSeconds: 86400, MaxCount: 1},
			{Per: drip.PerIP, WindowSeconds: 86400, MaxCount: 1},
		}); err != nil {
			t.Fatal(err)
		}
		secret := env.Key(t, f, drip.ScopeSend)
		// Before the batch: dave is paid from the claimer IP .9, which uses
		// up dave's send limit and the IP's.
		pre := sendBody{IdempotencyKey: "pre-1", To: "dave", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.9"}
		prePaid := wantPaid(t, env.V2(t, secret, "/send", pre), false)
		eventsBefore := len(events(t, env, f))

		preOther := pre
		preOther.Amount = 3000
		items := []sendBody{
			{IdempotencyKey: "b-0", To: "bob", Amount: 1000, Currency: "BTC"},                            // paid
			{IdempotencyKey: "b-1", To: "bob", Amount: 1000, Currency: "ZZZ"},                            // no such coin
			{IdempotencyKey: "b-2", To: "bob", Amount: 5, Currency: "BTC"},                               // below the minimum
			{IdempotencyKey: "b-3", To: "nobody", Amount: 1000, Currency: "BTC"},                         // no such user
			{IdempotencyKey: "b-4", To: "sam", Amount: 1000, Currency: "BTC"},                            // suspended
			{IdempotencyKey: "b-5", To: "carol", Amount: 1000, Currency: "BTC"},                          // blacklisted
			{IdempotencyKey: "b-6", To: "dave", Amount: 1000, Currency: "BTC"},                           // dave's limit
			{IdempotencyKey: "b-7", To: "erin", Amount: 1000, Currency: "BTC", IPAddress: "203.0.113.9"}, // the IP's limit
			{IdempotencyKey: "b-8", To: "frank", Amount: 1000, Currency: "DOGE"},                         // 500 DOGE only
			{IdempotencyKey: "b-0", To: "bob", Amount: 1000, Currency: "BTC"},                            // item 0 again
			{IdempotencyKey: "b-0", To: "bob", Amount: 2000, Currency: "BTC"},                            // item 0's key, another payout
			pre,      // paid before the batch
			preOther, // the same key, another payout
			{IdempotencyKey: "b-13", To: "grace", Amount: 1000, Currency: "BTC"}, // paid
		}
		d := batch(t, env, secret, false, items...)

		want := []string{"200", "400 invalid_currency", "400 invalid_amount", "400 recipient_not_payable", "400 recipient_not_payable",
			"403 recipient_refused", "429 send_limit_reached", "429 claimer_ip_limited", "409 insufficient_balance",
			"200 replayed", "409 idempotency_key_reuse", "200 replayed", "409 idempotency_key_reuse", "200"}
		got := make([]string, len(d.Items))
		for i, it := range d.Items {
			got[i] = it.outcome()
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("item outcomes (-want +got):\n%s", diff)
		}
		if d.Paid != 2 || d.Replayed != 2 || d.Failed != 10 || d.DryRun {
			t.Errorf("paid %d, replayed %d, failed %d, dry_run %v; want 2, 2, 10, false", d.Paid, d.Replayed, d.Failed, d.DryRun)
		}
		if d.Items[9].Data.PayoutID != d.Items[0].Data.PayoutID || d.Items[11].Data.PayoutID != prePaid.PayoutID {
			t.Errorf("replayed items name payouts %d and %d, want %d (item 0) and %d (paid before)",
				d.Items[9].Data.PayoutID, d.Items[11].Data.PayoutID, d.Items[0].Data.PayoutID, prePaid.PayoutID)
		}
		if d.Items[0].Data.PayoutID == d.Items[13].Data.PayoutID || d.Items[0].Data.DryRun {
			t.Errorf("items 0 and 13: %+v and %+v, want two payouts", d.Items[0].Data, d.Items[13].Data)
		}
		if got, want := env.Balance(t, f.AccountID, "BTC"), int64(1_000_000-3*1000); got != want {
			t.Errorf("faucet BTC %d, want %d: the pre-send and two items paid", got, want)
		}
		if got := env.Balance(t, f.AccountID, "DOGE"); got != 500 {
			t.Errorf("faucet DOGE %d, want 500", got)
		}
		if got := len(payouts(t, env, f)); got != 3 {
			t.Errorf("%d payouts, want 3", got)
		}
		// Each refusal of items 1-8 has its payout.failed event, once;
		// the refusals for a reused key have none, as on /send.
		failed := map[string]int{}
		for _, ev := range events(t, env, f)[:len(events(t, env, f))-eventsBefore] {
			if ev.Type == drip.EventPayoutFailed {
				failed[failedCode(t, ev)]++
			}
		}
		wantFailed := map[string]int{"invalid_currency": 1, "invalid_amount": 1, "recipient_not_payable": 2, "recipient_refused": 1,
			"send_limit_reached": 1, "claimer_ip_limited": 1, "insufficient_balance": 1}
		if diff := cmp.Diff(wantFailed, failed); diff != "" {
			t.Errorf("payout.failed events of the batch by code (-want +got):\n%s", diff)
		}
	})
}

// TestSendBatchRepeated: the same batch sent again replays each paid item
// (same payout ids, nothing paid) and judges the refused ones again; a
// duplicate key that was refused the first time is answered the same.
func TestSendBatchRepeated(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		env.User(t, "bob")
		secret := env.Key(t, f, drip.ScopeSend)
		items := []sendBody{
			{IdempotencyKey: "r-0", To: "bob", Amount: 1000, Currency: "BTC"},
			{IdempotencyKey: "r-1", To: "nobody", Amount: 1000, Currency: "BTC"},
			{IdempotencyKey: "r-1", To: "nobody", Amount: 1000, Currency: "BTC"}, // the refused item's key again
			{IdempotencyKey: "r-3", To: "bob", Amount: 2000, Currency: "BTC"},
		}
		first := batch(t, env, secret, false, items...)
		second := batch(t, env, secret, false, items...)
		var got1, got2 []string
		for i := range items {
			got1, got2 = append(got1, first.Items[i].outcome()), append(got2, second.Items[i].outcome())
		}
		if diff := cmp.Diff([]string{"200", "400 recipient_not_payable", "400 recipient_not_payable", "200"}, got1); diff != "" {
			t.Errorf("first batch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"200 replayed", "400 recipient_not_payable", "400 recipient_not_payable", "200 replayed"}, got2); diff != "" {
			t.Errorf("the batch again (-want +got):\n%s", diff)
		}
		for _, i := range []int{0, 3} {
			if a, b := first.Items[i].Data, second.Items[i].Data; a == nil || b == nil || a.PayoutID != b.PayoutID || a.Balance != b.Balance {
				t.Errorf("item %d: replay %+v, want the original %+v", i, b, a)
			}
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 7000 {
			t.Errorf("faucet BTC %d, want 7000: each item paid once", got)
		}
		if n := len(payouts(t, env, f)); n != 2 {
			t.Errorf("%d payouts, want 2", n)
		}
	})
}

// TestSendBatchBadInput: a batch that is malformed as a whole is one 400
// in v2's envelope, and nothing of it is paid or recorded; a batch takes
// POST only and the send scope.
func TestSendBatchBadInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		env.User(t, "bob")
		secret := env.Key(t, f, drip.ScopeSend)
		good := `{"idempotency_key":"g","to":"bob","amount":1000,"currency":"BTC"}`
		many := make([]string, 501)
		for i := range many {
			many[i] = fmt.Sprintf(`{"idempotency_key":"m-%d","to":"bob","amount":1000,"currency":"BTC"}`, i)
		}
		huge := `{"items":[` + good + `],"dry_run":false,"x":"` + strings.Repeat("a", 1<<20) + `"}`
		for _, c := range []struct{ name, body, code string }{
			{"not JSON", `{"items": [`, "malformed_request"},
			{"a list", `[` + good + `]`, "malformed_request"},
			{"null", `null`, "malformed_request"},
			{"empty body", ``, "invalid"},
			{"no items", `{}`, "invalid"},
			{"items null", `{"items":null}`, "invalid"},
			{"empty items", `{"items":[]}`, "invalid"},
			{"501 items", `{"items":[` + strings.Join(many, ",") + `]}`, "invalid"},
			{"items not a list", `{"items":{"idempotency_key":"g"}}`, "invalid"},
			{"an item null", `{"items":[` + good + `,null]}`, "invalid"},
			{"an item without a key", `{"items":[` + good + `,{"to":"bob","amount":1000,"currency":"BTC"}]}`, "invalid"},
			{"an item's amount a fraction", `{"items":[` + good + `,{"idempotency_key":"h","to":"bob","amount":1.5,"currency":"BTC"}]}`, "invalid"},
			{"an item's amount zero", `{"items":[{"idempotency_key":"h","to":"bob","amount":"0","currency":"BTC"},` + good + `]}`, "invalid"},
			{"an item's amount an object", `{"items":[` + good + `,{"idempotency_key":"h","to":"bob","amount":{},"currency":"BTC"}]}`, "invalid"},
			{"an item's currency malformed", `{"items":[` + good + `,{"idempotency_key":"h","to":"bob","amount":1,"currency":"B"}]}`, "invalid"},
			{"an item without to", `{"items":[` + good + `,{"idempotency_key":"h","amount":1,"currency":"BTC"}]}`, "invalid"},
			{"an unknown field in an item", `{"items":[{"idempotency_key":"h","to":"bob","amount":1,"currency":"BTC","dry_run":true}]}`, "invalid"},
			{"a member twice", `{"items":[` + good + `],"items":[` + good + `]}`, "malformed_request"},
			{"dry_run not a boolean", `{"items":[` + good + `],"dry_run":"yes"}`, "invalid"},
			{"over 1 MiB", huge, "malformed_request"},
		} {
			r := env.V2(t, secret, "/send/batch", c.body)
			if r.HTTPStatus != http.StatusBadRequest || r.Code() != c.code || r.Envelope.Data != nil && string(r.Envelope.Data) != "null" {
				t.Errorf("%s: HTTP %d %q, want 400 %s: %.300s", c.name, r.HTTPStatus, r.Code(), c.code, r.Raw)
			}
		}
		wantError(t, env.V2Do(t, http.MethodGet, secret, "/send/batch", nil, nil), http.StatusMethodNotAllowed, "method_not_allowed")
		wantError(t, env.V2(t, env.Key(t, f, drip.ScopeRead, drip.ScopeManage), "/send/batch", `{"items":[`+good+`]}`), http.StatusForbidden, "insufficient_scope")
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC %d after bad batches, want 1000000", got)
		}
		if evs := events(t, env, f); len(evs) != 0 {
			t.Errorf("%d events after bad batches, want none: %v", len(evs), evs)
		}
		// The largest real batch fits: 500 items of the longest fields.
		long := make([]sendBody, 500)
		for i := range long {
			long[i] = sendBody{IdempotencyKey: fmt.Sprintf("%0255d", i), To: "bob" + strings.Repeat(" ", 300), Amount: "0000000000000000001",
				Currency: "BTC", IPAddress: strings.Repeat("f", 64), Referral: strings.Repeat("r", 64)}
		}
		if d := batch(t, env, secret, true, long...); d.Paid != 500 {
			t.Errorf("a dry run of 500 long items: %d would be paid, want 500", d.Paid)
		}
	})
}

// TestSendBatchRequestRate: a batch costs its key one request plus one
// per 10 items or part of 10 (D61), taken all at once before any item is
// judged: a key without that many left is refused the whole batch, 429
// rate_limited, and nothing is paid.
func TestSendBatchRequestRate(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		// A bucket of 30 on the env's frozen clock: nothing refills.
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: ratelimit.Config{PerMinute: 60, Burst: 30}, CallerRate: unlimited})
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		env.User(t, "bob")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}})
		items := func(prefix string, n int) []sendBody {
			out := make([]sendBody, n)
			for i := range out {
				out[i] = sendBody{IdempotencyKey: fmt.Sprintf("%s-%d", prefix, i), To: "bob", Amount: 10, Currency: "BTC"}
			}
			return out
		}
		// 100 items: 1 + 10 requests; 30 - 11 = 19 left.
		if d := batch(t, env, secret, false, items("a", 100)...); d.Paid != 100 || d.RateLimitRemaining != 19 {
			t.Errorf("first batch: %d paid, %v requests left; want 100 and 19", d.Paid, d.RateLimitRemaining)
		}
		// 91 items cost 1 + 10 too (a part of 10 counts): 8 left.
		if d := batch(t, env, secret, true, items("b", 91)...); d.Paid != 91 || d.RateLimitRemaining != 8 {
			t.Errorf("a dry run of 91: %d would be paid, %v requests left; want 91 and 8 (a dry run costs as a batch does)", d.Paid, d.RateLimitRemaining)
		}
		// 100 more need 1 + 10: the request itself passes (7 left), the
		// 10 for its items do not.
		r := env.V2(t, secret, "/send/batch", map[string]any{"items": items("c", 100)})
		wantError(t, r, http.StatusTooManyRequests, "rate_limited")
		if retryAfter(t, r) < 1 {
			t.Errorf("Retry-After %d, want at least 1", retryAfter(t, r))
		}
		// 7 requests are left: a batch of 60 (1 + 6) still fits.
		if d := batch(t, env, secret, false, items("d", 60)...); d.Paid != 60 || d.RateLimitRemaining != 0 {
			t.Errorf("last batch: %d paid, %v left; want 60 and 0", d.Paid, d.RateLimitRemaining)
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000-160*10 {
			t.Errorf("faucet BTC %d, want %d: the refused batch paid nothing", got, 1_000_000-160*10)
		}
	})
}

// TestSendBatchRacesSingleSends: batches and single sends at once on one
// faucet whose balance affords fewer payouts than are asked for: exactly
// the affordable payouts are paid, every other item and send is 409
// insufficient_balance, and the ledger reconciles (D3, D5).
func TestSendBatchRacesSingleSends(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const (
			amount     = 100
			affordable = 333
			batches    = 6
			perBatch   = 50
			singles    = 150 // 6*50 + 150 = 450 asked, 333 affordable
		)
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
		f, _ := env.Faucet(t, map[string]int64{"BTC": affordable*amount + amount/2})
		var recipients []string
		for i := range 20 {
			recipients = append(recipients, env.User(t, fmt.Sprintf("racer%d", i)).Username)
		}
		secret := env.Key(t, f, drip.ScopeSend)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			paid     = map[int64]bool{}
			outcomes = map[string]int{}
		)
		record := func(outcome string, payoutID int64) {
			mu.Lock()
			defer mu.Unlock()
			outcomes[outcome]++
			if payoutID > 0 {
				if paid[payoutID] {
					t.Errorf("payout %d answered twice", payoutID)
				}
				paid[payoutID] = true
			}
		}
		for b := range batches {
			wg.Go(func() {
				items := make([]sendBody, perBatch)
				for i := range items {
					items[i] = sendBody{IdempotencyKey: fmt.Sprintf("batch-%d-%d", b, i), To: recipients[(b+i)%len(recipients)], Amount: amount, Currency: "BTC"}
				}
				r := env.V2(t, secret, "/send/batch", map[string]any{"items": items})
				if r.HTTPStatus != http.StatusOK {
					t.Errorf("batch %d: HTTP %d: %s", b, r.HTTPStatus, r.Raw)
					return
				}
				var d batchData
				r.Data(t, &d)
				for _, it := range d.Items {
					var id int64
					if it.Data != nil {
						id = it.Data.PayoutID
					}
					record(it.outcome(), id)
				}
			})
		}
		for i := range singles {
			wg.Go(func() {
				r := env.V2(t, secret, "/send", sendBody{IdempotencyKey: fmt.Sprintf("single-%d", i), To: recipients[i%len(recipients)], Amount: amount, Currency: "BTC"})
				var d sendData
				if r.HTTPStatus == http.StatusOK {
					r.Data(t, &d)
					record("200", d.PayoutID)
					return
				}
				record(fmt.Sprintf("%d %s", r.HTTPStatus, r.Code()), 0)
			})
		}
		wg.Wait()
		want := map[string]int{"200": affordable, "409 insufficient_balance": batches*perBatch + singles - affordable}
		if diff := cmp.Diff(want, outcomes); diff != "" {
			t.Errorf("outcomes of items and sends (-want +got):\n%s", diff)
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != amount/2 {
			t.Errorf("faucet BTC %d, want %d left", got, amount/2)
		}
		if n := len(payouts(t, env, f)); n != affordable || len(paid) != affordable {
			t.Errorf("%d payout rows and %d distinct payout ids answered, want %d", n, len(paid), affordable)
		}
		env.Reconcile(t)
	})
}

// events are the faucet's events, newest first.
func events(t *testing.T, env *apptest.Env, f *drip.Faucet) []drip.Event {
	t.Helper()
	list, err := env.App.Store.EventList(context.Background(), f.ID, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// failedCode is the v2 error code of a payout.failed event (D51).
func failedCode(t *testing.T, ev drip.Event) string {
	t.Helper()
	var d drip.FailedData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		t.Fatal(err)
	}
	return d.Error
}

// TestSendBatchDailyUSDCap: a capped key's batch pays until the cap (D36)
// is used up, and no further, whatever order the items reach the ledger
// in; an item in a coin without a USD price is 503 price_unavailable. The
// dry run of the same batch says which items would be refused, in order.
func TestSendBatchDailyUSDCap(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited, Prices: btcAt("50000")})
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
		for _, name := range []string{"alice", "bob", "carol"} {
			env.User(t, name)
		}
		// $1 a day: 500 units of BTC at $50,000 are $0.25, so four items
		// of 500 use the cap up exactly.
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, Scopes: []drip.Scope{drip.ScopeSend}, DailyUSDCapMicros: 1_000_000})
		var items []sendBody
		for i := range 6 {
			items = append(items, sendBody{IdempotencyKey: fmt.Sprintf("cap-%d", i), To: []string{"alice", "bob", "carol"}[i%3], Amount: 500, Currency: "BTC"})
		}
		items = append(items, sendBody{IdempotencyKey: "cap-doge", To: "alice", Amount: 500, Currency: "DOGE"})

		dry := batch(t, env, secret, true, items...)
		var got []string
		for _, it := range dry.Items {
			got = append(got, it.outcome())
		}
		want := []string{"200", "200", "200", "200", "429 daily_usd_cap_reached", "429 daily_usd_cap_reached", "503 price_unavailable"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("dry run (-want +got):\n%s", diff)
		}

		d := batch(t, env, secret, false, items...)
		outcomes := map[string]int{}
		for _, it := range d.Items {
			outcomes[it.outcome()]++
		}
		if diff := cmp.Diff(map[string]int{"200": 4, "429 daily_usd_cap_reached": 2, "503 price_unavailable": 1}, outcomes); diff != "" {
			t.Errorf("batch outcomes (-want +got):\n%s", diff)
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000-4*500 {
			t.Errorf("faucet BTC %d, want %d: four items paid", got, 1_000_000-4*500)
		}
	})
}
