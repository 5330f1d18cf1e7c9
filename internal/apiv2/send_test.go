// Tests of v2 /send (spec 4.2 send, 5 v2, 8; DESIGN D3, D5, D34-D36, D60):
// the idempotency key (D35) and the per-key daily USD cap (D36). They drive
// the real server over HTTP through apptest, on every engine
// storetest.Engines gives, and reconcile the ledger (D3) after each test.
//
// The helpers are those of helpers_test.go.
package apiv2_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestSendIdempotentConcurrentDuplicatesPayOnce: 50 sends with one
// idempotency key at once pay exactly once (D35: a concurrent duplicate
// waits for the first and then replays). Every reply is 200 with the same
// payout_id; exactly one is the original, 49 carry Idempotent-Replayed.
func TestSendIdempotentConcurrentDuplicatesPayOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const senders, amount = 50, 1234
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		alice := env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		body := sendBody{IdempotencyKey: "order-42", To: "alice", Amount: amount, Currency: "BTC"}
		reqs := make([]sendRequest, senders)
		for i := range reqs {
			reqs[i] = sendRequest{Key: secret, Body: body}
		}

		replies := sendAtOnce(t, []string{env.Server.URL}, reqs)

		if diff := cmp.Diff(map[string]int{"200": senders}, outcomes(replies)); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		var originals int
		ids := map[int64]int{}
		for _, r := range replies {
			if !r.Replayed {
				originals++
			}
			ids[r.Data.PayoutID]++
		}
		if originals != 1 {
			t.Errorf("%d replies without Idempotent-Replayed: true, want exactly 1 (the one that paid)", originals)
		}
		if len(ids) != 1 {
			t.Errorf("payout_ids replied -> count: %v, want one id for all %d", ids, senders)
		}
		// Every reply is the original's data, byte for byte in meaning.
		for i, r := range replies[1:] {
			if diff := cmp.Diff(replies[0].Data, r.Data); diff != "" {
				t.Errorf("reply %d differs from reply 0 (-0 +%d):\n%s", i+1, i+1, diff)
			}
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != amount {
			t.Errorf("recipient balance %d, want %d (paid once)", got, amount)
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000-amount {
			t.Errorf("faucet balance %d, want %d", got, 1_000_000-amount)
		}
		if list := payouts(t, env, f); len(list) != 1 || list[0].ID != replies[0].Data.PayoutID {
			t.Errorf("faucet payouts %+v, want exactly payout %d", list, replies[0].Data.PayoutID)
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotentDuplicatesAcrossNodes: two application instances over
// one database (D31) each have their own in-process lock, so duplicates
// that reach different nodes are decided by the database's key on
// (faucet, idempotency_key): still one payout, and every reply names it.
func TestSendIdempotentDuplicatesAcrossNodes(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const senders, amount = 40, 777
		st := eng.Open(t)
		env := sendEnv(t, st, nil)
		node2 := sendEnv(t, st, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		alice := env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		// Several rounds, each with a fresh key, so the race is really run.
		for round := range 5 {
			body := sendBody{IdempotencyKey: fmt.Sprintf("round-%d", round), To: "alice", Amount: amount, Currency: "BTC"}
			reqs := make([]sendRequest, senders)
			for i := range reqs {
				reqs[i] = sendRequest{Server: i % 2, Key: secret, Body: body}
			}
			replies := sendAtOnce(t, []string{env.Server.URL, node2.Server.URL}, reqs)
			if diff := cmp.Diff(map[string]int{"200": senders}, outcomes(replies)); diff != "" {
				t.Errorf("round %d: outcomes (-want +got):\n%s", round, diff)
				for _, r := range replies {
					if r.HTTPStatus != http.StatusOK {
						t.Logf("round %d: %d %s", round, r.HTTPStatus, r.Raw)
						break
					}
				}
			}
			ids := map[int64]bool{}
			originals := 0
			for _, r := range replies {
				if r.HTTPStatus == http.StatusOK {
					ids[r.Data.PayoutID] = true
					if !r.Replayed {
						originals++
					}
				}
			}
			if len(ids) != 1 || originals != 1 {
				t.Errorf("round %d: payout_ids %v and %d unreplayed replies, want one id and 1", round, ids, originals)
			}
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 5*amount {
			t.Errorf("recipient balance %d, want %d (5 keys, each paid once)", got, 5*amount)
		}
		if list := payouts(t, env, f); len(list) != 5 {
			t.Errorf("faucet has %d payouts, want 5", len(list))
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotentManyKeysAcrossNodes: 30 keys, each sent twice at once,
// once to each of two nodes over one database. A batch that holds a key
// the other node bound first fails as a whole and is retried payout by
// payout (D5), so the innocent payouts batched with it still pay: exactly
// 30 payouts, each key's two replies naming the same one.
func TestSendIdempotentManyKeysAcrossNodes(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const keys, amount = 30, 500
		st := eng.Open(t)
		env := sendEnv(t, st, nil)
		node2 := sendEnv(t, st, nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		users := []*drip.User{env.User(t, "alice"), env.User(t, "bob")}
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		reqs := make([]sendRequest, 0, 2*keys)
		for i := range keys {
			body := sendBody{IdempotencyKey: fmt.Sprint("multi-", i), To: users[i%2].Username, Amount: amount, Currency: "BTC"}
			reqs = append(reqs, sendRequest{Server: 0, Key: secret, Body: body}, sendRequest{Server: 1, Key: secret, Body: body})
		}

		replies := sendAtOnce(t, []string{env.Server.URL, node2.Server.URL}, reqs)

		if diff := cmp.Diff(map[string]int{"200": 2 * keys}, outcomes(replies)); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		for i := range keys {
			a, b := replies[2*i], replies[2*i+1]
			if a.HTTPStatus != http.StatusOK || b.HTTPStatus != http.StatusOK {
				continue
			}
			if a.Data != b.Data || a.Replayed == b.Replayed {
				t.Errorf("key %d: replies %+v (replayed %v) and %+v (replayed %v), want the same data, one replayed",
					i, a.Data, a.Replayed, b.Data, b.Replayed)
			}
		}
		if list := payouts(t, env, f); len(list) != keys {
			t.Errorf("faucet has %d payouts, want %d", len(list), keys)
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000-keys*amount {
			t.Errorf("faucet balance %d, want %d", got, 1_000_000-keys*amount)
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotentRetryReplaysOriginal: a retry after completion answers
// the original reply (same balance, payout_id, payout_user_hash and
// rate_limit_remaining) with Idempotent-Replayed: true, and pays nothing,
// even once the faucet could no longer pay it or when the amount is
// written as a string instead of a number (the same request, D27).
func TestSendIdempotentRetryReplaysOriginal(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		alice := env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		_, other := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		body := sendBody{IdempotencyKey: "retry-1", To: "alice", Amount: 4000, Currency: "BTC", Referral: "ref-7"}

		first := env.V2(t, secret, "/send", body)
		orig := wantPaid(t, first, false)
		if want := (sendData{RateLimitRemaining: orig.RateLimitRemaining, Currency: "BTC", Balance: 6000,
			BalanceBitcoin: "0.00006", PayoutID: orig.PayoutID, PayoutUserHash: alice.PayoutUserHash}); !cmp.Equal(want, orig) {
			t.Errorf("original data (-want +got):\n%s", cmp.Diff(want, orig))
		}

		// Other sends move the balance and drain the bucket's level.
		wantPaid(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: "retry-2", To: "alice", Amount: 5000, Currency: "BTC"}), false)

		tests := []struct {
			name string
			key  string
			body sendBody
		}{
			{"same request", secret, body},
			{"again", secret, body},
			{"amount as a string", secret, func() sendBody { b := body; b.Amount = "4000"; return b }()},
			{"another key of the faucet", other, body},
		}
		for _, tt := range tests {
			r := env.V2(t, tt.key, "/send", tt.body)
			got := wantPaid(t, r, true)
			if diff := cmp.Diff(orig, got); diff != "" {
				t.Errorf("%s: replayed data differs from the original (-original +replay):\n%s", tt.name, diff)
			}
			if r.Envelope.Message != first.Envelope.Message {
				t.Errorf("%s: message %q, original %q", tt.name, r.Envelope.Message, first.Envelope.Message)
			}
		}
		// The faucet holds 1000 now, less than the 4000 of the original:
		// a replay still answers 200, because it pays nothing.
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 9000 {
			t.Errorf("recipient balance %d, want 9000 (two payouts, no replay paid)", got)
		}
		if list := payouts(t, env, f); len(list) != 2 {
			t.Errorf("faucet has %d payouts, want 2", len(list))
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotencyKeyReuseWithOtherRequest: the key bound to one payout,
// reused for a different request, is 409 idempotency_key_reuse and pays
// nothing (D35); the original stays replayable.
func TestSendIdempotencyKeyReuseWithOtherRequest(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 100_000, "DOGE": 100_000})
		alice := env.User(t, "alice")
		bob := env.User(t, "bob")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		body := sendBody{IdempotencyKey: "bound", To: "alice", Amount: 1000, Currency: "BTC", Referral: "r1"}
		orig := wantPaid(t, env.V2(t, secret, "/send", body), false)

		change := func(fn func(b *sendBody)) sendBody { b := body; fn(&b); return b }
		tests := []struct {
			name string
			body sendBody
		}{
			{"amount", change(func(b *sendBody) { b.Amount = 1001 })},
			{"to", change(func(b *sendBody) { b.To = "bob" })},
			{"currency", change(func(b *sendBody) { b.Currency = "DOGE" })},
			{"referral", change(func(b *sendBody) { b.Referral = "r2" })},
			{"referral dropped", change(func(b *sendBody) { b.Referral = "" })},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := env.V2(t, secret, "/send", tt.body)
				wantError(t, r, http.StatusConflict, "idempotency_key_reuse")
				wantV1Status(t, r, nil) // v1 has no such outcome (drip.v1Status)
			})
		}
		if got := wantPaid(t, env.V2(t, secret, "/send", body), true); got != orig {
			t.Errorf("after the reuses the replay is %+v, want the original %+v", got, orig)
		}
		if got := env.Balance(t, alice.AccountID, "BTC") + env.Balance(t, bob.AccountID, "BTC") + env.Balance(t, bob.AccountID, "DOGE") + env.Balance(t, alice.AccountID, "DOGE"); got != 1000 {
			t.Errorf("recipients hold %d in all, want 1000 (only the original paid)", got)
		}
		if list := payouts(t, env, f); len(list) != 1 {
			t.Errorf("faucet has %d payouts, want 1", len(list))
		}
		env.Reconcile(t)
	})
}

// TestSendRefusalDoesNotBindKey: only a paid payout binds a key (D35). A
// send refused for balance, recipient, amount or currency leaves the key
// free: the retry with the same key pays, once, and is not a replay.
func TestSendRefusalDoesNotBindKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 500})
		alice := env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})

		// Insufficient balance, then a deposit, then the retry.
		body := sendBody{IdempotencyKey: "after-deposit", To: "alice", Amount: 2000, Currency: "BTC"}
		r := env.V2(t, secret, "/send", body)
		wantError(t, r, http.StatusConflict, "insufficient_balance")
		wantV1Status(t, r, intPtr(402))
		if _, err := env.App.Ledger.Deposit(context.Background(), f, "BTC", 10_000); err != nil {
			t.Fatalf("deposit: %v", err)
		}
		d := wantPaid(t, env.V2(t, secret, "/send", body), false)
		if d.Balance != 8500 {
			t.Errorf("balance after the retry %d, want 8500", d.Balance)
		}
		if again := wantPaid(t, env.V2(t, secret, "/send", body), true); again != d {
			t.Errorf("replay %+v, want %+v", again, d)
		}

		// Refusals before the ledger, each followed by a good send with the
		// same key (a different request: it must pay, not clash).
		tests := []struct {
			name       string
			bad        sendBody
			status     int
			code       string
			wantV1     *int
			goodAmount int64
		}{
			{"unknown recipient", sendBody{To: "nobody", Amount: 100, Currency: "BTC"}, 400, "recipient_not_payable", intPtr(456), 101},
			{"invalid amount zero", sendBody{To: "alice", Amount: "0", Currency: "BTC"}, 400, "invalid_amount", intPtr(405), 102},
			{"invalid amount fraction", sendBody{To: "alice", Amount: "1.5", Currency: "BTC"}, 400, "invalid_amount", intPtr(405), 103},
			{"invalid currency", sendBody{To: "alice", Amount: 100, Currency: "NOPE"}, 400, "invalid_currency", intPtr(410), 104},
		}
		paid := d.Balance
		for i, tt := range tests {
			idem := fmt.Sprintf("refused-%d", i)
			tt.bad.IdempotencyKey = idem
			r := env.V2(t, secret, "/send", tt.bad)
			wantError(t, r, tt.status, tt.code)
			wantV1Status(t, r, tt.wantV1)
			// The same refused request again is refused again, not replayed.
			wantError(t, env.V2(t, secret, "/send", tt.bad), tt.status, tt.code)
			good := wantPaid(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: idem, To: "alice", Amount: tt.goodAmount, Currency: "BTC"}), false)
			paid -= tt.goodAmount
			if good.Balance != paid {
				t.Errorf("%s: balance after the good send %d, want %d", tt.name, good.Balance, paid)
			}
		}
		want := int64(2000 + 101 + 102 + 103 + 104)
		if got := env.Balance(t, alice.AccountID, "BTC"); got != want {
			t.Errorf("recipient balance %d, want %d", got, want)
		}
		if list := payouts(t, env, f); len(list) != 5 {
			t.Errorf("faucet has %d payouts, want 5", len(list))
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotencyKeysArePerFaucet: keys are scoped per faucet (D35):
// the same key on another faucet is another payout.
func TestSendIdempotencyKeysArePerFaucet(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f1, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		f2, _ := env.Faucet(t, map[string]int64{"BTC": 10_000})
		alice := env.User(t, "alice")
		_, k1 := mintKey(t, env, key.MintParams{FaucetID: f1.ID})
		_, k2 := mintKey(t, env, key.MintParams{FaucetID: f2.ID})
		body := sendBody{IdempotencyKey: "shared", To: "alice", Amount: 1000, Currency: "BTC"}

		d1 := wantPaid(t, env.V2(t, k1, "/send", body), false)
		d2 := wantPaid(t, env.V2(t, k2, "/send", body), false)
		if d1.PayoutID == d2.PayoutID {
			t.Errorf("both faucets answered payout %d", d1.PayoutID)
		}
		// A different request with the key on faucet 2 is a reuse there,
		// whatever faucet 1 did with it.
		wantError(t, env.V2(t, k2, "/send", sendBody{IdempotencyKey: "shared", To: "alice", Amount: 999, Currency: "BTC"}),
			http.StatusConflict, "idempotency_key_reuse")
		if got := wantPaid(t, env.V2(t, k1, "/send", body), true); got != d1 {
			t.Errorf("faucet 1 replay %+v, want %+v", got, d1)
		}
		if got := wantPaid(t, env.V2(t, k2, "/send", body), true); got != d2 {
			t.Errorf("faucet 2 replay %+v, want %+v", got, d2)
		}
		for _, f := range []*drip.Faucet{f1, f2} {
			if got := env.Balance(t, f.AccountID, "BTC"); got != 9000 {
				t.Errorf("faucet %d balance %d, want 9000", f.ID, got)
			}
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 2000 {
			t.Errorf("recipient balance %d, want 2000", got)
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotencyKeyForm: 1 to 255 printable ASCII characters (D35);
// anything else, or none, is 400 and pays nothing.
func TestSendIdempotencyKeyForm(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 100_000})
		alice := env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		tests := []struct {
			name string
			key  string
			ok   bool
		}{
			{"1 character", "k", true},
			{"255 characters", strings.Repeat("x", 254) + "y", true},
			{"every printable ASCII", func() string {
				var b strings.Builder
				for c := byte(0x20); c <= 0x7e; c++ {
					b.WriteByte(c)
				}
				return b.String()
			}(), true},
			{"256 characters", strings.Repeat("z", 256), false},
			{"missing", "", false},
			{"tab", "a\tb", false},
			{"newline", "a\nb", false},
			{"DEL", "a\x7fb", false},
			{"non-ASCII", "schlüssel", false},
		}
		var paid int64
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				amount := int64(100 + i)
				body := sendBody{IdempotencyKey: tt.key, To: "alice", Amount: amount, Currency: "BTC"}
				r := env.V2(t, secret, "/send", body)
				if !tt.ok {
					wantError(t, r, http.StatusBadRequest, "invalid")
					wantV1Status(t, r, nil) // v1 has no idempotency key: no v1 status
					return
				}
				wantPaid(t, r, false)
				paid += amount
				wantPaid(t, env.V2(t, secret, "/send", body), true)
			})
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != paid {
			t.Errorf("recipient balance %d, want %d (the accepted keys, once each)", got, paid)
		}
		env.Reconcile(t)
	})
}

// TestSendConcurrentDistinctKeysNoOverdraft: 40 sends with 40 different
// keys race for a faucet that holds 30: exactly 30 pay, 10 are 409
// insufficient_balance, the faucet ends at 0 (D2, D5), and each paid key
// replays its own payout afterwards.
func TestSendConcurrentDistinctKeysNoOverdraft(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const senders, affordable, amount = 40, 30, 1000
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": affordable * amount})
		users := []*drip.User{env.User(t, "alice"), env.User(t, "bob"), env.User(t, "carol")}
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		reqs := make([]sendRequest, senders)
		for i := range reqs {
			reqs[i] = sendRequest{Key: secret, Body: sendBody{IdempotencyKey: fmt.Sprintf("distinct-%02d", i),
				To: users[i%len(users)].Username, Amount: amount, Currency: "BTC"}}
		}

		replies := sendAtOnce(t, []string{env.Server.URL}, reqs)

		want := map[string]int{"200": affordable, "409 insufficient_balance": senders - affordable}
		if diff := cmp.Diff(want, outcomes(replies)); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		var ids []int64
		var balances []int64
		for _, r := range replies {
			if r.HTTPStatus == http.StatusOK {
				if r.Replayed {
					t.Errorf("a first send with its own key is marked replayed: %s", r.Raw)
				}
				ids = append(ids, r.Data.PayoutID)
				balances = append(balances, r.Data.Balance)
			}
		}
		slices.Sort(ids)
		if len(slices.Compact(slices.Clone(ids))) != len(ids) {
			t.Errorf("payout_ids not unique: %v", ids)
		}
		var stored []int64
		for _, p := range payouts(t, env, f) {
			stored = append(stored, p.ID)
		}
		slices.Sort(stored)
		if diff := cmp.Diff(ids, stored); diff != "" {
			t.Errorf("payouts stored vs replied (-replied +stored):\n%s", diff)
		}
		var wantBalances []int64
		for b := range int64(affordable) {
			wantBalances = append(wantBalances, b*amount)
		}
		slices.Sort(balances)
		if diff := cmp.Diff(wantBalances, balances); diff != "" {
			t.Errorf("balances of the paid replies (-want +got):\n%s", diff)
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 0 {
			t.Errorf("faucet balance %d, want 0", got)
		}
		var credited int64
		for _, u := range users {
			credited += env.Balance(t, u.AccountID, "BTC")
		}
		if credited != affordable*amount {
			t.Errorf("recipients got %d, want %d", credited, affordable*amount)
		}
		// Each paid key replays its payout; each refused key is still free
		// (refused again now, for the same reason, not replayed).
		for i, r := range replies {
			again := env.V2(t, secret, "/send", reqs[i].Body)
			if r.HTTPStatus == http.StatusOK {
				if got := wantPaid(t, again, true); got != r.Data {
					t.Errorf("sender %d: replay %+v, want %+v", i, got, r.Data)
				}
			} else {
				wantError(t, again, http.StatusConflict, "insufficient_balance")
			}
		}
		env.Reconcile(t)
	})
}

// TestSendDailyUSDCap: a capped key pays until the next send would exceed
// the cap, which is 429 daily_usd_cap_reached with Retry-After the seconds
// to 00:00 UTC (D36). A refused send does not consume the cap, retries of
// paid sends still replay, and after midnight UTC the key sends again.
func TestSendDailyUSDCap(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), btcAt("50000"))
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		alice := env.User(t, "alice")
		k, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})
		send := func(idem string, amount int64) *apptest.V2Reply {
			return env.V2(t, secret, "/send", sendBody{IdempotencyKey: idem, To: "alice", Amount: amount, Currency: "BTC"})
		}
		capped := func(r *apptest.V2Reply) {
			t.Helper()
			wantError(t, r, http.StatusTooManyRequests, "daily_usd_cap_reached")
			wantV1Status(t, r, nil) // not in drip's v1 table
			// From 15:09:26 the next 00:00:00 UTC is 31834 s away; +1 for
			// rounding up.
			now := env.Clock.Now().UTC()
			toMidnight := int(now.Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now).Seconds())
			if got := retryAfter(t, r); got < toMidnight || got > toMidnight+1 {
				t.Errorf("Retry-After %d, want the %d seconds to 00:00 UTC (+1)", got, toMidnight)
			}
		}

		if got := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC).Sub(env.Clock.Now()); got != 31834*time.Second {
			t.Fatalf("the env's clock starts %s before midnight UTC, this test assumes 31834 s", got)
		}
		first := wantPaid(t, send("a", 500), false) // $0.25
		wantPaid(t, send("b", 500), false)          // $0.50
		wantPaid(t, send("c", 500), false)          // $0.75
		if got := keySpend(t, env, k); got != 750_000 {
			t.Errorf("spend %d micros, want 750000", got)
		}
		capped(send("d", 600)) // $1.05 > $1
		if got := keySpend(t, env, k); got != 750_000 {
			t.Errorf("spend %d micros after a refusal, want 750000 (a refusal consumes nothing)", got)
		}
		wantPaid(t, send("d", 500), false) // exactly $1.00: the cap is not exceeded; "d" was left free
		capped(send("e", 1))               // $1.0005
		capped(send("e", 1))
		// A retry of a paid send is a replay, not a new spend.
		if got := wantPaid(t, send("a", 500), true); got != first {
			t.Errorf("replay %+v, want %+v", got, first)
		}
		if got := keySpend(t, env, k); got != dailyCap {
			t.Errorf("spend %d micros, want %d", got, dailyCap)
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 2000 {
			t.Errorf("recipient balance %d, want 2000 ($1 at $50,000)", got)
		}

		// One second before midnight still counts in today.
		env.Clock.Advance(time.Date(2026, 3, 14, 23, 59, 59, 0, time.UTC).Sub(env.Clock.Now()))
		capped(send("e", 1))
		env.Clock.Advance(time.Second)
		wantPaid(t, send("e", 1), false)
		wantPaid(t, send("f", 1999), false)
		capped(send("g", 1))
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 4000 {
			t.Errorf("recipient balance %d, want 4000", got)
		}
		// A single send worth more than the whole cap, on a fresh key.
		_, fresh := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})
		r := env.V2(t, fresh, "/send", sendBody{IdempotencyKey: "big", To: "alice", Amount: 2001, Currency: "BTC"})
		wantError(t, r, http.StatusTooManyRequests, "daily_usd_cap_reached")
		wantPaid(t, env.V2(t, fresh, "/send", sendBody{IdempotencyKey: "big", To: "alice", Amount: 2000, Currency: "BTC"}), false)
		if list := payouts(t, env, f); len(list) != 7 {
			t.Errorf("faucet has %d payouts, want 7", len(list))
		}
		env.Reconcile(t)
	})
}

// TestSendDailyUSDCapIsPerKey: one key at its cap leaves the faucet's other
// keys, capped or not, unaffected (D36: per key).
func TestSendDailyUSDCapIsPerKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), btcAt("50000"))
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		alice := env.User(t, "alice")
		_, a := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})
		_, b := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})
		_, uncapped := mintKey(t, env, key.MintParams{FaucetID: f.ID})

		wantPaid(t, env.V2(t, a, "/send", sendBody{IdempotencyKey: "a1", To: "alice", Amount: 2000, Currency: "BTC"}), false)
		wantError(t, env.V2(t, a, "/send", sendBody{IdempotencyKey: "a2", To: "alice", Amount: 1, Currency: "BTC"}),
			http.StatusTooManyRequests, "daily_usd_cap_reached")
		wantPaid(t, env.V2(t, b, "/send", sendBody{IdempotencyKey: "b1", To: "alice", Amount: 2000, Currency: "BTC"}), false)
		wantPaid(t, env.V2(t, uncapped, "/send", sendBody{IdempotencyKey: "u1", To: "alice", Amount: 50_000, Currency: "BTC"}), false)
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 54_000 {
			t.Errorf("recipient balance %d, want 54000", got)
		}
		env.Reconcile(t)
	})
}

// TestSendDailyUSDCapBalanceRefusalHandsSpendBack: a capped send refused
// for the faucet's balance counts nothing against the cap: later the key
// can still send its full cap.
func TestSendDailyUSDCapBalanceRefusalHandsSpendBack(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), btcAt("50000"))
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1000})
		alice := env.User(t, "alice")
		k, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})

		for i := range 3 {
			wantError(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: fmt.Sprint("short-", i), To: "alice", Amount: 1500, Currency: "BTC"}),
				http.StatusConflict, "insufficient_balance")
		}
		if got := keySpend(t, env, k); got != 0 {
			t.Errorf("spend %d micros after refusals for balance, want 0", got)
		}
		if _, err := env.App.Ledger.Deposit(context.Background(), f, "BTC", 10_000); err != nil {
			t.Fatalf("deposit: %v", err)
		}
		wantPaid(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: "short-0", To: "alice", Amount: 1500, Currency: "BTC"}), false)
		wantPaid(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: "rest", To: "alice", Amount: 500, Currency: "BTC"}), false)
		wantError(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: "over", To: "alice", Amount: 1, Currency: "BTC"}),
			http.StatusTooManyRequests, "daily_usd_cap_reached")
		if got := keySpend(t, env, k); got != dailyCap {
			t.Errorf("spend %d micros, want %d", got, dailyCap)
		}
		if got := env.Balance(t, alice.AccountID, "BTC"); got != 2000 {
			t.Errorf("recipient balance %d, want 2000", got)
		}
		env.Reconcile(t)
	})
}

// TestSendDailyUSDCapNeedsAFreshPrice: without a fresh price a capped key
// cannot send (D36 fails closed): 503 price_unavailable with Retry-After,
// nothing paid, nothing spent, the idempotency key left free. Uncapped keys
// are not priced and send as usual.
func TestSendDailyUSDCapNeedsAFreshPrice(t *testing.T) {
	t.Parallel()
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"bitcoin":{"usd":50000}}`)
	}))
	t.Cleanup(feedSrv.Close)

	type setup struct {
		env *apptest.Env
		// freshen makes a price available again; nil when it cannot.
		freshen func(t *testing.T)
	}
	sources := []struct {
		name string
		open func(t *testing.T, st store.Store) setup
	}{
		{"source without prices", func(t *testing.T, st store.Store) setup {
			return setup{env: sendEnv(t, st, noPrices{})}
		}},
		{"static table without the coin", func(t *testing.T, st store.Store) setup {
			table := map[string]decimal.Decimal{"DOGE": decimal.RequireFromString("0.15")}
			return setup{env: sendEnv(t, st, price.Static(table, "file", nil))}
		}},
		{"feed never polled", func(t *testing.T, st store.Store) setup {
			var feed *price.Feed
			env := sendEnvOnClock(t, st, func(now func() time.Time) price.Source {
				feed = price.NewFeed(price.FeedConfig{URL: feedSrv.URL + "/simple/price", Now: now, Client: feedSrv.Client()})
				return feed
			})
			return setup{env: env, freshen: func(t *testing.T) {
				if err := feed.Poll(context.Background()); err != nil {
					t.Fatalf("poll: %v", err)
				}
			}}
		}},
		{"feed gone stale", func(t *testing.T, st store.Store) setup {
			var feed *price.Feed
			env := sendEnvOnClock(t, st, func(now func() time.Time) price.Source {
				feed = price.NewFeed(price.FeedConfig{URL: feedSrv.URL + "/simple/price", Now: now, Client: feedSrv.Client()})
				return feed
			})
			if err := feed.Poll(context.Background()); err != nil {
				t.Fatalf("poll: %v", err)
			}
			env.Clock.Advance(10*time.Minute + time.Second) // past the default maximum age (D60)
			return setup{env: env, freshen: func(t *testing.T) {
				if err := feed.Poll(context.Background()); err != nil {
					t.Fatalf("poll: %v", err)
				}
			}}
		}},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
				s := src.open(t, eng.Open(t))
				env := s.env
				f, _ := env.Faucet(t, map[string]int64{"BTC": 100_000})
				alice := env.User(t, "alice")
				k, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})
				_, uncapped := mintKey(t, env, key.MintParams{FaucetID: f.ID})
				body := sendBody{IdempotencyKey: "priced", To: "alice", Amount: 1000, Currency: "BTC"}

				for range 2 {
					r := env.V2(t, secret, "/send", body)
					wantError(t, r, http.StatusServiceUnavailable, "price_unavailable")
					wantV1Status(t, r, nil)
					retryAfter(t, r)
				}
				if got := env.Balance(t, alice.AccountID, "BTC"); got != 0 {
					t.Errorf("recipient balance %d, want 0 (nothing paid)", got)
				}
				if got := env.Balance(t, f.AccountID, "BTC"); got != 100_000 {
					t.Errorf("faucet balance %d, want 100000", got)
				}
				if list := payouts(t, env, f); len(list) != 0 {
					t.Errorf("faucet has payouts %+v, want none", list)
				}
				if got := keySpend(t, env, k); got != 0 {
					t.Errorf("spend %d micros, want 0", got)
				}
				wantPaid(t, env.V2(t, uncapped, "/send", sendBody{IdempotencyKey: "free", To: "alice", Amount: 700, Currency: "BTC"}), false)

				if s.freshen != nil {
					s.freshen(t)
					d := wantPaid(t, env.V2(t, secret, "/send", body), false)
					if d.Balance != 100_000-700-1000 {
						t.Errorf("balance %d, want %d", d.Balance, 100_000-700-1000)
					}
					if got := keySpend(t, env, k); got != 500_000 {
						t.Errorf("spend %d micros, want 500000 (1000 sat at $50,000)", got)
					}
				}
				env.Reconcile(t)
			})
		})
	}
}

// TestSendDailyUSDCapConcurrent: 20 capped sends at once with a cap that
// allows 7 pay exactly 7; the others are 429 and the spend is exactly the
// cap (counted in the payout's transaction, D36).
func TestSendDailyUSDCapConcurrent(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const senders, allowed, amount = 20, 7, 250 // 250 sat = $0.125
		env := sendEnv(t, eng.Open(t), btcAt("50000"))
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		users := []*drip.User{env.User(t, "alice"), env.User(t, "bob")}
		k, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: allowed * 125_000})
		_, other := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		reqs := make([]sendRequest, 0, senders+10)
		for i := range senders {
			reqs = append(reqs, sendRequest{Key: secret, Body: sendBody{IdempotencyKey: fmt.Sprint("capped-", i),
				To: users[i%2].Username, Amount: amount, Currency: "BTC"}})
		}
		// Uncapped sends of the same faucet in the same batches.
		for i := range 10 {
			reqs = append(reqs, sendRequest{Key: other, Body: sendBody{IdempotencyKey: fmt.Sprint("free-", i),
				To: users[i%2].Username, Amount: amount, Currency: "BTC"}})
		}

		replies := sendAtOnce(t, []string{env.Server.URL}, reqs)

		want := map[string]int{"200": allowed + 10, "429 daily_usd_cap_reached": senders - allowed}
		if diff := cmp.Diff(want, outcomes(replies)); diff != "" {
			t.Errorf("outcomes (-want +got):\n%s", diff)
		}
		if got := keySpend(t, env, k); got != allowed*125_000 {
			t.Errorf("spend %d micros, want %d", got, allowed*125_000)
		}
		var credited int64
		for _, u := range users {
			credited += env.Balance(t, u.AccountID, "BTC")
		}
		if want := int64(allowed+10) * amount; credited != want {
			t.Errorf("recipients got %d, want %d", credited, want)
		}
		if got, want := env.Balance(t, f.AccountID, "BTC"), 1_000_000-int64(allowed+10)*amount; got != want {
			t.Errorf("faucet balance %d, want %d", got, want)
		}
		if list := payouts(t, env, f); len(list) != allowed+10 {
			t.Errorf("faucet has %d payouts, want %d", len(list), allowed+10)
		}
		// Capped payments go one by one and uncapped ones as a batch (D5),
		// in the same transactions: still each paid reply saw its own
		// balance, one after another.
		var balances, wantBalances []int64
		for _, r := range replies {
			if r.HTTPStatus == http.StatusOK {
				balances = append(balances, r.Data.Balance)
			}
		}
		final := env.Balance(t, f.AccountID, "BTC")
		for i := range int64(allowed + 10) {
			wantBalances = append(wantBalances, final+i*amount)
		}
		slices.Sort(balances)
		if diff := cmp.Diff(wantBalances, balances); diff != "" {
			t.Errorf("balances of the paid replies (-want +got):\n%s", diff)
		}
		env.Reconcile(t)
	})
}

// TestSendReplayNeedsNoFreshPrice: a retry of a capped key's paid send
// replays even when no fresh price is left (D35: a replay pays nothing, so
// it is not priced against the cap), while a new send fails closed (D36).
func TestSendReplayNeedsNoFreshPrice(t *testing.T) {
	feedSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"bitcoin":{"usd":"50000"}}`)
	}))
	t.Cleanup(feedSrv.Close)
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		var feed *price.Feed
		env := sendEnvOnClock(t, eng.Open(t), func(now func() time.Time) price.Source {
			feed = price.NewFeed(price.FeedConfig{URL: feedSrv.URL, Now: now, Client: feedSrv.Client()})
			return feed
		})
		if err := feed.Poll(context.Background()); err != nil {
			t.Fatalf("poll: %v", err)
		}
		f, _ := env.Faucet(t, map[string]int64{"BTC": 100_000})
		env.User(t, "alice")
		k, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: dailyCap})
		body := sendBody{IdempotencyKey: "priced-then-stale", To: "alice", Amount: 1000, Currency: "BTC"}
		orig := wantPaid(t, env.V2(t, secret, "/send", body), false)

		env.Clock.Advance(11 * time.Minute) // older than the feed's maximum age (D60)
		if got := wantPaid(t, env.V2(t, secret, "/send", body), true); got != orig {
			t.Errorf("replay %+v, want %+v", got, orig)
		}
		wantError(t, env.V2(t, secret, "/send", sendBody{IdempotencyKey: "new", To: "alice", Amount: 1, Currency: "BTC"}),
			http.StatusServiceUnavailable, "price_unavailable")
		if got := keySpend(t, env, k); got != 500_000 {
			t.Errorf("spend %d micros, want 500000 (the one payout)", got)
		}
		env.Reconcile(t)
	})
}

// TestSendIdempotentDuplicateAcrossNodesIsNotRefused: when two nodes pay
// one key at once and the first payout takes the balance (or the daily
// cap) the duplicate would need, the duplicate is not refused: it answers
// the first payout's reply, replayed, and records no payout.failed event
// for a payout that was paid (D35).
func TestSendIdempotentDuplicateAcrossNodesIsNotRefused(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		const rounds, amount = 12, 1000
		st := eng.Open(t)
		prices := func(now func() time.Time) price.Source {
			return price.Static(map[string]decimal.Decimal{"BTC": decimal.NewFromInt(50_000)}, "static", now)
		}
		env := sendEnvOnClock(t, st, prices)
		node2 := sendEnvOnClock(t, st, prices)
		env.User(t, "alice")
		for round := range rounds {
			// Odd rounds: balance for one payout. Even rounds: ample balance,
			// a key whose daily cap pays one ($0.50 a payout, cap $0.50).
			funds, capMicros := int64(amount), int64(0)
			if round%2 == 0 {
				funds, capMicros = 100*amount, 500_000
			}
			f, _ := env.Faucet(t, map[string]int64{"BTC": funds})
			_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID, DailyUSDCapMicros: capMicros})
			body := sendBody{IdempotencyKey: "once", To: "alice", Amount: amount, Currency: "BTC"}
			replies := sendAtOnce(t, []string{env.Server.URL, node2.Server.URL},
				[]sendRequest{{Server: 0, Key: secret, Body: body}, {Server: 1, Key: secret, Body: body}})
			if diff := cmp.Diff(map[string]int{"200": 2}, outcomes(replies)); diff != "" {
				t.Fatalf("round %d: outcomes (-want +got):\n%s", round, diff)
			}
			if replies[0].Data.PayoutID != replies[1].Data.PayoutID || replies[0].Replayed == replies[1].Replayed {
				t.Errorf("round %d: payout ids %d and %d, replayed %v and %v; want one id, one replay",
					round, replies[0].Data.PayoutID, replies[1].Data.PayoutID, replies[0].Replayed, replies[1].Replayed)
			}
			events, err := st.EventList(context.Background(), f.ID, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range events {
				if ev.Type == drip.EventPayoutFailed {
					t.Errorf("round %d: a payout.failed event for the paid key: %s", round, ev.Data)
				}
			}
		}
		env.Reconcile(t)
	})
}

// TestSendRetryMayWriteTheSameRequestDifferently: a retry is recognised by
// what the request means, not its spelling: the amount "0100" is 100 and
// " alice " is alice, so they replay rather than count as a reuse (D35).
func TestSendRetryMayWriteTheSameRequestDifferently(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := sendEnv(t, eng.Open(t), nil)
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		env.User(t, "alice")
		_, secret := mintKey(t, env, key.MintParams{FaucetID: f.ID})
		first := env.V2(t, secret, "/send", sendBody{IdempotencyKey: "spelt", To: "alice", Amount: 100, Currency: "BTC", IPAddress: "203.0.113.7"})
		again := env.V2(t, secret, "/send", sendBody{IdempotencyKey: "spelt", To: " alice ", Amount: "0100", Currency: "BTC", IPAddress: " 203.0.113.7"})
		if first.HTTPStatus != 200 || again.HTTPStatus != 200 || again.Header.Get("Idempotent-Replayed") != "true" ||
			string(first.Envelope.Data) != string(again.Envelope.Data) {
			t.Errorf("first %d %s\nretry %d (replayed %q) %s", first.HTTPStatus, first.Raw, again.HTTPStatus,
				again.Header.Get("Idempotent-Replayed"), again.Raw)
		}
		env.Reconcile(t)
	})
}
