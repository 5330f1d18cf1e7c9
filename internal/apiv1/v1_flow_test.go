package apiv1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestConformanceDestination checks D11 on /send and /checkaddress: a
// destination names a user as a payout_user_hash (any case), an email (any
// case), a username, or a wallet address linked for that coin only, tried
// in that order.
func TestConformanceDestination(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		type dest struct {
			to, coin string
			user     *drip.User // nil: not payable (456)
			other    *drip.User // a user who must not be paid, or nil
		}
		tests := []struct {
			name    string
			prepare func(t *testing.T) dest
		}{
			{"email as registered", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				return dest{to: u.Email, coin: "BTC", user: u}
			}},
			{"email in upper case", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				return dest{to: strings.ToUpper(u.Email), coin: "BTC", user: u}
			}},
			{"email in mixed case", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				return dest{to: "Dst" + u.Email[3:len(u.Email)-len("example.com")] + "Example.COM", coin: "BTC", user: u}
			}},
			{"username", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				return dest{to: u.Username, coin: "BTC", user: u}
			}},
			{"payout_user_hash", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				return dest{to: u.PayoutUserHash, coin: "BTC", user: u}
			}},
			{"payout_user_hash in upper case", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				return dest{to: strings.ToUpper(u.PayoutUserHash), coin: "BTC", user: u}
			}},
			{"address linked for the coin", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				linkAddress(t, env, u, "BTC", "bc1q"+u.Username+"x")
				return dest{to: "bc1q" + u.Username + "x", coin: "BTC", user: u}
			}},
			{"address linked for another coin is not payable", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				linkAddress(t, env, u, "BTC", "bc1q"+u.Username+"y")
				return dest{to: "bc1q" + u.Username + "y", coin: "DOGE", other: u}
			}},
			{"each coin's own linked address", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				v := newUser(t, env, "dst")
				addr := "shared" + u.Username
				linkAddress(t, env, u, "BTC", addr)
				linkAddress(t, env, v, "DOGE", addr)
				return dest{to: addr, coin: "DOGE", user: v, other: u}
			}},
			{"payout_user_hash before a linked address", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				v := newUser(t, env, "dst")
				linkAddress(t, env, v, "BTC", u.PayoutUserHash)
				return dest{to: u.PayoutUserHash, coin: "BTC", user: u, other: v}
			}},
			{"username before a linked address", func(t *testing.T) dest {
				u := newUser(t, env, "dst")
				v := newUser(t, env, "dst")
				linkAddress(t, env, v, "BTC", u.Username)
				return dest{to: u.Username, coin: "BTC", user: u, other: v}
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				s := newScene(t, env, map[string]int64{"BTC": 1000, "DOGE": 1000})
				d := tt.prepare(t)
				var otherBefore []drip.Balance
				if d.other != nil {
					otherBefore = s.balances(t, d.other.AccountID)
				}

				c := s.post(t, "/checkaddress", "address", d.to, "currency", d.coin)
				r := s.post(t, "/send", "to", d.to, "amount", "123", "currency", d.coin)
				if d.user == nil {
					checkError(t, c, 456)
					checkError(t, r, 456)
					if b := env.Balance(t, s.f.AccountID, d.coin); b != 1000 {
						t.Errorf("faucet %s balance %d, want 1000 (nothing paid)", d.coin, b)
					}
				} else {
					checkOK(t, c, checkAddressShape)
					checkOK(t, r, sendShape)
					for _, reply := range []*apptest.Reply{c, r} {
						if got := stringMember(t, reply.Body, "payout_user_hash"); got != d.user.PayoutUserHash {
							t.Errorf("payout_user_hash %q, want %s's %q", got, d.user.Username, d.user.PayoutUserHash)
						}
					}
					if b := env.Balance(t, d.user.AccountID, d.coin); b != 123 {
						t.Errorf("%s's %s balance %d, want 123", d.user.Username, d.coin, b)
					}
				}
				if d.other != nil {
					if diff := cmp.Diff(otherBefore, s.balances(t, d.other.AccountID)); diff != "" {
						t.Errorf("%s was paid (-before +after):\n%s", d.other.Username, diff)
					}
				}
			})
		}
	})
}

// TestConformanceKeyRotation checks D13 and spec 5 v1.4: after RotateKey
// the old and the new key both work; after ConfirmRotation the old key is
// refused (403) at once and the new one works.
func TestConformanceKeyRotation(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		ctx := context.Background()
		s := newScene(t, env, map[string]int64{"BTC": 1000})
		to := newUser(t, env, "rot")
		oldKey := s.key
		newKey, err := env.App.Faucets.RotateKey(ctx, s.f.ID)
		if err != nil {
			t.Fatalf("rotate: %v", err)
		}
		if newKey == oldKey || len(newKey) < 40 {
			t.Fatalf("new key %q: want a fresh key of 40+ characters (D13)", newKey)
		}
		as := func(key string) *scene { return &scene{env: env, f: s.f, key: key} }

		// Pending: both keys are the faucet's.
		for name, key := range map[string]string{"old": oldKey, "new": newKey} {
			r := as(key).post(t, "/getbalance", "currency", "BTC")
			checkOK(t, r, balanceShape)
			if b := intMember(t, r.Body, "balance"); b != 1000 {
				t.Errorf("pending rotation, %s key: balance %d, want 1000", name, b)
			}
		}
		as(oldKey).send(t, 200, "to", to.Username, "amount", "10", "currency", "BTC")
		as(newKey).send(t, 200, "to", to.Username, "amount", "20", "currency", "BTC")

		if err := env.App.Faucets.ConfirmRotation(ctx, s.f.ID); err != nil {
			t.Fatalf("confirm: %v", err)
		}
		// Confirmed: the old key is dead the same moment, on every endpoint.
		before := s.balances(t, s.f.AccountID)
		checkError(t, as(oldKey).post(t, "/send", "to", to.Username, "amount", "30", "currency", "BTC"), 403)
		checkError(t, as(oldKey).post(t, "/getbalance", "currency", "BTC"), 403)
		checkError(t, as(oldKey).post(t, "/currencies"), 403)
		if diff := cmp.Diff(before, s.balances(t, s.f.AccountID)); diff != "" {
			t.Errorf("old key moved money (-before +after):\n%s", diff)
		}
		r := as(newKey).send(t, 200, "to", to.Username, "amount", "40", "currency", "BTC")
		if b := intMember(t, r.Body, "balance"); b != 930 {
			t.Errorf("balance after rotation %d, want 930", b)
		}
		// The payouts made with either key are the faucet's.
		rewards := decodeRewards(t, as(newKey).post(t, "/payouts"))
		var amounts []int64
		for _, rw := range rewards {
			amounts = append(amounts, rw.Amount)
		}
		if diff := cmp.Diff([]int64{40, 20, 10}, amounts); diff != "" {
			t.Errorf("payout amounts (-want +got):\n%s", diff)
		}
		if b := env.Balance(t, to.AccountID, "BTC"); b != 70 {
			t.Errorf("recipient balance %d, want 70", b)
		}
	})
}

// TestConformanceEvents checks the outbox events (D50, D51, spec 2.8):
// after a paid and a refused send the faucet's events are one payout.sent
// and one payout.failed with the D51 data members, written at the clock's
// time.
func TestConformanceEvents(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{}) // nothing moves this env's clock
		sentShape := map[string]string{
			"to": "string", "amount": "number", "currency": "string",
			"payout_id": "string", "payout_user_hash": "string", "message": "string",
		}
		failedShape := map[string]string{
			"to": "string", "amount": "number", "currency": "string",
			"status": "number", "error": "string", "message": "string",
		}
		tests := []struct {
			name    string
			prepare func(t *testing.T, s *scene) request
			status  int
			code    drip.Code
			amount  int64 // the amount in the failed data; -1: not checked
		}{
			{"recipient not payable", func(t *testing.T, s *scene) request {
				return sendTo("nobody_evt", "25", "BTC")
			}, 456, drip.CodeRecipientUnknown, 25},
			{"invalid currency", func(t *testing.T, s *scene) request {
				return sendTo(newUser(t, s.env, "evt").Username, "25", "XYZ")
			}, 410, drip.CodeInvalidCurrency, -1},
			{"invalid amount", func(t *testing.T, s *scene) request {
				return sendTo(newUser(t, s.env, "evt").Username, "2.5", "BTC")
			}, 405, drip.CodeInvalidAmount, -1},
			{"recipient refused", func(t *testing.T, s *scene) request {
				u := newUser(t, s.env, "evt")
				setRules(t, s, blacklist(u.Email))
				return sendTo(u.Username, "25", "BTC")
			}, 457, drip.CodeRecipientRefused, 25},
			{"send limit", func(t *testing.T, s *scene) request {
				setLimits(t, s, drip.Limit{Per: drip.PerFaucet, WindowSeconds: 60, MaxCount: 1})
				return sendTo(newUser(t, s.env, "evt").Username, "25", "BTC")
			}, 450, drip.CodeSendLimit, 25},
			{"claimer IP limit", func(t *testing.T, s *scene) request {
				setLimits(t, s, drip.Limit{Per: drip.PerIP, WindowSeconds: 60, MaxCount: 1})
				return sendTo(newUser(t, s.env, "evt").Username, "25", "BTC", "ip_address", "203.0.113.1")
			}, 459, drip.CodeClaimerRateLimit, 25},
			{"insufficient balance", func(t *testing.T, s *scene) request {
				return sendTo(newUser(t, s.env, "evt").Username, "5000", "BTC")
			}, 402, drip.CodeInsufficientFunds, 5000},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := newScene(t, env, map[string]int64{"BTC": 1000})
				alice := newUser(t, env, "evta")
				paid := s.send(t, 200, "to", alice.Email, "amount", "100", "currency", "BTC", "ip_address", "203.0.113.1")
				req := tt.prepare(t, s)
				refused := s.do(t, req)
				checkError(t, refused, tt.status)

				events, err := env.App.Store.EventList(ctx, s.f.ID, 10)
				if err != nil {
					t.Fatalf("event list: %v", err)
				}
				byType := map[string]drip.Event{}
				for _, e := range events {
					if !strings.HasPrefix(e.ID, "evt_") || len(e.ID) <= len("evt_") {
						t.Errorf("event id %q, want evt_... (D51)", e.ID)
					}
					if !e.CreatedAt.Equal(env.Clock.Now()) {
						t.Errorf("%s created_at %v, want the clock's %v", e.Type, e.CreatedAt, env.Clock.Now())
					}
					if e.FaucetID != s.f.ID {
						t.Errorf("%s faucet_id %d, want %d", e.Type, e.FaucetID, s.f.ID)
					}
					byType[e.Type] = e
				}
				if len(events) != 2 || len(byType) != 2 {
					t.Fatalf("%d events %v, want one payout.sent and one payout.failed", len(events), events)
				}

				sent := eventData(t, byType[drip.EventPayoutSent], sentShape)
				wantSent := map[string]any{
					"to": alice.Email, "amount": json.Number("100"), "currency": "BTC",
					"payout_id":        string(paid.Body["payout_id"]),
					"payout_user_hash": alice.PayoutUserHash,
					"message":          stringMember(t, paid.Body, "message"),
				}
				if diff := cmp.Diff(wantSent, sent); diff != "" {
					t.Errorf("payout.sent data (-want +got):\n%s", diff)
				}

				failed := eventData(t, byType[drip.EventPayoutFailed], failedShape)
				wantFailed := map[string]any{
					"to": req.Form.Get("to"), "amount": failed["amount"], "currency": req.Form.Get("currency"),
					"status":  json.Number(fmt.Sprint(tt.status)),
					"error":   string(tt.code),
					"message": stringMember(t, refused.Body, "message"),
				}
				if tt.amount >= 0 {
					wantFailed["amount"] = json.Number(fmt.Sprint(tt.amount))
				}
				if diff := cmp.Diff(wantFailed, failed); diff != "" {
					t.Errorf("payout.failed data (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// bodyEncoding writes a v1 request body one way (D20).
type bodyEncoding struct {
	name   string
	encode func(t testing.TB, fields map[string]any) (contentType, body string)
}

var bodyEncodings = []bodyEncoding{
	{"form", func(t testing.TB, fields map[string]any) (string, string) {
		return "application/x-www-form-urlencoded", formBody(fields)
	}},
	{"form with charset", func(t testing.TB, fields map[string]any) (string, string) {
		return "application/x-www-form-urlencoded; charset=UTF-8", formBody(fields)
	}},
	{"form without Content-Type", func(t testing.TB, fields map[string]any) (string, string) {
		return "", formBody(fields)
	}},
	{"multipart", func(t testing.TB, fields map[string]any) (string, string) {
		var pairs []string
		for k, v := range fields {
			pairs = append(pairs, k, fmt.Sprint(v))
		}
		body, contentType := multipartBody(t, pairs...)
		return contentType, body
	}},
	{"JSON with numbers and booleans", func(t testing.TB, fields map[string]any) (string, string) {
		b, err := json.Marshal(fields)
		if err != nil {
			t.Fatal(err)
		}
		return "application/json", string(b)
	}},
	{"JSON with strings only", func(t testing.TB, fields map[string]any) (string, string) {
		strs := map[string]string{}
		for k, v := range fields {
			strs[k] = fmt.Sprint(v)
		}
		b, err := json.Marshal(strs)
		if err != nil {
			t.Fatal(err)
		}
		return "application/json; charset=utf-8", string(b)
	}},
}

// TestConformanceBodies checks D20 and D27: form, multipart and JSON
// bodies are read alike on every endpoint, unknown members are ignored,
// and a JSON amount may be a number or a string but must be a whole
// number written as one.
func TestConformanceBodies(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		for _, enc := range bodyEncodings {
			t.Run(enc.name, func(t *testing.T) {
				t.Parallel()
				s := newScene(t, env, map[string]int64{"BTC": 1000})
				alice := newUser(t, env, "body")
				post := func(t *testing.T, path string, fields map[string]any) *apptest.Reply {
					t.Helper()
					fields["api_key"] = s.key
					fields["unknown_member"] = "ignored (D20)"
					ct, body := enc.encode(t, fields)
					return env.Do(t, http.MethodPost, path, ct, body)
				}

				r := post(t, "/send", map[string]any{"to": alice.Username, "amount": 100, "currency": "BTC", "referral": true, "ip_address": "203.0.113.4"})
				checkOK(t, r, sendShape)
				if b := intMember(t, r.Body, "balance"); b != 900 {
					t.Errorf("/send balance %d, want 900", b)
				}
				if b := env.Balance(t, alice.AccountID, "BTC"); b != 100 {
					t.Errorf("recipient balance %d, want 100", b)
				}

				r = post(t, "/getbalance", map[string]any{"currency": "BTC"})
				checkOK(t, r, balanceShape)
				if b := intMember(t, r.Body, "balance"); b != 900 {
					t.Errorf("/getbalance balance %d, want 900", b)
				}

				r = post(t, "/checkaddress", map[string]any{"address": alice.Email, "currency": "BTC"})
				checkOK(t, r, checkAddressShape)
				if h := stringMember(t, r.Body, "payout_user_hash"); h != alice.PayoutUserHash {
					t.Errorf("/checkaddress payout_user_hash %q, want %q", h, alice.PayoutUserHash)
				}

				post(t, "/send", map[string]any{"to": alice.Email, "amount": "200", "currency": "BTC"})
				got := decodeRewards(t, post(t, "/payouts", map[string]any{"count": 1, "currency": "BTC"}))
				if diff := cmp.Diff([]reward{{alice.Email, 200, "14-03-26 15:09:26 GMT"}}, got); diff != "" {
					t.Errorf("/payouts (-want +got):\n%s", diff)
				}

				r = post(t, "/currencies", map[string]any{})
				checkOK(t, r, currenciesShape)

				// The amount rules hold whatever the encoding (D22, D27).
				for _, amount := range []any{json.Number("1.5"), json.Number("1e3"), json.Number("-1"), json.Number("0"), "1.5", ""} {
					before := s.balances(t, s.f.AccountID)
					r := post(t, "/send", map[string]any{"to": alice.Username, "amount": amount, "currency": "BTC"})
					checkError(t, r, 405)
					if diff := cmp.Diff(before, s.balances(t, s.f.AccountID)); diff != "" {
						t.Errorf("amount %v moved money (-before +after):\n%s", amount, diff)
					}
				}
				// A wrong key is refused whatever the encoding.
				ct, body := enc.encode(t, map[string]any{"api_key": faucet.NewKey(), "currency": "BTC"})
				checkError(t, env.Do(t, http.MethodPost, "/getbalance", ct, body), 403)
			})
		}
	})
}
