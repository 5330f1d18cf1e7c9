// Conformance tests of the v1 interface (spec 2.1-2.6, 4.1, 5 v1, 7.1, 8;
// DESIGN D1, D11-D13, D20-D27, D40-D42, D51). They drive the real server
// over HTTP, through apptest, on every engine storetest.Engines gives.
//
// This file holds the success replies of every endpoint, field by field
// and type by type. v1_status_test.go provokes every status of spec 7.1
// and the D21 order; v1_flow_test.go covers destinations (D11), key
// rotation (D13), events (D51) and bodies (D20). The helpers are those of
// helpers_test.go.
package apiv1_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestConformanceSendReply checks the /send reply member by member (spec
// 2.3, 4.1): the balance after the payout, balance_bitcoin as the exact
// decimal of balance/1e8 (D1), payout_id, payout_user_hash (D12) and
// rate_limit_remaining as the bucket's level (D24).
func TestConformanceSendReply(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		s := newScene(t, env, map[string]int64{"BTC": 10_000})
		alice := newUser(t, env, "alice")

		r := s.send(t, 200, "to", alice.Username, "amount", "5679", "currency", "BTC")
		checkOK(t, r, sendShape)
		first := intMember(t, r.Body, "payout_id")
		type sendFields struct {
			Currency       string
			Balance        int64
			BalanceBitcoin string // the raw JSON text
			PayoutUserHash string
			RateRemaining  string // the raw JSON text
		}
		got := sendFields{
			Currency:       stringMember(t, r.Body, "currency"),
			Balance:        intMember(t, r.Body, "balance"),
			BalanceBitcoin: string(r.Body["balance_bitcoin"]),
			PayoutUserHash: stringMember(t, r.Body, "payout_user_hash"),
			RateRemaining:  string(r.Body["rate_limit_remaining"]),
		}
		// D40/D24: a fresh bucket holds 120; this request took one, and the
		// injected clock stands still, so nothing has refilled.
		want := sendFields{
			Currency: "BTC", Balance: 4321, BalanceBitcoin: "0.00004321",
			PayoutUserHash: alice.PayoutUserHash, RateRemaining: "119",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("first /send reply (-want +got):\n%s", diff)
		}
		if first <= 0 {
			t.Errorf("payout_id %d, want a positive integer", first)
		}
		if !hashRE.MatchString(got.PayoutUserHash) {
			t.Errorf("payout_user_hash %q, want 40 lowercase hex (D12)", got.PayoutUserHash)
		}

		r = s.send(t, 200, "to", alice.Email, "amount", "4321", "currency", "BTC")
		checkOK(t, r, sendShape)
		got = sendFields{
			Currency:       stringMember(t, r.Body, "currency"),
			Balance:        intMember(t, r.Body, "balance"),
			BalanceBitcoin: string(r.Body["balance_bitcoin"]),
			PayoutUserHash: stringMember(t, r.Body, "payout_user_hash"),
			RateRemaining:  string(r.Body["rate_limit_remaining"]),
		}
		want = sendFields{Currency: "BTC", Balance: 0, BalanceBitcoin: "0", PayoutUserHash: alice.PayoutUserHash, RateRemaining: "118"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("second /send reply (-want +got):\n%s", diff)
		}
		if second := intMember(t, r.Body, "payout_id"); second <= first {
			t.Errorf("second payout_id %d, want more than the first, %d", second, first)
		}

		// The money moved as the replies say (D2).
		if b := env.Balance(t, alice.AccountID, "BTC"); b != 10_000 {
			t.Errorf("recipient balance %d, want 10000", b)
		}
		if b := env.Balance(t, s.f.AccountID, "BTC"); b != 0 {
			t.Errorf("faucet balance %d, want 0", b)
		}
	})
}

// TestConformanceBalanceBitcoin checks that balance_bitcoin is written as
// the exact decimal of balance/1e8, never through float64 (D1), in the
// /send reply and in the /getbalance reply.
func TestConformanceBalanceBitcoin(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		tests := []struct {
			name  string
			units int64 // the faucet balance after the send
			want  string
		}{
			{"zero is 0", 0, "0"},
			{"one satoshi", 1, "0.00000001"},
			{"satoshis keep leading zeros", 4321, "0.00004321"},
			{"whole coins have no decimal point", 200_000_000, "2"},
			{"trailing zeros are trimmed", 150_000_000, "1.5"},
			{"all eight decimals", 123_456_789_012, "1234.56789012"},
			{"float64 would round this", 9_007_199_254_740_993, "90071992.54740993"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				s := newScene(t, env, map[string]int64{"DOGE": tt.units + 100})
				to := newUser(t, env, "bb")
				r := s.send(t, 200, "to", to.Username, "amount", "100", "currency", "DOGE")
				checkOK(t, r, sendShape)
				g := s.post(t, "/getbalance", "currency", "DOGE")
				checkOK(t, g, balanceShape)
				for _, reply := range []*apptest.Reply{r, g} {
					if got := intMember(t, reply.Body, "balance"); got != tt.units {
						t.Errorf("balance %d, want %d", got, tt.units)
					}
					got := string(reply.Body["balance_bitcoin"])
					if got != tt.want {
						t.Errorf("balance_bitcoin written %s, want %s", got, tt.want)
					}
					if !coinsEqual(got, tt.units) {
						t.Errorf("balance_bitcoin %s is not %d/1e8", got, tt.units)
					}
				}
			})
		}
	})
}

// TestConformanceCheckAddressReply checks the /checkaddress reply (spec
// 4.1): the payout_user_hash of the user the address names (D12), and no
// money moved.
func TestConformanceCheckAddressReply(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		s := newScene(t, env, map[string]int64{"BTC": 1000})
		alice := newUser(t, env, "alice")
		before := s.balances(t, s.f.AccountID)

		r := s.post(t, "/checkaddress", "address", alice.Email, "currency", "BTC")
		checkOK(t, r, checkAddressShape)
		hash := stringMember(t, r.Body, "payout_user_hash")
		if hash != alice.PayoutUserHash {
			t.Errorf("payout_user_hash %q, want the user's %q", hash, alice.PayoutUserHash)
		}
		if !hashRE.MatchString(hash) {
			t.Errorf("payout_user_hash %q, want 40 lowercase hex (D12)", hash)
		}
		if diff := cmp.Diff(before, s.balances(t, s.f.AccountID)); diff != "" {
			t.Errorf("checkaddress moved money (-before +after):\n%s", diff)
		}
		if b := env.Balance(t, alice.AccountID, "BTC"); b != 0 {
			t.Errorf("recipient balance %d, want 0", b)
		}
	})
}

// TestConformanceBalanceReply checks /getbalance and its alias /balance
// (spec 2.4, D20) for funded and unfunded coins.
func TestConformanceBalanceReply(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		s := newScene(t, env, map[string]int64{"BTC": 4321, "DOGE": 250_000_000})
		tests := []struct {
			currency string
			balance  int64
			bitcoin  string
		}{
			{"BTC", 4321, "0.00004321"},
			{"DOGE", 250_000_000, "2.5"},
			{"LTC", 0, "0"}, // an active coin never funded
		}
		for _, path := range []string{"/getbalance", "/balance"} {
			for _, tt := range tests {
				t.Run(path+" "+tt.currency, func(t *testing.T) {
					t.Parallel()
					r := s.post(t, path, "currency", tt.currency)
					checkOK(t, r, balanceShape)
					type balance struct {
						Currency string
						Balance  int64
						Bitcoin  string
					}
					got := balance{stringMember(t, r.Body, "currency"), intMember(t, r.Body, "balance"), string(r.Body["balance_bitcoin"])}
					if diff := cmp.Diff(balance{tt.currency, tt.balance, tt.bitcoin}, got); diff != "" {
						t.Errorf("reply (-want +got):\n%s", diff)
					}
				})
			}
		}
	})
}

// TestConformancePayoutsReply checks /payouts (spec 2.5, 4.1): newest
// first, "to" as the caller gave it, the amount, the D23 date in UTC from
// the injected clock, and the currency filter.
func TestConformancePayoutsReply(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{}) // its own env: this test moves the clock
		s := newScene(t, env, map[string]int64{"BTC": 10_000, "DOGE": 10_000})
		alice := newUser(t, env, "alice")
		bob := newUser(t, env, "bob")
		upperHash := strings.ToUpper(bob.PayoutUserHash)
		mixedEmail := "ALICE" + alice.Email[len("alice"):]

		// The clock starts at 2026-03-14 15:09:26 UTC (apptest).
		s.send(t, 200, "to", mixedEmail, "amount", "100", "currency", "BTC")
		env.Clock.Advance(9 * time.Hour) // 2026-03-15 00:09:26: day and month differ
		s.send(t, 200, "to", upperHash, "amount", "200", "currency", "DOGE")
		env.Clock.Advance(20*24*time.Hour + time.Second) // 2026-04-04 00:09:27
		s.send(t, 200, "to", bob.Username, "amount", "300", "currency", "BTC", "ip_address", "203.0.113.9", "referral", "tag")

		third := reward{bob.Username, 300, "04-04-26 00:09:27 GMT"}
		second := reward{upperHash, 200, "15-03-26 00:09:26 GMT"}
		first := reward{mixedEmail, 100, "14-03-26 15:09:26 GMT"}
		tests := []struct {
			name  string
			pairs []string
			want  []reward
		}{
			{"all coins newest first", nil, []reward{third, second, first}},
			{"one coin", []string{"currency", "BTC"}, []reward{third, first}},
			{"another coin", []string{"currency", "DOGE"}, []reward{second}},
			{"a coin without payouts is an empty array", []string{"currency", "LTC"}, []reward{}},
			{"count limits to the newest", []string{"count", "2"}, []reward{third, second}},
			{"count and currency together", []string{"count", "1", "currency", "BTC"}, []reward{third}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.post(t, "/payouts", tt.pairs...)
				got := decodeRewards(t, r)
				if got == nil {
					got = []reward{}
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("rewards (-want +got):\n%s", diff)
				}
			})
		}

		// A faucet lists its own payouts only.
		other := newScene(t, env, nil)
		if got := decodeRewards(t, other.post(t, "/payouts")); len(got) != 0 {
			t.Errorf("another faucet lists %d payouts, want 0: %+v", len(got), got)
		}
	})
}

// TestConformancePayoutsCount checks the count parameter (spec 4.1, 8,
// D27): default 10, 1-100 honoured, integers outside clamped into 1-100,
// anything else means 10.
func TestConformancePayoutsCount(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{})
		s := newScene(t, env, map[string]int64{"BTC": 1_000_000})
		to := newUser(t, env, "cnt")
		const total = 105 // more than the maximum count
		for i := 1; i <= total; i++ {
			env.Clock.Advance(time.Second) // keeps the request bucket (D40) from emptying
			s.send(t, 200, "to", to.Username, "amount", strconv.Itoa(i), "currency", "BTC")
		}
		tests := []struct {
			name  string
			count *string // nil: not sent
			want  int
		}{
			{"absent means 10", nil, 10},
			{"empty means 10", ptr(""), 10},
			{"1 is the minimum", ptr("1"), 1},
			{"in range", ptr("37"), 37},
			{"100 is the maximum", ptr("100"), 100},
			{"above 100 is clamped to 100", ptr("101"), 100},
			{"far above is clamped to 100", ptr("100000"), 100},
			{"too long for int64 above is clamped to 100", ptr("99999999999999999999"), 100},
			{"0 is clamped to 1", ptr("0"), 1},
			{"negative is clamped to 1", ptr("-5"), 1},
			{"too long for int64 below is clamped to 1", ptr("-99999999999999999999"), 1},
			{"a fraction means 10", ptr("1.5"), 10},
			{"an exponent means 10", ptr("1e2"), 10},
			{"a word means 10", ptr("all"), 10},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var pairs []string
				if tt.count != nil {
					pairs = []string{"count", *tt.count}
				}
				got := decodeRewards(t, s.post(t, "/payouts", pairs...))
				if len(got) != tt.want {
					t.Fatalf("%d rewards, want %d", len(got), tt.want)
				}
				// The newest first: the amounts count down from the last send.
				for i, r := range got {
					if want := int64(total - i); r.Amount != want {
						t.Fatalf("rewards[%d].amount %d, want %d (newest first)", i, r.Amount, want)
					}
				}
			})
		}
	})
}

// allCoins is the active coin set of a new database, in display order
// (spec 2.6, drip.BuiltinCoins).
var allCoins = []struct{ Symbol, Name string }{
	{"BTC", "Bitcoin"}, {"ETH", "Ethereum"}, {"DOGE", "Dogecoin"}, {"LTC", "Litecoin"},
	{"BCH", "Bitcoin Cash"}, {"DASH", "Dash"}, {"DGB", "DigiByte"}, {"TRX", "Tron"},
	{"USDT", "Tether"}, {"BNB", "Binance Coin"}, {"SOL", "Solana"}, {"XRP", "Ripple"},
}

// TestConformanceCurrenciesReply checks /currencies (spec 2.6): the active
// symbols in order and their names; a disabled coin disappears from the
// list and is refused as a currency (410) until enabled again.
func TestConformanceCurrenciesReply(t *testing.T) {
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		env := checkedEnv(t, eng.Open(t), apptest.Options{}) // its own env: this test changes the coin set
		s := newScene(t, env, map[string]int64{"DOGE": 1000})
		to := newUser(t, env, "cur")
		ctx := context.Background()

		type coinName struct{ Name, Acronym string }
		check := func(t *testing.T, without string) {
			t.Helper()
			r := s.post(t, "/currencies")
			checkOK(t, r, currenciesShape)
			var symbols []string
			if err := json.Unmarshal(r.Body["currencies"], &symbols); err != nil {
				t.Fatalf("currencies = %s, want an array of strings: %v", r.Body["currencies"], err)
			}
			var names []coinName
			for i, item := range objectsMember(t, r.Body, "currencies_names") {
				if diff := cmp.Diff(coinNameShape, shapeOf(item)); diff != "" {
					t.Errorf("currencies_names[%d] members (-want +got):\n%s", i, diff)
				}
				names = append(names, coinName{stringMember(t, item, "name"), stringMember(t, item, "acronym")})
			}
			wantSymbols, wantNames := []string{}, []coinName{}
			for _, c := range allCoins {
				if c.Symbol != without {
					wantSymbols = append(wantSymbols, c.Symbol)
					wantNames = append(wantNames, coinName{c.Name, c.Symbol})
				}
			}
			if diff := cmp.Diff(wantSymbols, symbols); diff != "" {
				t.Errorf("currencies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantNames, names); diff != "" {
				t.Errorf("currencies_names (-want +got):\n%s", diff)
			}
		}

		t.Run("12 active coins in order", func(t *testing.T) { check(t, "") })
		if err := env.App.Coins.SetActive(ctx, "DOGE", false); err != nil {
			t.Fatalf("disable DOGE: %v", err)
		}
		t.Run("a disabled coin is not listed", func(t *testing.T) { check(t, "DOGE") })
		t.Run("a disabled coin is not a currency", func(t *testing.T) {
			before := s.balances(t, s.f.AccountID)
			checkError(t, s.post(t, "/send", "to", to.Username, "amount", "10", "currency", "DOGE"), 410)
			checkError(t, s.post(t, "/getbalance", "currency", "DOGE"), 410)
			checkError(t, s.post(t, "/checkaddress", "address", to.Username, "currency", "DOGE"), 410)
			checkError(t, s.post(t, "/payouts", "currency", "DOGE"), 410)
			if diff := cmp.Diff(before, s.balances(t, s.f.AccountID)); diff != "" {
				t.Errorf("refused send moved money (-before +after):\n%s", diff)
			}
		})
		if err := env.App.Coins.SetActive(ctx, "DOGE", true); err != nil {
			t.Fatalf("enable DOGE: %v", err)
		}
		t.Run("an enabled coin is back", func(t *testing.T) {
			check(t, "")
			s.send(t, 200, "to", to.Username, "amount", "10", "currency", "DOGE")
		})
	})
}
