package apiv1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// Fuzz targets for v1 request parsing (D20-D22, D27). Run one with
//
//	go test ./internal/apiv1/ -run '^$' -fuzz '^FuzzV1Send$' -fuzztime 60s -fuzzminimizetime 200x
//
// (Each input is a real HTTP request and ledger check, a few milliseconds;
// with the default minimization budget of 60s the workers spend most of a
// short run shrinking inputs that merely found new coverage.)
//
// Plain `go test` runs the f.Add seeds and the committed corpus under
// testdata/fuzz/<FuzzName>/. In a fuzz input, robustKeyMark ("$KEY") stands
// for the faucet's v1 key, which is random per run, and fuzzHashMark
// ("$HASH") for alice's payout_user_hash.
//
// Every input must get HTTP 200 with a JSON envelope whose status is one
// send can give, and must move money only when that status is 200: then the
// faucet loses what a recipient gains. The ledger reconciles after each
// input (D3). The fixture survives across inputs, so the faucet is topped
// up when it runs low and the key's bucket is too large to empty.

const fuzzHashMark = "$HASH"

// fuzzFunds is a faucet's balance at start and after each top-up.
const fuzzFunds = 1_000_000_000_000

// fuzzSendStatuses are the v1 statuses /send may answer in these fixtures
// (spec 7.1); 401 cannot occur as no faucet has an IP whitelist.
var fuzzSendStatuses = map[int]bool{200: true, 402: true, 403: true, 404: true, 405: true, 410: true, 450: true, 456: true, 457: true, 459: true}

// fuzzFixture is an SQLite app with funded faucets and the users they can pay.
type fuzzFixture struct {
	env     *apptest.Env
	faucets []*drip.Faucet
	keys    []string
	users   []*drip.User // every user a send can pay: the owners, alice, bob
	hash    string       // alice's payout_user_hash
}

func newFuzzFixture(f *testing.F, faucets int) *fuzzFixture {
	f.Helper()
	env := apptest.New(f, storetest.OpenSQLite(f), apptest.Options{Rate: ratelimit.Config{PerMinute: 60_000, Burst: 1 << 30}})
	fx := &fuzzFixture{env: env}
	for range faucets {
		fc, key := env.Faucet(f, map[string]int64{"BTC": fuzzFunds, "DOGE": fuzzFunds})
		owner, err := env.App.Store.UserGetByID(context.Background(), fc.OwnerID)
		if err != nil {
			f.Fatal(err)
		}
		fx.faucets, fx.keys, fx.users = append(fx.faucets, fc), append(fx.keys, key), append(fx.users, owner)
	}
	alice, bob := env.User(f, "alice"), env.User(f, "bob")
	if err := env.App.Users.LinkAddress(context.Background(), bob, "BTC", "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"); err != nil {
		f.Fatal(err)
	}
	fx.users, fx.hash = append(fx.users, alice, bob), alice.PayoutUserHash
	return fx
}

// fill puts the real key (of faucet i) and hash in place of their marks.
func (fx *fuzzFixture) fill(i int, b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(robustKeyMark), []byte(fx.keys[i]))
	return bytes.ReplaceAll(b, []byte(fuzzHashMark), []byte(fx.hash))
}

// fuzzMoney is every balance a send can change.
type fuzzMoney struct {
	faucet map[string]int64 // per coin
	users  map[string]int64 // per coin, all users together
}

func (fx *fuzzFixture) money(t *testing.T, i int) fuzzMoney {
	t.Helper()
	m := fuzzMoney{faucet: map[string]int64{}, users: map[string]int64{}}
	for _, coin := range []string{"BTC", "DOGE"} {
		m.faucet[coin] = fx.env.Balance(t, fx.faucets[i].AccountID, coin)
		for _, u := range fx.users {
			m.users[coin] += fx.env.Balance(t, u.AccountID, coin)
		}
	}
	return m
}

// topUp refills faucet i when a coin runs low, so that sends keep reaching
// the ledger for the whole run.
func (fx *fuzzFixture) topUp(t *testing.T, i int) {
	t.Helper()
	for _, coin := range []string{"BTC", "DOGE"} {
		if b := fx.env.Balance(t, fx.faucets[i].AccountID, coin); b < fuzzFunds/2 {
			if _, err := fx.env.App.Ledger.Deposit(context.Background(), fx.faucets[i], coin, fuzzFunds-b); err != nil {
				t.Fatalf("top up: %v", err)
			}
		}
	}
}

// send posts body to /send as faucet i and checks the reply and the money
// it moved; it returns the reply and the amount paid (0 when refused).
func (fx *fuzzFixture) send(t *testing.T, i int, contentType string, body []byte) (*apptest.Reply, int64) {
	t.Helper()
	fx.topUp(t, i)
	before := fx.money(t, i)
	r := fx.env.Do(t, http.MethodPost, "/send", contentType, string(body))
	after := fx.money(t, i)

	if r.HTTPStatus != http.StatusOK {
		t.Fatalf("HTTP status %d, want 200 (spec 7.1): %s", r.HTTPStatus, r.Raw)
	}
	status := r.Status()
	if !fuzzSendStatuses[status] {
		t.Fatalf("status %d is not a send status of spec 7.1: %s", status, r.Raw)
	}
	var message string
	if json.Unmarshal(r.Body["message"], &message) != nil || message == "" {
		t.Fatalf("message missing or not a string (spec 2.1): %s", r.Raw)
	}
	if strings.Contains(r.Raw, fx.keys[i]) {
		t.Fatalf("reply echoes the api_key (D25): %s", r.Raw)
	}
	var paid int64
	for coin, b := range after.faucet {
		if b < 0 {
			t.Fatalf("faucet %s balance is negative: %d", coin, b)
		}
		debit, credit := before.faucet[coin]-b, after.users[coin]-before.users[coin]
		if debit != credit {
			t.Fatalf("%s: the faucet lost %d, the users gained %d", coin, debit, credit)
		}
		if debit < 0 || (debit > 0 && status != 200) {
			t.Fatalf("%s: the faucet's balance went from %d to %d on status %d: %s", coin, before.faucet[coin], b, status, r.Raw)
		}
		paid += debit
	}
	if status == 200 {
		var reply struct {
			Currency string `json:"currency"`
			Balance  int64  `json:"balance"`
			PayoutID int64  `json:"payout_id"`
		}
		if err := json.Unmarshal([]byte(r.Raw), &reply); err != nil {
			t.Fatalf("paid reply: %v: %s", err, r.Raw)
		}
		if paid <= 0 || reply.PayoutID <= 0 || reply.Balance != after.faucet[reply.Currency] {
			t.Fatalf("paid reply %s, but the faucet paid %d and holds %d %s", r.Raw, paid, after.faucet[reply.Currency], reply.Currency)
		}
	}
	fx.env.Reconcile(t)
	return r, paid
}

// fuzzSeed is a nasty input, added with f.Add; the committed corpus under
// testdata/fuzz holds these cases by name, and more.
type fuzzSeed struct{ contentType, body string }

const fuzzFormType = "application/x-www-form-urlencoded"

var fuzzFormSeeds = []fuzzSeed{
	{fuzzFormType, "api_key=$KEY&to=alice&amount=1000&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=$HASH&amount=1000&currency=BTC&ip_address=203.0.113.7&referral=true"},
	{fuzzFormType, "api_key=$KEY&to=1BoatSLRHtKNngkdXEeobR76b53LETtpyT&amount=5&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice@example.com&amount=1000&currency=DOGE"},
	{"", "api_key=$KEY&to=alice&amount=1000&currency=BTC"},
	{fuzzFormType, ""},
	{fuzzFormType, "junk=%zz&api_key=$KEY&to=alice&amount=1000&currency=BTC&tail=%"},
	{fuzzFormType, "api_key=%zz$KEY&to=alice&amount=1000&currency=BTC"},
	{fuzzFormType, "api_key=$KEY;&to=alice&amount=1000&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=%FF%FEalice%00&amount=1000&currency=BTC&referral=%C3&ip_address=%00%FF"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=1000&currency=BTC&referral=" + strings.Repeat("a", 63) + "%C3%A9"},
	{fuzzFormType, "api_key=$KEY&to=" + strings.Repeat("a", 319) + "%C3%A9&amount=1000&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=" + strings.Repeat("a", 10_000) + "&amount=1000&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=1.5&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=-1&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=0&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=1e3&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=99999999999999999999&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=9223372036854775807&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=%201&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=+1&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=0x10&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=1000&currency=btc"},
	{fuzzFormType, "api_key=$KEY&to=alice&amount=1000&currency=XYZ"},
	{fuzzFormType, "api_key=$KEY&to=nobody&amount=1000&currency=BTC"},
	{fuzzFormType, "api_key=$KEY&api_key=wrong&to=alice&to=bob&amount=1000&amount=-1&currency=BTC"},
	{"application/json", `{"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC"}`},
	{"application/json", `{"api_key":"$KEY","to":"alice","amount":"1e3","currency":"BTC"}`},
	{"application/json", `{"api_key":"$KEY","to":["alice"],"amount":{"n":1},"currency":null}`},
	{"application/json; charset=utf-8", `{"api_key":"$KEY"`},
	{"application/json", `null`},
	{"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"api_key\"\r\n\r\n$KEY\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"to\"\r\n\r\nalice\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n1000\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"currency\"\r\n\r\nBTC\r\n--b--\r\n"},
	{"multipart/form-data", "--b\r\nContent-Disposition: form-data; name=\"api_key\"\r\n\r\n$KEY\r\n--b--\r\n"},
	{"multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"api_key\"; filename=\"k\"\r\n\r\n$KEY\r\n--b--\r\n"},
	{"text/plain", "api_key=$KEY&to=alice&amount=1000&currency=BTC"},
}

// FuzzV1Send fuzzes the raw body and Content-Type of /api/v1/send.
func FuzzV1Send(f *testing.F) {
	for _, s := range fuzzFormSeeds {
		f.Add(s.contentType, []byte(s.body))
	}
	fx := newFuzzFixture(f, 1)
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		if strings.ContainsFunc(contentType, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			t.Skip("net/http cannot send control bytes in a header")
		}
		fx.send(t, 0, contentType, fx.fill(0, body))
	})
}

var fuzzJSONSeeds = []string{
	`{"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":"$HASH","amount":"1000","currency":"DOGE","ip_address":"203.0.113.7","referral":true}`,
	`{"api_key":"$KEY","to":"alice","amount":1000.0,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice","amount":1e3,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice","amount":"1e3","currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice","amount":-1,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice","amount":99999999999999999999,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice","amount":[1000],"currency":"BTC"}`,
	`{"api_key":"$KEY","to":{"u":"alice"},"amount":1000,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":null,"amount":null,"currency":null}`,
	`{"api_key":["$KEY"],"to":"alice","amount":1000,"currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice\u0000","amount":1000,"currency":"BTC","referral":"\ud800"}`,
	"{\"api_key\":\"$KEY\",\"to\":\"alice\xff\",\"amount\":1000,\"currency\":\"BTC\"}",
	`{"api_key":"$KEY","to":"alice","amount":1000,"currency":"btc"}`,
	`{"api_key":"$KEY","amount":-1,"amount":1000,"to":"alice","currency":"BTC"}`,
	`{"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC"} trailing`,
	`{"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC"}}`,
	`[]`,
	`null`,
	``,
	`{"api_key":"$KEY","x":[[[[[[[[[[{"y":[]}]]]]]]]]]]}`,
}

// FuzzV1SendJSON fuzzes JSON bodies of /api/v1/send (D20, D27).
func FuzzV1SendJSON(f *testing.F) {
	for _, s := range fuzzJSONSeeds {
		f.Add([]byte(s))
	}
	fx := newFuzzFixture(f, 1)
	f.Fuzz(func(t *testing.T, body []byte) {
		fx.send(t, 0, "application/json", fx.fill(0, body))
	})
}

// FuzzV1JSONMatchesForm sends the same fields as a form, as JSON strings,
// and (when amount is a JSON number) as JSON with a numeric amount, each to
// its own faucet: D20 accepts the encodings alike, so the three must get
// the same status and message, move the same amount, and store the same
// payout.
func FuzzV1JSONMatchesForm(f *testing.F) {
	f.Add("alice", "1000", "BTC", "203.0.113.7", "ref")
	f.Add("$HASH", "1", "DOGE", "", "true")
	f.Add("alice@example.com", "1e3", "BTC", "", "")
	f.Add("alice", "1000.0", "BTC", "", "")
	f.Add("alice", "-5", "BTC", "", "")
	f.Add("alice", "99999999999999999999", "BTC", "", "")
	f.Add("bob", "1000", "btc", "", "")
	f.Add("nobody", "1000", "BTC", "", "")
	f.Add("alice\x00", "1000\x00", "BTC\x00", "203.0.113.7\x00", "a\x00b")
	f.Add("alice\xff", "1000", "BTC", "\xff", "\xc3")
	f.Add("1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "20", "BTC", strings.Repeat("9", 100), strings.Repeat("é", 40))
	f.Add(" alice ", " 1000", "BTC", " 203.0.113.7 ", " ref ")
	fx := newFuzzFixture(f, 3)
	f.Fuzz(func(t *testing.T, to, amount, currency, ipAddress, referral string) {
		// The marks are replaced in the fields, not in the encoded bodies,
		// where form encoding would hide them.
		to = strings.ReplaceAll(to, fuzzHashMark, fx.hash)
		fields := func(i int) map[string]string {
			return map[string]string{"api_key": fx.keys[i], "to": to, "amount": amount, "currency": currency, "ip_address": ipAddress, "referral": referral}
		}
		type outcome struct {
			Status  int
			Message string
			Paid    int64
			Payout  *drip.Payout
		}
		run := func(i int, contentType string, body []byte) outcome {
			r, paid := fx.send(t, i, contentType, body)
			o := outcome{Status: r.Status(), Paid: paid}
			_ = json.Unmarshal(r.Body["message"], &o.Message)
			if paid > 0 {
				list, err := fx.env.App.Store.PayoutList(context.Background(), &store.PayoutListParams{FaucetID: fx.faucets[i].ID, Limit: 1})
				if err != nil || len(list) != 1 {
					t.Fatalf("payout list: %v %v", list, err)
				}
				p := list[0]
				o.Payout = &drip.Payout{RecipientID: p.RecipientID, To: p.To, Coin: p.Coin, Amount: p.Amount, IPAddress: p.IPAddress, Referral: p.Referral}
			}
			return o
		}
		form := url.Values{}
		for k, v := range fields(0) {
			form.Set(k, v)
		}
		asForm := run(0, fuzzFormType, []byte(form.Encode()))
		asJSON := run(1, "application/json", fuzzJSON(t, fields(1)))
		// json.Marshal writes each invalid byte as its own U+FFFD where the
		// form's decoding writes one per run, so only valid UTF-8 is stored
		// the same way by both.
		valid := true
		for _, v := range fields(0) {
			valid = valid && utf8.ValidString(v)
		}
		compare := func(name string, got outcome) {
			if !valid {
				asForm.Payout, got.Payout = nil, nil
			}
			if asForm.Status != got.Status || asForm.Message != got.Message || asForm.Paid != got.Paid ||
				(asForm.Payout == nil) != (got.Payout == nil) || (got.Payout != nil && *asForm.Payout != *got.Payout) {
				t.Fatalf("form and %s disagree:\nform %+v %+v\n%s %+v %+v", name, asForm, asForm.Payout, name, got, got.Payout)
			}
		}
		compare("JSON", asJSON)
		if fuzzIsJSONNumber(amount) {
			numeric := map[string]any{}
			for k, v := range fields(2) {
				numeric[k] = v
			}
			numeric["amount"] = json.RawMessage(amount)
			compare("JSON with a numeric amount", run(2, "application/json", fuzzJSON(t, numeric)))
		}
	})
}

// fuzzIsJSONNumber reports whether s is one JSON number literal.
func fuzzIsJSONNumber(s string) bool {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return false
	}
	n, ok := v.(json.Number)
	return ok && n.String() == s
}

func fuzzJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
