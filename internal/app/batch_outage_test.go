package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// D61, D58: a batch whose database goes away the moment its first
// transaction commits is still answered 200, item by item: the items of
// that transaction as 503 outcome_unknown (they were paid, and nobody
// could ask), the items after it as 503 unavailable (not paid); none is
// answered paid or refused. Sent again once the database is back, the
// batch replays what was paid and pays the rest: each item paid once.
func TestBatchLostCommitDuringOutage(t *testing.T) {
	t.Parallel()
	e := newOutageEnv(t)
	before := e.Balance(t, e.f.AccountID, "BTC")
	const n = 20
	items := make([]map[string]any, n)
	for i := range items {
		items[i] = map[string]any{"idempotency_key": fmt.Sprintf("lost-batch-%d", i), "to": "bob", "amount": 1000, "currency": "BTC"}
	}
	body := map[string]any{"items": items}
	fired := e.px.ResetWhenServerSends([]byte("COMMIT\x00"))
	go func() { // the database goes away the moment it commits
		<-fired
		e.px.Refuse(true)
		e.px.ResetAll()
	}()
	type item struct {
		Success  bool `json:"success"`
		Status   int  `json:"status"`
		Replayed bool `json:"replayed"`
		Error    *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	outcomes := func(raw json.RawMessage) map[string]int {
		var d struct {
			Items []item `json:"items"`
		}
		if err := json.Unmarshal(raw, &d); err != nil || len(d.Items) != n {
			t.Fatalf("batch data: %v, %d items: %s", err, len(d.Items), raw)
		}
		out := map[string]int{}
		for _, it := range d.Items {
			switch {
			case it.Success && it.Replayed:
				out["200 replayed"]++
			case it.Success:
				out["200"]++
			case it.Error != nil:
				out[fmt.Sprintf("%d %s", it.Status, it.Error.Code)]++
			default:
				out[fmt.Sprint(it.Status)]++
			}
		}
		return out
	}
	var first map[string]int
	timed(t, "batch", func() {
		r := e.V2(t, e.v2, "/send/batch", body)
		if r.HTTPStatus != http.StatusOK {
			t.Fatalf("batch: HTTP %d %s, want 200 with each item's outcome", r.HTTPStatus, r.Raw)
		}
		first = outcomes(r.Envelope.Data)
	})
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("no COMMIT was answered: the fault was not injected")
	}
	unknown, unavailable := first["503 outcome_unknown"], first["503 unavailable"]
	if unknown == 0 || unknown+unavailable != n {
		t.Fatalf("items %v, want each 503 outcome_unknown or unavailable, some outcome_unknown", first)
	}
	e.px.Refuse(false)
	// What committed is exactly the items answered outcome_unknown: the
	// first transaction; the others never reached a commit.
	if got := e.Balance(t, e.f.AccountID, "BTC"); got != before-int64(unknown)*1000 {
		t.Fatalf("faucet balance %d, want %d: the %d items of the lost commit paid", got, before-int64(unknown)*1000, unknown)
	}
	r := e.V2(t, e.v2, "/send/batch", body)
	if r.HTTPStatus != http.StatusOK {
		t.Fatalf("the batch again: HTTP %d %s", r.HTTPStatus, r.Raw)
	}
	again := outcomes(r.Envelope.Data)
	if again["200 replayed"] != unknown || again["200"] != unavailable {
		t.Errorf("the batch again: %v, want the %d outcome_unknown items replayed and the %d unavailable ones paid", again, unknown, unavailable)
	}
	if got := e.Balance(t, e.f.AccountID, "BTC"); got != before-n*1000 {
		t.Errorf("faucet balance %d, want %d: each item paid once", got, before-n*1000)
	}
	e.Reconcile(t)
}
