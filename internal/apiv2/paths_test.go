// Conformance tests of every v2 path (spec 2.2, 4.2, 5 v2, 7.2, 8; DESIGN
// D14, D32-D44). They drive the real server over HTTP, through apptest, on
// every engine storetest.Engines gives.
//
// This file holds the scope matrix, the success reply of every path field
// by field, and the refusals each path documents (400, 401, 403, 404, 405,
// 409). input_test.go covers bodies no client should send; the helpers are
// those of helpers_test.go.
package apiv2_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
)

// TestV2ScopeMatrix: a key with only one scope reaches exactly the paths of
// that scope (spec 4.2, 5 v2.2, D14); every other path answers 403
// insufficient_scope, and a refused call changes nothing.
func TestV2ScopeMatrix(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
			t.Fatal(err)
		}
		keys := map[drip.Scope]string{drip.ScopeRead: fx.read, drip.ScopeSend: fx.send,
			drip.ScopeManage: fx.mng, drip.ScopeAdmin: fx.admin}
		t.Run("paths", func(t *testing.T) {
			for _, p := range routes {
				t.Run(strings.TrimPrefix(p.path, "/"), func(t *testing.T) {
					t.Parallel()
					for _, scope := range drip.Scopes {
						r := env.V2(t, keys[scope], p.path, validBody(p.path))
						if scope == p.scope {
							if r.HTTPStatus != http.StatusOK || !r.Envelope.Success {
								t.Errorf("%s key: HTTP %d, want 200: %s", scope, r.HTTPStatus, r.Raw)
							}
							continue
						}
						if r.HTTPStatus != http.StatusForbidden || r.Code() != "insufficient_scope" {
							t.Errorf("%s key: HTTP %d %q, want 403 insufficient_scope: %s", scope, r.HTTPStatus, r.Code(), r.Raw)
						}
					}
				})
			}
		})
		// Money moved exactly once per path that moves it: one payout by
		// /send and one by /send/batch, one listing fee; and one faucet was
		// created, not four.
		if got, want := env.Balance(t, fx.f.AccountID, "BTC"), int64(1_000_000-1000-1000-1000); got != want {
			t.Errorf("faucet BTC balance %d, want %d", got, want)
		}
		if got := len(payouts(t, env, fx.f)); got != 2 {
			t.Errorf("%d payouts, want 2", got)
		}
		if got := len(ownerFaucets(t, env, fx.f)); got != 2 {
			t.Errorf("owner has %d faucets, want 2", got)
		}
	})
}

// TestV2ScopesAreNotRanked: no scope implies another; a key holding every
// scope but the path's is refused too (D14).
func TestV2ScopesAreNotRanked(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		env.User(t, "bob")
		for _, p := range routes {
			var others []drip.Scope
			for _, s := range drip.Scopes {
				if s != p.scope {
					others = append(others, s)
				}
			}
			r := env.V2(t, env.Key(t, f, others...), p.path, validBody(p.path))
			if r.HTTPStatus != http.StatusForbidden || r.Code() != "insufficient_scope" {
				t.Errorf("%s with %v: HTTP %d %q, want 403 insufficient_scope", p.path, others, r.HTTPStatus, r.Code())
			}
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000", got)
		}
	})
}

// TestV2Balance: /balance is one coin's balance, exact in units and coins (D1).
func TestV2Balance(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_234_567, "DOGE": 5})
		for _, c := range []struct {
			name string
			body any
			want string
		}{
			{"a deposited coin", map[string]any{"currency": "BTC"}, `{"currency":"BTC","balance":1234567,"balance_bitcoin":0.01234567}`},
			{"a single unit", map[string]any{"currency": "DOGE"}, `{"currency":"DOGE","balance":5,"balance_bitcoin":0.00000005}`},
			{"a coin never held", map[string]any{"currency": "ETH"}, `{"currency":"ETH","balance":0,"balance_bitcoin":0}`},
			{"no currency: BTC when the faucet selected none", nil, `{"currency":"BTC","balance":1234567,"balance_bitcoin":0.01234567}`},
		} {
			t.Run(c.name, func(t *testing.T) { wantData(t, env.V2(t, fx.read, "/balance", c.body), c.want) })
		}
		t.Run("after a payout", func(t *testing.T) {
			pay(t, env, fx.send, "bob", 234_567, "BTC")
			wantData(t, env.V2(t, fx.read, "/balance", map[string]any{"currency": "BTC"}),
				`{"currency":"BTC","balance":1000000,"balance_bitcoin":0.01}`)
		})
		t.Run("refusals", func(t *testing.T) {
			wantError(t, env.V2(t, fx.read, "/balance", map[string]any{"currency": "XYZ"}), 400, "invalid_currency")
			wantError(t, env.V2(t, fx.read, "/balance", map[string]any{"currency": "xyz"}), 400, "invalid_currency")
		})
		t.Run("a symbol in lower case is the coin, answered in upper case (D28)", func(t *testing.T) {
			wantData(t, env.V2(t, fx.read, "/balance", map[string]any{"currency": "btc"}),
				`{"currency":"BTC","balance":1000000,"balance_bitcoin":0.01}`)
		})
	})
}

// TestV2Balances: /balances lists every active coin in display order, zeros
// included, and leaves a disabled coin out.
func TestV2Balances(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 250_000_000})
		if err := env.App.Coins.SetActive(context.Background(), "XRP", false); err != nil {
			t.Fatal(err)
		}
		wantData(t, env.V2(t, fx.read, "/balances", nil), `{"balances":[
			{"currency":"BTC","balance":1000000,"balance_bitcoin":0.01},
			{"currency":"ETH","balance":0,"balance_bitcoin":0},
			{"currency":"DOGE","balance":250000000,"balance_bitcoin":2.5},
			{"currency":"LTC","balance":0,"balance_bitcoin":0},
			{"currency":"BCH","balance":0,"balance_bitcoin":0},
			{"currency":"DASH","balance":0,"balance_bitcoin":0},
			{"currency":"DGB","balance":0,"balance_bitcoin":0},
			{"currency":"TRX","balance":0,"balance_bitcoin":0},
			{"currency":"USDT","balance":0,"balance_bitcoin":0},
			{"currency":"BNB","balance":0,"balance_bitcoin":0},
			{"currency":"SOL","balance":0,"balance_bitcoin":0}]}`)
	})
}

// activeCoins are the built-in coins and names, in display order.
var activeCoins = []struct{ symbol, name string }{
	{"BTC", "Bitcoin"}, {"ETH", "Ethereum"}, {"DOGE", "Dogecoin"}, {"LTC", "Litecoin"},
	{"BCH", "Bitcoin Cash"}, {"DASH", "Dash"}, {"DGB", "DigiByte"}, {"TRX", "Tron"},
	{"USDT", "Tether"}, {"BNB", "Binance Coin"}, {"SOL", "Solana"}, {"XRP", "Ripple"},
}

// TestV2Currencies: /currencies carries each active coin's minimum payout,
// whether the faucet selected it, and the owner's limits that count it.
func TestV2Currencies(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		btcLimit := map[string]any{"currency": "BTC", "per": "recipient", "window_seconds": 3600, "max_count": 10, "max_amount": nil}
		anyLimit := map[string]any{"currency": nil, "per": "ip", "window_seconds": 60, "max_count": nil, "max_amount": 5000}
		wantOK(t, env.V2(t, fx.mng, "/ratelimits/set", map[string]any{"ratelimits": []any{
			map[string]any{"currency": "BTC", "per": "recipient", "window_seconds": 3600, "max_count": 10},
			map[string]any{"per": "ip", "window_seconds": 60, "max_amount": 5000},
		}}))
		update := validBody("/faucet/update").(map[string]any)
		update["currencies_selected"] = []string{"DOGE", "LTC"}
		wantOK(t, env.V2(t, fx.mng, "/faucet/update", update))

		var want []any
		for _, c := range activeCoins {
			limits := []any{anyLimit}
			if c.symbol == "BTC" {
				limits = []any{btcLimit, anyLimit}
			}
			want = append(want, map[string]any{"currency": c.symbol, "name": c.name, "minimum_payout": 1,
				"minimum_payout_bitcoin": json.Number("0.00000001"),
				"selected":               c.symbol == "DOGE" || c.symbol == "LTC", "ratelimits": limits})
		}
		wantData(t, env.V2(t, fx.read, "/currencies", nil), jsonText(t, map[string]any{"currencies": want}))
	})
}

// TestV2CheckAddress: /check-address resolves every kind of destination
// (D11) to the recipient's payout_user_hash.
func TestV2CheckAddress(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		if err := env.App.Users.LinkAddress(ctx, fx.bob, "DOGE", "DBobWalletAddress1"); err != nil {
			t.Fatal(err)
		}
		hash := fx.bob.PayoutUserHash
		for _, c := range []struct {
			name string
			body map[string]any
			want string
		}{
			{"username", map[string]any{"address": "bob"}, `{"address":"bob","currency":"BTC","payout_user_hash":"` + hash + `"}`},
			{"email", map[string]any{"address": "bob@example.com", "currency": "ETH"}, `{"address":"bob@example.com","currency":"ETH","payout_user_hash":"` + hash + `"}`},
			{"payout_user_hash", map[string]any{"address": hash}, `{"address":"` + hash + `","currency":"BTC","payout_user_hash":"` + hash + `"}`},
			{"linked wallet address", map[string]any{"address": "DBobWalletAddress1", "currency": "DOGE"}, `{"address":"DBobWalletAddress1","currency":"DOGE","payout_user_hash":"` + hash + `"}`},
			{"linked wallet address, its coin in lower case", map[string]any{"address": "DBobWalletAddress1", "currency": "doge"}, `{"address":"DBobWalletAddress1","currency":"DOGE","payout_user_hash":"` + hash + `"}`},
			// Without a currency a wallet address is found in whichever
			// coin it is linked for, and the answer names it (issue 14).
			{"wallet address without a currency", map[string]any{"address": "DBobWalletAddress1"}, `{"address":"DBobWalletAddress1","currency":"DOGE","payout_user_hash":"` + hash + `"}`},
		} {
			t.Run(c.name, func(t *testing.T) { wantData(t, env.V2(t, fx.read, "/check-address", c.body), c.want) })
		}
		t.Run("refusals", func(t *testing.T) {
			wantError(t, env.V2(t, fx.read, "/check-address", map[string]any{"address": "DBobWalletAddress1", "currency": "BTC"}), 400, "recipient_not_payable")
			// One string linked by two users, each for another coin.
			carol := env.User(t, "carol")
			if err := env.App.Users.LinkAddress(ctx, carol, "LTC", "DBobWalletAddress1"); err != nil {
				t.Fatal(err)
			}
			wantError(t, env.V2(t, fx.read, "/check-address", map[string]any{"address": "DBobWalletAddress1"}), 400, "invalid")
			wantData(t, env.V2(t, fx.read, "/check-address", map[string]any{"address": "DBobWalletAddress1", "currency": "LTC"}),
				`{"address":"DBobWalletAddress1","currency":"LTC","payout_user_hash":"`+carol.PayoutUserHash+`"}`)
		})
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(hash) {
			t.Errorf("payout_user_hash %q is not 40 lowercase hex characters (D12)", hash)
		}
	})
}

// TestV2Payouts: /payouts lists payouts newest first, count 1-100 (spec 8),
// filtered to one coin when asked, by POST or by GET with a query (D33).
func TestV2Payouts(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
		env.User(t, "carol")
		var items []map[string]any // oldest first
		for _, p := range []struct {
			to           string
			amount       int64
			coin         string
			ip, referral string
		}{
			{"bob", 1000, "BTC", "203.0.113.7", "spring"},
			{"carol", 2000, "BTC", "", ""},
			{"bob@example.com", 300, "DOGE", "2001:db8::7", ""},
			{"carol", 4000, "BTC", "", "true"},
		} {
			body := freshSend(p.to, p.amount, p.coin)
			body.IPAddress, body.Referral = p.ip, p.referral // left out when ""
			id := wantPaid(t, env.V2(t, fx.send, "/send", body), false).PayoutID
			items = append(items, payoutItem(id, p.to, p.amount, p.coin, p.ip, p.referral, env.Clock.Now()))
			env.Clock.Advance(time.Minute)
		}
		newest := func(idx ...int) string {
			list := []any{}
			for _, i := range idx {
				list = append(list, items[i])
			}
			return jsonText(t, map[string]any{"payouts": list})
		}
		for _, c := range []struct {
			name   string
			method string
			path   string
			body   any
			want   string
		}{
			{"default count 10 covers all", "POST", "/payouts", nil, newest(3, 2, 1, 0)},
			{"count 2", "POST", "/payouts", map[string]any{"count": 2}, newest(3, 2)},
			{"count 1", "POST", "/payouts", map[string]any{"count": 1}, newest(3)},
			{"count 100", "POST", "/payouts", map[string]any{"count": 100}, newest(3, 2, 1, 0)},
			{"one coin", "POST", "/payouts", map[string]any{"currency": "BTC"}, newest(3, 1, 0)},
			{"one coin, count 1", "POST", "/payouts", map[string]any{"currency": "DOGE", "count": 1}, newest(2)},
			{"a coin without payouts", "POST", "/payouts", map[string]any{"currency": "ETH"}, newest()},
			{"GET with a query", "GET", "/payouts?count=2&currency=BTC", nil, newest(3, 1)},
			{"GET without a query", "GET", "/payouts", nil, newest(3, 2, 1, 0)},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantData(t, env.V2Do(t, c.method, fx.read, c.path, c.body, nil), c.want)
			})
		}
		t.Run("refusals", func(t *testing.T) {
			for _, c := range []struct {
				method, path string
				body         any
				code         string
			}{
				{"POST", "/payouts", map[string]any{"count": 0}, "invalid"},
				{"POST", "/payouts", map[string]any{"count": 101}, "invalid"},
				{"POST", "/payouts", map[string]any{"count": -1}, "invalid"},
				{"POST", "/payouts", map[string]any{"currency": "XYZ"}, "invalid_currency"},
				{"GET", "/payouts?count=0", nil, "invalid"},
				{"GET", "/payouts?count=101", nil, "invalid"},
				{"GET", "/payouts?count=two", nil, "invalid"},
				{"GET", "/payouts?currency=XYZ", nil, "invalid_currency"},
				{"GET", "/payouts?colour=red", nil, "invalid"},
			} {
				wantError(t, env.V2Do(t, c.method, fx.read, c.path, c.body, nil), 400, c.code)
			}
		})
	})
}

// TestV2StatsDaily: /stats/daily sums payouts per UTC day and coin over the
// last 30 days, newest day first; another faucet's payouts do not count.
func TestV2StatsDaily(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
		env.User(t, "carol")
		wantData(t, env.V2(t, fx.read, "/stats/daily", nil), `{"from":"2026-02-13","to":"2026-03-14","days":[]}`)

		// 2026-03-14
		pay(t, env, fx.send, "bob", 1000, "BTC")
		pay(t, env, fx.send, "bob", 2000, "BTC")
		pay(t, env, fx.send, "carol", 500, "BTC")
		pay(t, env, fx.send, "carol", 700, "DOGE")
		other, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		pay(t, env, env.Key(t, other, drip.ScopeSend), "bob", 9999, "BTC")
		env.Clock.Advance(24 * time.Hour) // 2026-03-15
		pay(t, env, fx.send, "bob", 400, "BTC")

		wantData(t, env.V2(t, fx.read, "/stats/daily", nil), `{"from":"2026-02-14","to":"2026-03-15","days":[
			{"date":"2026-03-15","currency":"BTC","payouts":1,"amount":400,"amount_bitcoin":0.000004,"unique_users":1},
			{"date":"2026-03-14","currency":"BTC","payouts":3,"amount":3500,"amount_bitcoin":0.000035,"unique_users":2},
			{"date":"2026-03-14","currency":"DOGE","payouts":1,"amount":700,"amount_bitcoin":0.000007,"unique_users":1}]}`)

		// 29 days on, 2026-03-14 falls out of the window; 2026-03-15 is its first day.
		env.Clock.Advance(29 * 24 * time.Hour)
		wantData(t, env.V2(t, fx.read, "/stats/daily", nil), `{"from":"2026-03-15","to":"2026-04-13","days":[
			{"date":"2026-03-15","currency":"BTC","payouts":1,"amount":400,"amount_bitcoin":0.000004,"unique_users":1}]}`)
	})
}

// TestV2StatsUsers: /stats/users pages recipients by their total, largest
// first, 50 a page (D37).
func TestV2StatsUsers(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 10_000_000, "DOGE": 1_000_000})
		start := env.Clock.Now()
		type stat struct {
			hash   string
			n      int
			amount int64
			last   time.Time
		}
		var stats []stat // recipient i was paid 1000+10i
		for i := 1; i <= 51; i++ {
			u := env.User(t, fmt.Sprintf("user%02d", i))
			amount := int64(1000 + 10*i)
			pay(t, env, fx.send, u.Username, amount, "BTC")
			stats = append(stats, stat{u.PayoutUserHash, 1, amount, start})
		}
		env.Clock.Advance(time.Minute)
		pay(t, env, fx.send, "user01", 5, "BTC") // user01: 2 payouts, 1015, still the smallest total
		stats[0] = stat{stats[0].hash, 2, 1015, env.Clock.Now()}
		pay(t, env, fx.send, "user07", 123, "DOGE")

		// Largest total first: user51 ... user01.
		slices.Reverse(stats)
		page := func(n int, from, to int) string {
			items := []any{}
			for _, s := range stats[from:to] {
				items = append(items, map[string]any{"payout_user_hash": s.hash, "payouts": s.n, "amount": s.amount,
					"amount_bitcoin": json.Number(drip.FormatCoins(s.amount)), "last_payout_at": stamp(s.last)})
			}
			return jsonText(t, map[string]any{"items": items, "page": n, "per_page": 50, "total": 51})
		}
		for _, c := range []struct {
			name string
			body any
			want string
		}{
			{"page 1 by default", map[string]any{"coin": "BTC"}, page(1, 0, 50)},
			{"page 1", map[string]any{"coin": "BTC", "page": 1}, page(1, 0, 50)},
			{"page 2 holds the 51st", map[string]any{"coin": "BTC", "page": 2}, page(2, 50, 51)},
			{"page 3 is empty", map[string]any{"coin": "BTC", "page": 3}, page(3, 51, 51)},
			{"another coin", map[string]any{"coin": "DOGE"}, `{"items":[{"payout_user_hash":"` + stats[44].hash +
				`","payouts":1,"amount":123,"amount_bitcoin":0.00000123,"last_payout_at":"` + stamp(env.Clock.Now()) + `"}],"page":1,"per_page":50,"total":1}`},
			{"a coin never paid", map[string]any{"coin": "ETH"}, `{"items":[],"page":1,"per_page":50,"total":0}`},
		} {
			t.Run(c.name, func(t *testing.T) { wantData(t, env.V2(t, fx.read, "/stats/users", c.body), c.want) })
		}
		t.Run("GET with a query", func(t *testing.T) {
			wantData(t, env.V2Do(t, "GET", fx.read, "/stats/users?coin=BTC&page=2", nil, nil), page(2, 50, 51))
		})
	})
}

// TestV2Transactions: /transactions pages the faucet's journal in one coin,
// newest first, money in positive and out negative, payouts with their id.
func TestV2Transactions(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 10})
		if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
			t.Fatal(err)
		}
		payoutID := pay(t, env, fx.send, "bob", 2500, "BTC")
		r := env.V2(t, fx.admin, "/faucet/request-approval", map[string]any{"coin": "BTC"})
		wantOK(t, r)
		var req struct {
			Listing struct {
				RequestID int64 `json:"request_id"`
			} `json:"listing"`
		}
		r.Data(t, &req)
		if _, err := env.App.Ledger.Deposit(ctx, fx.f, "BTC", 5000); err != nil {
			t.Fatal(err)
		}
		if _, err := env.App.Listing.Reject(ctx, req.Listing.RequestID); err != nil {
			t.Fatal(err)
		}
		at := stamp(env.Clock.Now())
		item := func(kind string, amount int64, payout any) map[string]any {
			return map[string]any{"type": kind, "currency": "BTC", "amount": amount,
				"amount_bitcoin": json.Number(drip.FormatCoins(amount)), "payout_id": payout, "created_at": at}
		}
		for _, c := range []struct {
			name   string
			method string
			path   string
			body   any
			want   any
		}{
			{"BTC", "POST", "/transactions", map[string]any{"coin": "BTC"}, map[string]any{"items": []any{
				item("listing_refund", 1000, nil),
				item("deposit", 5000, nil),
				item("listing_fee", -1000, nil),
				item("payout", -2500, payoutID),
				item("deposit", 1_000_000, nil),
			}, "page": 1, "per_page": 50, "total": 5}},
			{"DOGE", "GET", "/transactions?coin=DOGE&page=1", nil, map[string]any{"items": []any{
				map[string]any{"type": "deposit", "currency": "DOGE", "amount": 10, "amount_bitcoin": json.Number("0.0000001"),
					"payout_id": nil, "created_at": at},
			}, "page": 1, "per_page": 50, "total": 1}},
			{"page 2 is empty", "POST", "/transactions", map[string]any{"coin": "BTC", "page": 2},
				map[string]any{"items": []any{}, "page": 2, "per_page": 50, "total": 5}},
		} {
			t.Run(c.name, func(t *testing.T) {
				r := env.V2Do(t, c.method, fx.read, c.path, c.body, nil)
				wantOK(t, r)
				got := decodeJSON(t, string(r.Envelope.Data))
				ids := dropIDs(t, got.(map[string]any)["items"], "id")
				for i := 1; i < len(ids); i++ {
					if ids[i] >= ids[i-1] || ids[i] <= 0 {
						t.Errorf("ids %v: want positive and newest (largest) first", ids)
					}
				}
				if diff := cmp.Diff(decodeJSON(t, jsonText(t, c.want)), got); diff != "" {
					t.Errorf("data (-want +got):\n%s", diff)
				}
			})
		}
	})
}

// TestV2FaucetUpdateAndRecord: /faucet is the whole record (D38);
// /faucet/update sets every D38 field, normalizes name, domain and lists,
// and leaves absent lists as they were.
func TestV2FaucetUpdateAndRecord(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		want := newFaucetWant(t, fx.f, balanceJSON("BTC", 1_000_000))
		t.Run("a new faucet", func(t *testing.T) { wantData(t, env.V2(t, fx.read, "/faucet", nil), want.json(t)) })

		r := env.V2(t, fx.mng, "/faucet/update", map[string]any{
			"faucet_name": "  Moon Drops  ", "faucet_domain": "Moon.Example.ORG", "faucet_url": "https://moon.example.org/claim?ref=1",
			"faucet_description": "Claim every five minutes.", "timer_minutes": 5,
			"currencies_selected": []string{"DOGE", "BTC", "DOGE"}, "categories_selected": []string{"games", "bitcoin"},
		})
		want.name, want.domain, want.url, want.desc, want.timer = "Moon Drops", "moon.example.org", "https://moon.example.org/claim?ref=1", "Claim every five minutes.", 5
		want.currencies, want.categories = []string{"DOGE", "BTC"}, []string{"games", "bitcoin"}
		t.Run("the update's reply", func(t *testing.T) { wantData(t, r, want.json(t)) })
		t.Run("read back", func(t *testing.T) { wantData(t, env.V2(t, fx.read, "/faucet", nil), want.json(t)) })
		t.Run("balance defaults to the first selected coin", func(t *testing.T) {
			wantData(t, env.V2(t, fx.read, "/balance", nil), `{"currency":"DOGE","balance":0,"balance_bitcoin":0}`)
		})

		t.Run("absent lists stay, bounds accepted", func(t *testing.T) {
			name, desc := strings.Repeat("n", 64), strings.Repeat("é", 1000)
			r := env.V2(t, fx.mng, "/faucet/update", map[string]any{
				"faucet_name": name, "faucet_domain": "moon.example.org", "faucet_url": "http://moon.example.org",
				"faucet_description": desc, "timer_minutes": 1440,
			})
			w := want
			w.name, w.url, w.desc, w.timer = name, "http://moon.example.org", desc, 1440
			wantData(t, r, w.json(t))
			r = env.V2(t, fx.mng, "/faucet/update", map[string]any{
				"faucet_name": "x", "faucet_domain": "moon.example.org", "faucet_url": "https://moon.example.org/",
				"faucet_description": "", "timer_minutes": 1, "currencies_selected": []string{}, "categories_selected": []string{},
			})
			w.name, w.url, w.desc, w.timer, w.currencies, w.categories = "x", "https://moon.example.org/", "", 1, []string{}, []string{}
			wantData(t, r, w.json(t))
		})
	})
}

// TestV2RateLimits: /ratelimits reads the key's request rate (D40) and the
// owner's send limits; /ratelimits/set replaces them (D41), and they apply.
func TestV2RateLimits(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		wantData(t, env.V2(t, fx.read, "/ratelimits", nil),
			`{"request_rate":{"per_minute":60,"burst":120,"remaining":119},"ratelimits":[]}`)
		wantData(t, env.V2Do(t, "GET", fx.read, "/ratelimits", nil, nil),
			`{"request_rate":{"per_minute":60,"burst":120,"remaining":118},"ratelimits":[]}`)

		limits := `[{"currency":"BTC","per":"recipient","window_seconds":3600,"max_count":10,"max_amount":null},
			{"currency":null,"per":"faucet","window_seconds":86400,"max_count":null,"max_amount":5000},
			{"currency":"DOGE","per":"ip","window_seconds":60,"max_count":2,"max_amount":300}]`
		r := env.V2(t, fx.mng, "/ratelimits/set", `{"ratelimits":[
			{"currency":"BTC","per":"recipient","window_seconds":3600,"max_count":10},
			{"per":"faucet","window_seconds":86400,"max_amount":5000},
			{"currency":"DOGE","per":"ip","window_seconds":60,"max_count":2,"max_amount":300}]}`)
		wantData(t, r, `{"request_rate":{"per_minute":60,"burst":120,"remaining":119},"ratelimits":`+limits+`}`)
		wantData(t, env.V2(t, fx.read, "/ratelimits", nil),
			`{"request_rate":{"per_minute":60,"burst":120,"remaining":117},"ratelimits":`+limits+`}`)

		t.Run("they apply to sends", func(t *testing.T) {
			pay(t, env, fx.send, "bob", 4000, "BTC")
			r := env.V2(t, fx.send, "/send", freshSend("bob", 1001, "BTC"))
			wantError(t, r, http.StatusTooManyRequests, "send_limit_reached")
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After (D34)")
			}
		})
		t.Run("an empty list removes every limit", func(t *testing.T) {
			wantData(t, env.V2(t, fx.mng, "/ratelimits/set", map[string]any{"ratelimits": []any{}}),
				`{"request_rate":{"per_minute":60,"burst":120,"remaining":118},"ratelimits":[]}`)
			pay(t, env, fx.send, "bob", 1001, "BTC")
		})
	})
}

// TestV2IPWhitelist: /ip-whitelist/set replaces the faucet's whitelist with
// normalized prefixes and /ip-whitelist reads it back.
func TestV2IPWhitelist(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		wantData(t, env.V2(t, fx.mng, "/ip-whitelist", nil), `{"ip_whitelist":[]}`)
		const set = `{"ip_whitelist":["127.0.0.1/32","203.0.113.0/24","2001:db8::1/128","198.51.0.0/16","10.0.0.1/32"]}`
		wantData(t, env.V2(t, fx.mng, "/ip-whitelist/set", map[string]any{
			"ip_whitelist": []string{"127.0.0.1", "203.0.113.0/24", "2001:db8::1", "198.51.100.7/16", "::ffff:10.0.0.1"},
		}), set)
		wantData(t, env.V2(t, fx.mng, "/ip-whitelist", nil), set)
		wantData(t, env.V2(t, fx.read, "/balance", map[string]any{"currency": "BTC"}), `{"currency":"BTC","balance":1000000,"balance_bitcoin":0.01}`)
		wantData(t, env.V2(t, fx.mng, "/ip-whitelist/set", map[string]any{"ip_whitelist": []string{}}), `{"ip_whitelist":[]}`)
		wantData(t, env.V2(t, fx.mng, "/ip-whitelist", nil), `{"ip_whitelist":[]}`)
	})
}

// TestV2IPWhitelistExcludingTheCallerForbidsEveryPath: once the faucet's
// whitelist leaves out the caller's address, every v2 path answers 403
// forbidden (D34) and v1 answers 401 (spec 5 v1.3); other faucets are not
// affected.
func TestV2IPWhitelistExcludingTheCallerForbidsEveryPath(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
			t.Fatal(err)
		}
		locked, v1key := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		k := allScopesKey(t, env, locked)
		wantData(t, env.V2(t, k, "/ip-whitelist/set", map[string]any{"ip_whitelist": []string{"203.0.113.7"}}),
			`{"ip_whitelist":["203.0.113.7/32"]}`)
		for _, p := range routes {
			wantError(t, env.V2(t, k, p.path, validBody(p.path)), http.StatusForbidden, "forbidden")
		}
		if r := env.Post(t, "/getbalance", url.Values{"api_key": {v1key}, "currency": {"BTC"}}); r.Status() != 401 {
			t.Errorf("v1 getbalance: status %d, want 401: %s", r.Status(), r.Raw)
		}
		if got := env.Balance(t, locked.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("locked faucet BTC balance %d, want 1000000", got)
		}
		wantOK(t, env.V2(t, fx.read, "/balance", nil))
		wantOK(t, env.V2(t, fx.send, "/send", freshSend("bob", 1000, "BTC")))
	})
}

// TestV2LowBalanceNotification: the toggle flips the alert or sets it as
// enabled says, with thresholds; a payout crossing a threshold shows one
// notification per crossing (D43).
func TestV2LowBalanceNotification(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		const path, toggle = "/low-balance-notification", "/low-balance-notification/toggle"
		wantData(t, env.V2(t, fx.read, path, nil), `{"enabled":false,"thresholds":{},"notifications":[]}`)

		for _, c := range []struct {
			name string
			body any
			want string
		}{
			{"without enabled it flips on, with thresholds", map[string]any{"thresholds": map[string]int64{"BTC": 500_000, "DOGE": 100}},
				`{"enabled":true,"thresholds":{"BTC":500000,"DOGE":100},"notifications":[]}`},
			{"an empty body flips it off, thresholds kept", nil,
				`{"enabled":false,"thresholds":{"BTC":500000,"DOGE":100},"notifications":[]}`},
			{"enabled false keeps it off", map[string]any{"enabled": false},
				`{"enabled":false,"thresholds":{"BTC":500000,"DOGE":100},"notifications":[]}`},
			{"enabled true, threshold 0 removes one", map[string]any{"enabled": true, "thresholds": map[string]int64{"DOGE": 0}},
				`{"enabled":true,"thresholds":{"BTC":500000},"notifications":[]}`},
			{"enabled true keeps it on", map[string]any{"enabled": true},
				`{"enabled":true,"thresholds":{"BTC":500000},"notifications":[]}`},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantData(t, env.V2(t, fx.mng, toggle, c.body), c.want)
				wantData(t, env.V2(t, fx.read, path, nil), c.want)
			})
		}

		// 1,000,000 -> 400,000 crosses 500,000; 400,000 -> 399,000 does not.
		crossed := env.Clock.Now()
		pay(t, env, fx.send, "bob", 600_000, "BTC")
		env.Clock.Advance(time.Minute)
		pay(t, env, fx.send, "bob", 1000, "BTC")
		// Back above, then below again: a second crossing, a second notification.
		if _, err := env.App.Ledger.Deposit(ctx, fx.f, "BTC", 200_000); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(time.Minute)
		again := env.Clock.Now()
		pay(t, env, fx.send, "bob", 100_000, "BTC")

		// read is the alert's record with the notifications' ids checked
		// (newest first) and dropped.
		read := func(t *testing.T) any {
			t.Helper()
			r := env.V2(t, fx.read, path, nil)
			wantOK(t, r)
			got := decodeJSON(t, string(r.Envelope.Data))
			ids := dropIDs(t, got.(map[string]any)["notifications"], "id")
			if len(ids) == 2 && ids[0] <= ids[1] {
				t.Errorf("notification ids %v: want newest first", ids)
			}
			return got
		}
		note := func(balance int64, at time.Time) map[string]any {
			return map[string]any{"currency": "BTC", "threshold": 500000, "balance": balance, "created_at": stamp(at),
				"sent_at": nil, "channel": "", "attempts": 0, "last_error": ""}
		}
		want := jsonText(t, map[string]any{"enabled": true, "thresholds": map[string]any{"BTC": 500000},
			"notifications": []any{note(499_000, again), note(400_000, crossed)}})
		if diff := cmp.Diff(decodeJSON(t, want), read(t)); diff != "" {
			t.Errorf("data (-want +got):\n%s", diff)
		}
		t.Run("refusals change nothing", func(t *testing.T) {
			wantError(t, env.V2(t, fx.mng, toggle, map[string]any{"thresholds": map[string]int64{"XYZ": 1}}), 400, "invalid")
			wantError(t, env.V2(t, fx.mng, toggle, map[string]any{"thresholds": map[string]int64{"BTC": -1}}), 400, "invalid")
			if diff := cmp.Diff(decodeJSON(t, want), read(t)); diff != "" {
				t.Errorf("data (-want +got):\n%s", diff)
			}
		})
	})
}

// TestV2AntiFraudToggle: the toggle flips the rank checks, or sets them as
// enabled says; /anti-fraud/rules reads the result.
func TestV2AntiFraudToggle(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		wantData(t, env.V2(t, fx.mng, "/anti-fraud/rules", nil), defaultRules)
		rules := func(on bool) string {
			return `{"anti_fraud":` + strconv.FormatBool(on) + `,"trust_rank":0,"negative_rank":100,"whitelist":[],"blacklist":[]}`
		}
		for _, c := range []struct {
			name string
			body any
			on   bool
		}{
			{"no body flips it off", nil, false},
			{"an empty object flips it on", map[string]any{}, true},
			{"enabled false", map[string]any{"enabled": false}, false},
			{"enabled false again stays off", map[string]any{"enabled": false}, false},
			{"enabled true", map[string]any{"enabled": true}, true},
			{"enabled true again stays on", map[string]any{"enabled": true}, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantData(t, env.V2(t, fx.mng, "/anti-fraud/toggle", c.body), rules(c.on))
				wantData(t, env.V2(t, fx.mng, "/anti-fraud/rules", nil), rules(c.on))
			})
		}
		wantError(t, env.V2(t, fx.mng, "/anti-fraud/toggle", `{"enabled":"no"}`), 400, "invalid")
	})
}

// TestV2AntiFraudRulesUpdate: trust_rank is required; the other fields are
// left as they are when absent (D42). The blacklist refuses a recipient
// even with the rank checks off.
func TestV2AntiFraudRulesUpdate(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		const update = "/anti-fraud/rules/update"
		for _, c := range []struct {
			name string
			body string
			want string
		}{
			{"trust_rank and a whitelist", `{"trust_rank":40,"whitelist":["alice"," carol "]}`,
				`{"anti_fraud":true,"trust_rank":40,"negative_rank":100,"whitelist":["alice","carol"],"blacklist":[]}`},
			{"a blacklist leaves the whitelist", `{"trust_rank":0,"blacklist":["bob","203.0.113.0/24"]}`,
				`{"anti_fraud":true,"trust_rank":0,"negative_rank":100,"whitelist":["alice","carol"],"blacklist":["bob","203.0.113.0/24"]}`},
			{"negative_rank and an empty whitelist", `{"trust_rank":100,"negative_rank":0,"whitelist":[]}`,
				`{"anti_fraud":true,"trust_rank":100,"negative_rank":0,"whitelist":[],"blacklist":["bob","203.0.113.0/24"]}`},
			{"trust_rank alone", `{"trust_rank":0}`,
				`{"anti_fraud":true,"trust_rank":0,"negative_rank":0,"whitelist":[],"blacklist":["bob","203.0.113.0/24"]}`},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantData(t, env.V2(t, fx.mng, update, c.body), c.want)
				wantData(t, env.V2(t, fx.mng, "/anti-fraud/rules", nil), c.want)
			})
		}
		t.Run("the blacklist applies with the rank checks off", func(t *testing.T) {
			wantError(t, env.V2(t, fx.send, "/send", freshSend("bob", 1000, "BTC")), http.StatusForbidden, "recipient_refused")
			wantOK(t, env.V2(t, fx.mng, "/anti-fraud/toggle", map[string]any{"enabled": false}))
			wantError(t, env.V2(t, fx.send, "/send", freshSend("bob", 1000, "BTC")), http.StatusForbidden, "recipient_refused")
		})
		t.Run("refusals leave the rules", func(t *testing.T) {
			for _, body := range []string{
				`{}`, `{"negative_rank":5}`, `{"whitelist":["x"]}`,
				`{"trust_rank":101}`, `{"trust_rank":-1}`, `{"trust_rank":0,"negative_rank":101}`,
				`{"trust_rank":0,"whitelist":[""]}`, `{"trust_rank":0,"blacklist":["   "]}`,
			} {
				wantError(t, env.V2(t, fx.mng, update, body), 400, "invalid")
			}
			wantData(t, env.V2(t, fx.mng, "/anti-fraud/rules", nil),
				`{"anti_fraud":false,"trust_rank":0,"negative_rank":0,"whitelist":[],"blacklist":["bob","203.0.113.0/24"]}`)
		})
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000: a refused send paid", got)
		}
	})
}

// TestV2Send: the send reply of spec 4.2, field by field; a retry with the
// same idempotency key replays it without paying (D35).
func TestV2Send(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		body := freshSend("bob", 1000, "BTC")
		r := env.V2(t, fx.send, "/send", body)
		wantOK(t, r)
		var d struct {
			PayoutID int64 `json:"payout_id"`
		}
		r.Data(t, &d)
		want := fmt.Sprintf(`{"rate_limit_remaining":119,"currency":"BTC","balance":999000,"balance_bitcoin":0.00999,"payout_id":%d,"payout_user_hash":%q,"dry_run":false}`,
			d.PayoutID, fx.bob.PayoutUserHash)
		wantData(t, r, want)
		if d.PayoutID <= 0 {
			t.Errorf("payout_id %d, want positive", d.PayoutID)
		}
		if r.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("first send carries Idempotent-Replayed")
		}

		t.Run("a retry replays the original reply", func(t *testing.T) {
			r := env.V2(t, fx.send, "/send", body)
			wantData(t, r, want)
			if got := r.Header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed %q, want true", got)
			}
		})
		t.Run("the key with another payout is 409", func(t *testing.T) {
			other := sendBody{IdempotencyKey: body.IdempotencyKey, To: "bob", Amount: 2000, Currency: "BTC"}
			wantError(t, env.V2(t, fx.send, "/send", other), http.StatusConflict, "idempotency_key_reuse")
		})
		t.Run("refusals", func(t *testing.T) {
			for _, c := range []struct {
				name   string
				body   any
				status int
				code   string
			}{
				{"no idempotency_key", map[string]any{"to": "bob", "amount": 1000, "currency": "BTC"}, 400, "invalid"},
				{"no to", map[string]any{"idempotency_key": freshIdem(), "amount": 1000, "currency": "BTC"}, 400, "recipient_not_payable"},
				{"unknown recipient", freshSend("nobody", 1000, "BTC"), 400, "recipient_not_payable"},
				{"no currency", map[string]any{"idempotency_key": freshIdem(), "to": "bob", "amount": 1000}, 400, "invalid_currency"},
				{"unknown currency", freshSend("bob", 1000, "XYZ"), 400, "invalid_currency"},
				{"amount 0", freshSend("bob", 0, "BTC"), 400, "invalid_amount"},
				{"balance too low", freshSend("bob", 999_001, "BTC"), http.StatusConflict, "insufficient_balance"},
			} {
				t.Run(c.name, func(t *testing.T) { wantError(t, env.V2(t, fx.send, "/send", c.body), c.status, c.code) })
			}
		})
		t.Run("a refused send leaves its key free", func(t *testing.T) {
			b := freshSend("bob", 999_001, "BTC")
			wantError(t, env.V2(t, fx.send, "/send", b), http.StatusConflict, "insufficient_balance")
			b.Amount = 999_000
			r := env.V2(t, fx.send, "/send", b)
			wantOK(t, r)
			if r.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("a first payout under a refused key was marked replayed")
			}
		})
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 0 {
			t.Errorf("faucet BTC balance %d, want 0", got)
		}
		if got := len(payouts(t, env, fx.f)); got != 2 {
			t.Errorf("%d payouts, want 2", got)
		}
	})
}

// TestV2FaucetCreate: an admin key creates a faucet owned by its faucet's
// owner; the reply carries the new faucet and its v1 key, which works.
func TestV2FaucetCreate(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		r := env.V2(t, fx.admin, "/faucet/create", map[string]any{
			"faucet_name": "Second Faucet", "faucet_domain": "second.example.net", "faucet_url": "https://second.example.net/claim",
		})
		wantOK(t, r)
		var d struct {
			Faucet struct {
				ID int64 `json:"id"`
			} `json:"faucet"`
			APIKey string `json:"api_key"`
		}
		r.Data(t, &d)
		created, err := env.App.Store.FaucetGetByID(ctx, d.Faucet.ID)
		if err != nil {
			t.Fatalf("the created faucet %d: %v", d.Faucet.ID, err)
		}
		if created.ID == fx.f.ID || created.OwnerID != fx.f.OwnerID {
			t.Errorf("created faucet %d of owner %d, want a new faucet of owner %d", created.ID, created.OwnerID, fx.f.OwnerID)
		}
		want := newFaucetWant(t, created)
		wantData(t, r, jsonText(t, map[string]any{"faucet": decodeJSON(t, want.json(t)), "api_key": d.APIKey}))
		if created.Name != "Second Faucet" || created.Domain != "second.example.net" || created.URL != "https://second.example.net/claim" {
			t.Errorf("stored %q %q %q", created.Name, created.Domain, created.URL)
		}
		if !regexp.MustCompile(`^[0-9a-f]{40,}$`).MatchString(d.APIKey) {
			t.Errorf("api_key %q: want 40+ random characters (D13)", d.APIKey)
		}
		v1 := env.Post(t, "/getbalance", url.Values{"api_key": {d.APIKey}, "currency": {"BTC"}})
		if v1.Status() != 200 || string(v1.Body["balance"]) != "0" {
			t.Errorf("v1 getbalance with the new api_key: %s", v1.Raw)
		}
		// The admin key still speaks for its own faucet, not the new one.
		if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
			t.Fatal(err)
		}
		wantData(t, env.V2(t, fx.admin, "/approval-cost", map[string]any{"coin": "BTC"}),
			`{"currency":"BTC","cost":1000,"cost_bitcoin":0.00001,"balance":1000000,"listing":null}`)
	})
}

// TestV2ListingApproval: /approval-cost tells the cost (D44);
// /faucet/request-approval moves it from the faucet to system:listing and
// opens one request; a second is 409 while it is open.
func TestV2ListingApproval(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
		if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
			t.Fatal(err)
		}
		wantData(t, env.V2(t, fx.admin, "/approval-cost", map[string]any{"coin": "BTC"}),
			`{"currency":"BTC","cost":1000,"cost_bitcoin":0.00001,"balance":1000000,"listing":null}`)

		r := env.V2(t, fx.admin, "/faucet/request-approval", map[string]any{"coin": "BTC"})
		wantOK(t, r)
		var d struct {
			Listing struct {
				RequestID int64 `json:"request_id"`
			} `json:"listing"`
		}
		r.Data(t, &d)
		listing := fmt.Sprintf(`{"request_id":%d,"currency":"BTC","amount":1000,"status":"pending","created_at":%q,"decided_at":null}`,
			d.Listing.RequestID, stamp(env.Clock.Now()))
		wantData(t, r, `{"listing":`+listing+`,"balance":999000}`)
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 999_000 {
			t.Errorf("faucet BTC balance %d, want 999000", got)
		}
		if got := env.Balance(t, drip.AccountListing, "BTC"); got != 1000 {
			t.Errorf("system:listing BTC balance %d, want 1000", got)
		}
		env.Reconcile(t)

		wantError(t, env.V2(t, fx.admin, "/faucet/request-approval", map[string]any{"coin": "BTC"}), http.StatusConflict, "conflict")
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 999_000 {
			t.Errorf("after the refused second request: faucet BTC balance %d, want 999000", got)
		}
		wantData(t, env.V2(t, fx.admin, "/approval-cost", map[string]any{"coin": "BTC"}),
			`{"currency":"BTC","cost":1000,"cost_bitcoin":0.00001,"balance":999000,"listing":`+listing+`}`)
		r = env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, r)
		var rec struct {
			Listing json.RawMessage `json:"listing"`
		}
		r.Data(t, &rec)
		if diff := cmp.Diff(decodeJSON(t, listing), decodeJSON(t, string(rec.Listing))); diff != "" {
			t.Errorf("/faucet listing (-want +got):\n%s", diff)
		}

		t.Run("refusals", func(t *testing.T) {
			for _, path := range []string{"/approval-cost", "/faucet/request-approval"} {
				wantError(t, env.V2(t, fx.admin, path, nil), 400, "invalid")
				wantError(t, env.V2(t, fx.admin, path, map[string]any{"coin": ""}), 400, "invalid")
				wantError(t, env.V2(t, fx.admin, path, map[string]any{"coin": "XYZ"}), 400, "invalid_currency")
				wantError(t, env.V2(t, fx.admin, path, map[string]any{"coin": "DOGE"}), 400, "invalid") // not offered
			}
		})
		t.Run("a balance below the cost", func(t *testing.T) {
			poor, _ := env.Faucet(t, map[string]int64{"BTC": 999})
			k := env.Key(t, poor, drip.ScopeAdmin)
			wantError(t, env.V2(t, k, "/faucet/request-approval", map[string]any{"coin": "BTC"}), http.StatusConflict, "insufficient_balance")
			if got := env.Balance(t, poor.AccountID, "BTC"); got != 999 {
				t.Errorf("poor faucet BTC balance %d, want 999", got)
			}
		})
	})
}

// TestV2NoPathDeletesAFaucet: admin keys cannot delete faucets (spec 4.2
// rule 3): there is no such path, and DELETE is not a v2 method.
func TestV2NoPathDeletesAFaucet(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1000})
		k := allScopesKey(t, env, f)
		for _, path := range []string{"/faucet/delete", "/faucets/delete", "/faucet/remove", "/delete"} {
			wantError(t, env.V2(t, k, path, map[string]any{"faucet_id": f.ID}), http.StatusNotFound, "not_found")
		}
		r := env.V2Do(t, http.MethodDelete, k, "/faucet", nil, nil)
		wantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
		if _, err := env.App.Store.FaucetGetByID(ctx, f.ID); err != nil {
			t.Errorf("faucet %d: %v", f.ID, err)
		}
		wantOK(t, env.V2(t, k, "/faucet", nil))
	})
}

// TestV2RefusesBadFields: each path's documented 400s (D34, D37, D38, D41,
// D42); a refusal changes nothing.
func TestV2RefusesBadFields(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
			t.Fatal(err)
		}
		before := env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, before)

		site := func(change map[string]any) map[string]any {
			b := map[string]any{"faucet_name": "Moon", "faucet_domain": "moon.example.com", "faucet_url": "https://moon.example.com/",
				"faucet_description": "", "timer_minutes": 5}
			for k, v := range change {
				if v == nil {
					delete(b, k)
				} else {
					b[k] = v
				}
			}
			return b
		}
		limit := func(change map[string]any) map[string]any {
			l := map[string]any{"currency": "BTC", "per": "faucet", "window_seconds": 60, "max_count": 5}
			for k, v := range change {
				if v == nil {
					delete(l, k)
				} else {
					l[k] = v
				}
			}
			return map[string]any{"ratelimits": []any{l}}
		}
		many := make([]string, 101)
		for i := range many {
			many[i] = fmt.Sprintf("203.0.113.%d", i)
		}
		pages := func(path string) []refusal {
			return []refusal{
				{path, "no coin", map[string]any{"page": 1}, 400, "invalid"},
				{path, "page 0", map[string]any{"coin": "BTC", "page": 0}, 400, "invalid"},
				{path, "page -1", map[string]any{"coin": "BTC", "page": -1}, 400, "invalid"},
				{path, "unknown coin", map[string]any{"coin": "XYZ"}, 400, "invalid_currency"},
				{path, "unknown coin in lower case", map[string]any{"coin": "xyz"}, 400, "invalid_currency"},
			}
		}
		cases := []refusal{
			{"/balance", "unknown currency", map[string]any{"currency": "XYZ"}, 400, "invalid_currency"},
			{"/check-address", "no address", map[string]any{}, 400, "invalid"},
			{"/check-address", "unknown address", map[string]any{"address": "nobody"}, 400, "recipient_not_payable"},
			{"/check-address", "unknown currency", map[string]any{"address": "bob", "currency": "XYZ"}, 400, "invalid_currency"},
			{"/payouts", "count 0", map[string]any{"count": 0}, 400, "invalid"},
			{"/payouts", "count 101", map[string]any{"count": 101}, 400, "invalid"},
			{"/payouts", "unknown currency", map[string]any{"currency": "XYZ"}, 400, "invalid_currency"},
			{"/faucet/update", "no faucet_name", site(map[string]any{"faucet_name": nil}), 400, "invalid"},
			{"/faucet/update", "no faucet_domain", site(map[string]any{"faucet_domain": nil}), 400, "invalid"},
			{"/faucet/update", "no faucet_url", site(map[string]any{"faucet_url": nil}), 400, "invalid"},
			{"/faucet/update", "no faucet_description", site(map[string]any{"faucet_description": nil}), 400, "invalid"},
			{"/faucet/update", "no timer_minutes", site(map[string]any{"timer_minutes": nil}), 400, "invalid"},
			{"/faucet/update", "empty name", site(map[string]any{"faucet_name": "  "}), 400, "invalid"},
			{"/faucet/update", "name of 65", site(map[string]any{"faucet_name": strings.Repeat("n", 65)}), 400, "invalid"},
			{"/faucet/update", "domain not a hostname", site(map[string]any{"faucet_domain": "moon example"}), 400, "invalid"},
			{"/faucet/update", "url on another domain", site(map[string]any{"faucet_url": "https://evil.example.net/"}), 400, "invalid"},
			{"/faucet/update", "url on a subdomain", site(map[string]any{"faucet_url": "https://www.moon.example.com/"}), 400, "invalid"},
			{"/faucet/update", "url not http(s)", site(map[string]any{"faucet_url": "ftp://moon.example.com/"}), 400, "invalid"},
			{"/faucet/update", "description of 1001", site(map[string]any{"faucet_description": strings.Repeat("d", 1001)}), 400, "invalid"},
			{"/faucet/update", "timer_minutes 0", site(map[string]any{"timer_minutes": 0}), 400, "invalid"},
			{"/faucet/update", "timer_minutes 1441", site(map[string]any{"timer_minutes": 1441}), 400, "invalid"},
			{"/faucet/update", "unknown currency selected", site(map[string]any{"currencies_selected": []string{"BTC", "XYZ"}}), 400, "invalid"},
			{"/faucet/update", "unknown category", site(map[string]any{"categories_selected": []string{"games", "casino"}}), 400, "invalid"},
			{"/ratelimits/set", "no ratelimits", map[string]any{}, 400, "invalid"},
			{"/ratelimits/set", "per hour", limit(map[string]any{"per": "hour"}), 400, "invalid"},
			{"/ratelimits/set", "window 0", limit(map[string]any{"window_seconds": 0}), 400, "invalid"},
			{"/ratelimits/set", "window over a year", limit(map[string]any{"window_seconds": 366*24*3600 + 1}), 400, "invalid"},
			{"/ratelimits/set", "neither max", limit(map[string]any{"max_count": nil}), 400, "invalid"},
			{"/ratelimits/set", "negative max", limit(map[string]any{"max_amount": -1}), 400, "invalid"},
			{"/ratelimits/set", "unknown coin", limit(map[string]any{"currency": "XYZ"}), 400, "invalid"},
			{"/ip-whitelist/set", "no ip_whitelist", map[string]any{}, 400, "invalid"},
			{"/ip-whitelist/set", "bad IP", map[string]any{"ip_whitelist": []string{"127.0.0.1", "300.1.1.1"}}, 400, "invalid"},
			{"/ip-whitelist/set", "bad CIDR", map[string]any{"ip_whitelist": []string{"10.0.0.0/33"}}, 400, "invalid"},
			{"/ip-whitelist/set", "a hostname", map[string]any{"ip_whitelist": []string{"localhost"}}, 400, "invalid"},
			{"/ip-whitelist/set", "an empty entry", map[string]any{"ip_whitelist": []string{""}}, 400, "invalid"},
			{"/ip-whitelist/set", "101 entries", map[string]any{"ip_whitelist": many}, 400, "invalid"},
			{"/low-balance-notification/toggle", "unknown coin", map[string]any{"thresholds": map[string]int64{"XYZ": 1}}, 400, "invalid"},
			{"/low-balance-notification/toggle", "negative threshold", map[string]any{"thresholds": map[string]int64{"BTC": -1}}, 400, "invalid"},
			{"/anti-fraud/rules/update", "no trust_rank", map[string]any{"negative_rank": 5}, 400, "invalid"},
			{"/anti-fraud/rules/update", "rank 101", map[string]any{"trust_rank": 101}, 400, "invalid"},
			{"/anti-fraud/rules/update", "negative rank 101", map[string]any{"trust_rank": 1, "negative_rank": 101}, 400, "invalid"},
			{"/send", "no idempotency_key", map[string]any{"to": "bob", "amount": 1000, "currency": "BTC"}, 400, "invalid"},
			{"/send", "unknown currency", freshSend("bob", 1000, "XYZ"), 400, "invalid_currency"},
			{"/send", "amount 0", freshSend("bob", 0, "BTC"), 400, "invalid_amount"},
			{"/send", "unknown recipient", freshSend("nobody", 1000, "BTC"), 400, "recipient_not_payable"},
			{"/send", "balance too low", freshSend("bob", 1_000_001, "BTC"), http.StatusConflict, "insufficient_balance"},
			{"/faucet/create", "nothing", map[string]any{}, 400, "invalid"},
			{"/faucet/create", "no faucet_url", map[string]any{"faucet_name": "N", "faucet_domain": "n.example.com"}, 400, "invalid"},
			{"/faucet/create", "url on another domain", map[string]any{"faucet_name": "N", "faucet_domain": "n.example.com", "faucet_url": "https://m.example.com/"}, 400, "invalid"},
			{"/faucet/create", "domain not a hostname", map[string]any{"faucet_name": "N", "faucet_domain": "localhost", "faucet_url": "https://localhost/"}, 400, "invalid"},
			{"/approval-cost", "no coin", map[string]any{}, 400, "invalid"},
			{"/approval-cost", "unknown coin", map[string]any{"coin": "XYZ"}, 400, "invalid_currency"},
			{"/faucet/request-approval", "no coin", map[string]any{}, 400, "invalid"},
			{"/faucet/request-approval", "coin not offered", map[string]any{"coin": "ETH"}, 400, "invalid"},
		}
		cases = append(cases, pages("/stats/users")...)
		cases = append(cases, pages("/transactions")...)
		t.Run("paths", func(t *testing.T) {
			for _, c := range cases {
				t.Run(strings.TrimPrefix(c.path, "/")+"/"+c.name, func(t *testing.T) {
					t.Parallel()
					wantError(t, env.V2(t, allScopesKey(t, env, fx.f), c.path, c.body), c.status, c.code)
				})
			}
		})
		after := env.V2(t, fx.read, "/faucet", nil)
		wantOK(t, after)
		if diff := cmp.Diff(decodeJSON(t, string(before.Envelope.Data)), decodeJSON(t, string(after.Envelope.Data))); diff != "" {
			t.Errorf("refusals changed the faucet (-before +after):\n%s", diff)
		}
		if got := len(ownerFaucets(t, env, fx.f)); got != 1 {
			t.Errorf("owner has %d faucets, want 1", got)
		}
		if got := len(payouts(t, env, fx.f)); got != 0 {
			t.Errorf("%d payouts, want 0", got)
		}
	})
}

// refusal is a request a path must refuse.
type refusal struct {
	path, name string
	body       any
	status     int
	code       string
}

// TestV2Unauthenticated: without a live Bearer key every path answers 401
// unauthenticated with WWW-Authenticate (spec 5 v2.1, D34).
func TestV2Unauthenticated(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		valid := allScopesKey(t, env, fx.f)
		expiring := env.KeyWith(t, key.MintParams{FaucetID: fx.f.ID, Scopes: drip.Scopes, ExpiresIn: time.Hour})
		revokedKey, revoked, err := env.App.Keys.Mint(ctx, key.MintParams{FaucetID: fx.f.ID, Scopes: drip.Scopes})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.App.Keys.Revoke(ctx, revokedKey.ID); err != nil {
			t.Fatal(err)
		}
		wantOK(t, env.V2(t, expiring, "/balance", nil))
		env.Clock.Advance(time.Hour)
		auth := func(v string) http.Header { return http.Header{"Authorization": {v}} }
		for _, c := range []struct {
			name   string
			header http.Header
		}{
			{"no Authorization", nil},
			{"garbage Bearer", auth("Bearer garbage")},
			{"Bearer without a key", auth("Bearer")},
			{"Bearer and spaces", auth("Bearer    ")},
			{"Basic scheme with a valid key", auth("Basic " + valid)},
			{"Basic credentials", auth("Basic xxx")},
			{"a valid key without a scheme", auth(valid)},
			{"a valid key as an api_key header", http.Header{"X-Api-Key": {valid}}},
			{"an overlong key", auth("Bearer " + strings.Repeat("k", 4096))},
			{"an expired key", auth("Bearer " + expiring)},
			{"a revoked key", auth("Bearer " + revoked)},
			{"v1 api_key", auth("Bearer " + fx.v1key)},
		} {
			t.Run(c.name, func(t *testing.T) {
				for _, p := range routes {
					r := env.V2Do(t, http.MethodPost, "", p.path, validBody(p.path), c.header)
					wantError(t, r, http.StatusUnauthorized, "unauthenticated")
					if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
						t.Errorf("%s: WWW-Authenticate %q, want a Bearer challenge", p.path, got)
					}
				}
			})
		}
		t.Run("the scheme is case-insensitive", func(t *testing.T) {
			wantOK(t, env.V2Do(t, http.MethodPost, "", "/balance", nil, auth("bearer "+valid)))
		})
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000", got)
		}
	})
}

// TestV2ForbiddenCallers: a key used from outside its own IP whitelist, or
// of a suspended owner's faucet, is 403 forbidden on every path (D14, D34).
func TestV2ForbiddenCallers(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		ctx := context.Background()
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000})
		elsewhere := env.KeyWith(t, key.MintParams{FaucetID: fx.f.ID, Scopes: drip.Scopes,
			IPWhitelist: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}})
		here := env.KeyWith(t, key.MintParams{FaucetID: fx.f.ID, Scopes: drip.Scopes,
			IPWhitelist: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
		suspended, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		owner, err := env.App.Store.UserGetByID(ctx, suspended.OwnerID)
		if err != nil {
			t.Fatal(err)
		}
		ofSuspended := allScopesKey(t, env, suspended)
		if err := env.App.Users.SetStatus(ctx, owner, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		for _, p := range routes {
			wantError(t, env.V2(t, elsewhere, p.path, validBody(p.path)), http.StatusForbidden, "forbidden")
			wantError(t, env.V2(t, ofSuspended, p.path, validBody(p.path)), http.StatusForbidden, "forbidden")
		}
		wantOK(t, env.V2(t, here, "/balance", nil))
		if got := env.Balance(t, suspended.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("suspended faucet BTC balance %d, want 1000000", got)
		}
		if got := env.Balance(t, fx.f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000", got)
		}
	})
}

// TestV2MethodNotAllowed: every path takes POST, read paths also GET; any
// other method is 405 with Allow (D33).
func TestV2MethodNotAllowed(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
		for _, p := range routes {
			t.Run(strings.TrimPrefix(p.path, "/"), func(t *testing.T) {
				k := allScopesKey(t, env, f)
				allow, methods := "POST", []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch}
				if p.read() {
					allow, methods = "GET, POST", []string{http.MethodPut, http.MethodDelete, http.MethodPatch}
				}
				for _, m := range methods {
					r := env.V2Do(t, m, k, p.path, validBody(p.path), nil)
					wantError(t, r, http.StatusMethodNotAllowed, "method_not_allowed")
					if got := r.Header.Get("Allow"); got != allow {
						t.Errorf("%s %s: Allow %q, want %q", m, p.path, got, allow)
					}
				}
			})
		}
		if got := env.Balance(t, f.AccountID, "BTC"); got != 1_000_000 {
			t.Errorf("faucet BTC balance %d, want 1000000", got)
		}
	})
}

// TestV2UnknownPaths: any other path under /api/v2 is 404 not_found in the
// v2 envelope, with or without a key.
func TestV2UnknownPaths(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		f, _ := env.Faucet(t, nil)
		k := allScopesKey(t, env, f)
		for _, path := range []string{"", "/", "/nope", "/balance/", "/Balance", "/BALANCE", "/stats", "/stats/", "/anti-fraud",
			"/faucet/delete", "/send/", "/getbalance", "/balance.json", "/openapi"} {
			for _, bearer := range []string{k, ""} {
				for _, m := range []string{http.MethodPost, http.MethodGet} {
					r := env.V2Do(t, m, bearer, path, nil, nil)
					wantError(t, r, http.StatusNotFound, "not_found")
				}
			}
		}
	})
}

// TestV2ReadPathsTakeGET: a read path answers GET with query parameters as
// it answers POST with the same fields in a JSON body (D33).
func TestV2ReadPathsTakeGET(t *testing.T) {
	forEachEngineApp(t, func(t *testing.T, env *apptest.Env) {
		fx := newFixture(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 500})
		pay(t, env, fx.send, "bob", 1000, "BTC")
		pay(t, env, fx.send, "bob", 2000, "BTC")
		pay(t, env, fx.send, "bob", 100, "DOGE")
		for _, c := range []struct {
			path  string
			query string
			body  any
		}{
			{"/balance", "currency=DOGE", map[string]any{"currency": "DOGE"}},
			{"/balances", "", nil},
			{"/currencies", "", nil},
			{"/check-address", "address=bob%40example.com&currency=ETH", map[string]any{"address": "bob@example.com", "currency": "ETH"}},
			{"/payouts", "count=2&currency=BTC", map[string]any{"count": 2, "currency": "BTC"}},
			{"/faucet", "", nil},
			{"/stats/daily", "", nil},
			{"/stats/users", "coin=BTC&page=1", map[string]any{"coin": "BTC", "page": 1}},
			{"/transactions", "coin=DOGE", map[string]any{"coin": "DOGE"}},
			{"/low-balance-notification", "", nil},
		} {
			t.Run(strings.TrimPrefix(c.path, "/"), func(t *testing.T) {
				post := env.V2(t, fx.read, c.path, c.body)
				wantOK(t, post)
				path := c.path
				if c.query != "" {
					path += "?" + c.query
				}
				wantData(t, env.V2Do(t, http.MethodGet, fx.read, path, nil, nil), string(post.Envelope.Data))
			})
		}
		t.Run("refusals", func(t *testing.T) {
			for _, c := range []struct{ path, code string }{
				{"/balances?currency=BTC", "invalid"},
				{"/faucet?x=1", "invalid"},
				{"/payouts?colour=red", "invalid"},
				{"/payouts?count=abc", "invalid"},
				{"/payouts?count=0", "invalid"},
				{"/payouts?count=101", "invalid"},
				{"/stats/users?page=1", "invalid"},
				{"/stats/users?coin=BTC&page=0", "invalid"},
				{"/transactions?coin=BTC&page=x", "invalid"},
				{"/balance?currency=XYZ", "invalid_currency"},
				{"/check-address?address=%ff", "invalid"},
			} {
				wantError(t, env.V2Do(t, http.MethodGet, fx.read, c.path, nil, nil), 400, c.code)
			}
		})
	})
}
