// Conformance tests of the v1 interface (spec 2.1-2.6, 4.1, 5 v1, 7.1, 8;
// DESIGN D1, D11-D13, D20-D27, D40-D42, D51). They drive the real server
// over HTTP, through apptest, on every engine storetest.Engines gives.
//
// This file holds the shared helpers and the success replies of every
// endpoint, field by field and type by type. v1_status_test.go provokes
// every status of spec 7.1 and the D21 order; v1_flow_test.go covers
// destinations (D11), key rotation (D13), events (D51) and bodies (D20).
//
// Helpers carry the prefix conf so they cannot clash with the other test
// files of this package.
package apiv1_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// confRun runs fn as a parallel subtest on every engine (D30, D31).
func confRun(t *testing.T, fn func(t *testing.T, eng storetest.Engine)) {
	t.Helper()
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, eng)
		})
	}
}

// confEnv starts the application on a fresh store of eng. The ledger is
// reconciled (D3) when the test and all its subtests have ended.
func confEnv(t *testing.T, eng storetest.Engine, opts apptest.Options) *apptest.Env {
	t.Helper()
	env := apptest.New(t, eng.Open(t), opts)
	t.Cleanup(func() { confReconcile(t, env) })
	return env
}

// confReconcile is env.Reconcile reporting with Errorf, so it may run in a
// cleanup.
func confReconcile(t testing.TB, env *apptest.Env) {
	t.Helper()
	r, err := env.App.Ledger.Reconcile(context.Background())
	if err != nil {
		t.Errorf("reconcile: %v", err)
		return
	}
	if !r.OK() {
		t.Errorf("ledger does not reconcile (D3): %+v", r)
	}
}

// confSeq makes usernames unique across the parallel tests sharing an env.
var confSeq atomic.Int64

// confSeqName is a fresh suffix for a unique name.
func confSeqName() string { return strconv.FormatInt(confSeq.Add(1), 10) }

// confAtoi reads a decimal integer the test itself wrote.
func confAtoi(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// confUser creates a verified, active user whose name starts with prefix.
func confUser(t testing.TB, env *apptest.Env, prefix string) *drip.User {
	t.Helper()
	return env.User(t, fmt.Sprintf("%s%d", prefix, confSeq.Add(1)))
}

// confScene is one faucet of an env with its v1 key.
type confScene struct {
	env *apptest.Env
	f   *drip.Faucet
	key string
}

// confNewScene creates a funded faucet and reconciles the ledger when the
// test ends.
func confNewScene(t *testing.T, env *apptest.Env, funds map[string]int64) *confScene {
	t.Helper()
	f, key := env.Faucet(t, funds)
	t.Cleanup(func() { confReconcile(t, env) })
	return &confScene{env: env, f: f, key: key}
}

// post sends a form POST to path with the faucet's key and the given
// name/value pairs.
func (s *confScene) post(t testing.TB, path string, pairs ...string) *apptest.Reply {
	t.Helper()
	return s.env.Post(t, path, confForm(s.key, pairs...))
}

// send posts /send and fails the test unless the reply has status want.
func (s *confScene) send(t testing.TB, want int, pairs ...string) *apptest.Reply {
	t.Helper()
	r := s.post(t, "/send", pairs...)
	if got := r.Status(); got != want {
		t.Fatalf("/send %v: status %d, want %d: %s", pairs, got, want, r.Raw)
	}
	return r
}

// balances is every balance of an account, for before/after comparisons.
func (s *confScene) balances(t testing.TB, accountID int64) []drip.Balance {
	t.Helper()
	b, err := s.env.App.Store.BalanceList(context.Background(), accountID)
	if err != nil {
		t.Fatalf("balance list: %v", err)
	}
	return b
}

// confForm is a form with api_key and the given name/value pairs.
func confForm(key string, pairs ...string) url.Values {
	form := url.Values{"api_key": {key}}
	for i := 0; i+1 < len(pairs); i += 2 {
		form.Set(pairs[i], pairs[i+1])
	}
	return form
}

// confShape maps each member of a JSON object to the kind of its value:
// "string", "number", "boolean", "array", "object" or "null". Comparing
// shapes checks both that every member has its type and that there is no
// member too many or too few.
func confShape(members map[string]json.RawMessage) map[string]string {
	shape := make(map[string]string, len(members))
	for name, raw := range members {
		shape[name] = confKind(raw)
	}
	return shape
}

func confKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "missing"
	}
	switch c := raw[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return "invalid " + string(raw)
}

var confIntegerRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// confInt reads a member that must be a JSON integer: a number written
// without fraction or exponent.
func confInt(t testing.TB, members map[string]json.RawMessage, name string) int64 {
	t.Helper()
	raw := string(members[name])
	if !confIntegerRE.MatchString(raw) {
		t.Errorf("%s = %s, want a JSON integer", name, raw)
		return 0
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		t.Errorf("%s = %s: %v", name, raw, err)
	}
	return n
}

// confString reads a member that must be a JSON string.
func confString(t testing.TB, members map[string]json.RawMessage, name string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(members[name], &s); err != nil {
		t.Errorf("%s = %s, want a JSON string", name, members[name])
	}
	return s
}

// confObjects decodes a member that must be an array of objects.
func confObjects(t testing.TB, members map[string]json.RawMessage, name string) []map[string]json.RawMessage {
	t.Helper()
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(members[name], &list); err != nil {
		t.Fatalf("%s = %s, want an array of objects: %v", name, members[name], err)
	}
	return list
}

// confCoinsEqual reports whether the JSON number text equals units/1e8
// exactly (D1).
func confCoinsEqual(text string, units int64) bool {
	r, ok := new(big.Rat).SetString(text)
	return ok && r.Cmp(big.NewRat(units, 100_000_000)) == 0
}

var confHashRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Error replies are the envelope alone (spec 2.1, 7.1): nothing a faucet's
// visitor should not see, and no member a client could mistake for a result.
var confErrorShape = map[string]string{"status": "number", "message": "string"}

// confCheckError checks a refusal: HTTP 200 (spec 7.1), the v1 status, an
// envelope of exactly status and message, and a message to show.
func confCheckError(t testing.TB, r *apptest.Reply, want int) {
	t.Helper()
	if r.HTTPStatus != 200 {
		t.Errorf("HTTP status %d, want 200 (spec 7.1): %s", r.HTTPStatus, r.Raw)
	}
	if got := r.Status(); got != want {
		t.Errorf("status %d, want %d: %s", got, want, r.Raw)
	}
	if want == 200 {
		return
	}
	if diff := cmp.Diff(confErrorShape, confShape(r.Body)); diff != "" {
		t.Errorf("error reply members (-want +got):\n%s\n%s", diff, r.Raw)
	}
	confInt(t, r.Body, "status")
	if confString(t, r.Body, "message") == "" {
		t.Errorf("empty message: %s", r.Raw)
	}
}

// The members of each success reply, as the handlers write them (spec 2.3-2.6).
var (
	confSendShape = map[string]string{
		"status": "number", "message": "string", "rate_limit_remaining": "number",
		"currency": "string", "balance": "number", "balance_bitcoin": "number",
		"payout_id": "number", "payout_user_hash": "string",
	}
	confCheckAddressShape = map[string]string{"status": "number", "message": "string", "payout_user_hash": "string"}
	confBalanceShape      = map[string]string{
		"status": "number", "message": "string", "currency": "string", "balance": "number", "balance_bitcoin": "number",
	}
	confPayoutsShape    = map[string]string{"status": "number", "message": "string", "rewards": "array"}
	confRewardShape     = map[string]string{"to": "string", "amount": "number", "date": "string"}
	confCurrenciesShape = map[string]string{
		"status": "number", "message": "string", "currencies": "array", "currencies_names": "array",
	}
	confCoinNameShape = map[string]string{"name": "string", "acronym": "string"}
)

// confCheckOK checks a success reply: HTTP 200, status 200 as an integer,
// a message, and exactly the members of shape.
func confCheckOK(t testing.TB, r *apptest.Reply, shape map[string]string) {
	t.Helper()
	if r.HTTPStatus != 200 {
		t.Errorf("HTTP status %d, want 200: %s", r.HTTPStatus, r.Raw)
	}
	if got := confInt(t, r.Body, "status"); got != 200 {
		t.Fatalf("status %d, want 200: %s", got, r.Raw)
	}
	if diff := cmp.Diff(shape, confShape(r.Body)); diff != "" {
		t.Errorf("reply members (-want +got):\n%s\n%s", diff, r.Raw)
	}
	if confString(t, r.Body, "message") == "" {
		t.Errorf("empty message: %s", r.Raw)
	}
}

// TestConformanceSendReply checks the /send reply member by member (spec
// 2.3, 4.1): the balance after the payout, balance_bitcoin as the exact
// decimal of balance/1e8 (D1), payout_id, payout_user_hash (D12) and
// rate_limit_remaining as the bucket's level (D24).
func TestConformanceSendReply(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
		s := confNewScene(t, env, map[string]int64{"BTC": 10_000})
		alice := confUser(t, env, "alice")

		r := s.send(t, 200, "to", alice.Username, "amount", "5679", "currency", "BTC")
		confCheckOK(t, r, confSendShape)
		first := confInt(t, r.Body, "payout_id")
		type sendFields struct {
			Currency       string
			Balance        int64
			BalanceBitcoin string // the raw JSON text
			PayoutUserHash string
			RateRemaining  string // the raw JSON text
		}
		got := sendFields{
			Currency:       confString(t, r.Body, "currency"),
			Balance:        confInt(t, r.Body, "balance"),
			BalanceBitcoin: string(r.Body["balance_bitcoin"]),
			PayoutUserHash: confString(t, r.Body, "payout_user_hash"),
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
		if !confHashRE.MatchString(got.PayoutUserHash) {
			t.Errorf("payout_user_hash %q, want 40 lowercase hex (D12)", got.PayoutUserHash)
		}

		r = s.send(t, 200, "to", alice.Email, "amount", "4321", "currency", "BTC")
		confCheckOK(t, r, confSendShape)
		got = sendFields{
			Currency:       confString(t, r.Body, "currency"),
			Balance:        confInt(t, r.Body, "balance"),
			BalanceBitcoin: string(r.Body["balance_bitcoin"]),
			PayoutUserHash: confString(t, r.Body, "payout_user_hash"),
			RateRemaining:  string(r.Body["rate_limit_remaining"]),
		}
		want = sendFields{Currency: "BTC", Balance: 0, BalanceBitcoin: "0", PayoutUserHash: alice.PayoutUserHash, RateRemaining: "118"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("second /send reply (-want +got):\n%s", diff)
		}
		if second := confInt(t, r.Body, "payout_id"); second <= first {
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
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
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
				s := confNewScene(t, env, map[string]int64{"DOGE": tt.units + 100})
				to := confUser(t, env, "bb")
				r := s.send(t, 200, "to", to.Username, "amount", "100", "currency", "DOGE")
				confCheckOK(t, r, confSendShape)
				g := s.post(t, "/getbalance", "currency", "DOGE")
				confCheckOK(t, g, confBalanceShape)
				for _, reply := range []*apptest.Reply{r, g} {
					if got := confInt(t, reply.Body, "balance"); got != tt.units {
						t.Errorf("balance %d, want %d", got, tt.units)
					}
					got := string(reply.Body["balance_bitcoin"])
					if got != tt.want {
						t.Errorf("balance_bitcoin written %s, want %s", got, tt.want)
					}
					if !confCoinsEqual(got, tt.units) {
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
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
		s := confNewScene(t, env, map[string]int64{"BTC": 1000})
		alice := confUser(t, env, "alice")
		before := s.balances(t, s.f.AccountID)

		r := s.post(t, "/checkaddress", "address", alice.Email, "currency", "BTC")
		confCheckOK(t, r, confCheckAddressShape)
		hash := confString(t, r.Body, "payout_user_hash")
		if hash != alice.PayoutUserHash {
			t.Errorf("payout_user_hash %q, want the user's %q", hash, alice.PayoutUserHash)
		}
		if !confHashRE.MatchString(hash) {
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
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
		s := confNewScene(t, env, map[string]int64{"BTC": 4321, "DOGE": 250_000_000})
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
					confCheckOK(t, r, confBalanceShape)
					type balance struct {
						Currency string
						Balance  int64
						Bitcoin  string
					}
					got := balance{confString(t, r.Body, "currency"), confInt(t, r.Body, "balance"), string(r.Body["balance_bitcoin"])}
					if diff := cmp.Diff(balance{tt.currency, tt.balance, tt.bitcoin}, got); diff != "" {
						t.Errorf("reply (-want +got):\n%s", diff)
					}
				})
			}
		}
	})
}

// confReward is a decoded /payouts item.
type confReward struct {
	To     string
	Amount int64
	Date   string
}

// confRewards checks a /payouts reply and its items' members and types
// (spec 2.5) and returns the items.
func confRewards(t testing.TB, r *apptest.Reply) []confReward {
	t.Helper()
	confCheckOK(t, r, confPayoutsShape)
	var out []confReward
	for i, item := range confObjects(t, r.Body, "rewards") {
		if diff := cmp.Diff(confRewardShape, confShape(item)); diff != "" {
			t.Errorf("rewards[%d] members (-want +got):\n%s", i, diff)
		}
		out = append(out, confReward{To: confString(t, item, "to"), Amount: confInt(t, item, "amount"), Date: confString(t, item, "date")})
	}
	return out
}

// TestConformancePayoutsReply checks /payouts (spec 2.5, 4.1): newest
// first, "to" as the caller gave it, the amount, the D23 date in UTC from
// the injected clock, and the currency filter.
func TestConformancePayoutsReply(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{}) // its own env: this test moves the clock
		s := confNewScene(t, env, map[string]int64{"BTC": 10_000, "DOGE": 10_000})
		alice := confUser(t, env, "alice")
		bob := confUser(t, env, "bob")
		upperHash := strings.ToUpper(bob.PayoutUserHash)
		mixedEmail := "ALICE" + alice.Email[len("alice"):]

		// The clock starts at 2026-03-14 15:09:26 UTC (apptest).
		s.send(t, 200, "to", mixedEmail, "amount", "100", "currency", "BTC")
		env.Clock.Advance(9 * time.Hour) // 2026-03-15 00:09:26: day and month differ
		s.send(t, 200, "to", upperHash, "amount", "200", "currency", "DOGE")
		env.Clock.Advance(20*24*time.Hour + time.Second) // 2026-04-04 00:09:27
		s.send(t, 200, "to", bob.Username, "amount", "300", "currency", "BTC", "ip_address", "203.0.113.9", "referral", "tag")

		third := confReward{bob.Username, 300, "04-04-26 00:09:27 GMT"}
		second := confReward{upperHash, 200, "15-03-26 00:09:26 GMT"}
		first := confReward{mixedEmail, 100, "14-03-26 15:09:26 GMT"}
		tests := []struct {
			name  string
			pairs []string
			want  []confReward
		}{
			{"all coins newest first", nil, []confReward{third, second, first}},
			{"one coin", []string{"currency", "BTC"}, []confReward{third, first}},
			{"another coin", []string{"currency", "DOGE"}, []confReward{second}},
			{"a coin without payouts is an empty array", []string{"currency", "LTC"}, []confReward{}},
			{"count limits to the newest", []string{"count", "2"}, []confReward{third, second}},
			{"count and currency together", []string{"count", "1", "currency", "BTC"}, []confReward{third}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := s.post(t, "/payouts", tt.pairs...)
				got := confRewards(t, r)
				if got == nil {
					got = []confReward{}
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("rewards (-want +got):\n%s", diff)
				}
			})
		}

		// A faucet lists its own payouts only.
		other := confNewScene(t, env, nil)
		if got := confRewards(t, other.post(t, "/payouts")); len(got) != 0 {
			t.Errorf("another faucet lists %d payouts, want 0: %+v", len(got), got)
		}
	})
}

// TestConformancePayoutsCount checks the count parameter (spec 4.1, 8,
// D27): default 10, 1-100 honoured, integers outside clamped into 1-100,
// anything else means 10.
func TestConformancePayoutsCount(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{})
		s := confNewScene(t, env, map[string]int64{"BTC": 1_000_000})
		to := confUser(t, env, "cnt")
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
			{"empty means 10", confPtr(""), 10},
			{"1 is the minimum", confPtr("1"), 1},
			{"in range", confPtr("37"), 37},
			{"100 is the maximum", confPtr("100"), 100},
			{"above 100 is clamped to 100", confPtr("101"), 100},
			{"far above is clamped to 100", confPtr("100000"), 100},
			{"too long for int64 above is clamped to 100", confPtr("99999999999999999999"), 100},
			{"0 is clamped to 1", confPtr("0"), 1},
			{"negative is clamped to 1", confPtr("-5"), 1},
			{"too long for int64 below is clamped to 1", confPtr("-99999999999999999999"), 1},
			{"a fraction means 10", confPtr("1.5"), 10},
			{"an exponent means 10", confPtr("1e2"), 10},
			{"a word means 10", confPtr("all"), 10},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var pairs []string
				if tt.count != nil {
					pairs = []string{"count", *tt.count}
				}
				got := confRewards(t, s.post(t, "/payouts", pairs...))
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

func confPtr[T any](v T) *T { return &v }

// confAllCoins is the active coin set of a new database, in display order
// (spec 2.6, drip.BuiltinCoins).
var confAllCoins = []struct{ Symbol, Name string }{
	{"BTC", "Bitcoin"}, {"ETH", "Ethereum"}, {"DOGE", "Dogecoin"}, {"LTC", "Litecoin"},
	{"BCH", "Bitcoin Cash"}, {"DASH", "Dash"}, {"DGB", "DigiByte"}, {"TRX", "Tron"},
	{"USDT", "Tether"}, {"BNB", "Binance Coin"}, {"SOL", "Solana"}, {"XRP", "Ripple"},
}

// TestConformanceCurrenciesReply checks /currencies (spec 2.6): the active
// symbols in order and their names; a disabled coin disappears from the
// list and is refused as a currency (410) until enabled again.
func TestConformanceCurrenciesReply(t *testing.T) {
	confRun(t, func(t *testing.T, eng storetest.Engine) {
		env := confEnv(t, eng, apptest.Options{}) // its own env: this test changes the coin set
		s := confNewScene(t, env, map[string]int64{"DOGE": 1000})
		to := confUser(t, env, "cur")
		ctx := context.Background()

		type coinName struct{ Name, Acronym string }
		check := func(t *testing.T, without string) {
			t.Helper()
			r := s.post(t, "/currencies")
			confCheckOK(t, r, confCurrenciesShape)
			var symbols []string
			if err := json.Unmarshal(r.Body["currencies"], &symbols); err != nil {
				t.Fatalf("currencies = %s, want an array of strings: %v", r.Body["currencies"], err)
			}
			var names []coinName
			for i, item := range confObjects(t, r.Body, "currencies_names") {
				if diff := cmp.Diff(confCoinNameShape, confShape(item)); diff != "" {
					t.Errorf("currencies_names[%d] members (-want +got):\n%s", i, diff)
				}
				names = append(names, coinName{confString(t, item, "name"), confString(t, item, "acronym")})
			}
			wantSymbols, wantNames := []string{}, []coinName{}
			for _, c := range confAllCoins {
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
			confCheckError(t, s.post(t, "/send", "to", to.Username, "amount", "10", "currency", "DOGE"), 410)
			confCheckError(t, s.post(t, "/getbalance", "currency", "DOGE"), 410)
			confCheckError(t, s.post(t, "/checkaddress", "address", to.Username, "currency", "DOGE"), 410)
			confCheckError(t, s.post(t, "/payouts", "currency", "DOGE"), 410)
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
