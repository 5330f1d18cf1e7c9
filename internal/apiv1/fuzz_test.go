package apiv1_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
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
// testdata/fuzz/<FuzzName>/. In a fuzz input, keyMark ("$KEY") stands
// for the faucet's v1 key, which is random per run, and hashMark
// ("$HASH") for alice's payout_user_hash.
//
// Every input must get HTTP 200 with a JSON envelope whose status is one
// send can give, and must move money only when that status is 200: then the
// faucet loses what a recipient gains. The ledger reconciles after each
// input (D3). The fixture survives across inputs, so the faucet is topped
// up when it runs low and the key's bucket is too large to empty.

// seed is a nasty input, added with f.Add; the committed corpus under
// testdata/fuzz holds these cases by name, and more.
type seed struct{ contentType, body string }

var formSeeds = []seed{
	{formType, "api_key=$KEY&to=alice&amount=1000&currency=BTC"},
	{formType, "api_key=$KEY&to=$HASH&amount=1000&currency=BTC&ip_address=203.0.113.7&referral=true"},
	{formType, "api_key=$KEY&to=1BoatSLRHtKNngkdXEeobR76b53LETtpyT&amount=5&currency=BTC"},
	{formType, "api_key=$KEY&to=alice@example.com&amount=1000&currency=DOGE"},
	{"", "api_key=$KEY&to=alice&amount=1000&currency=BTC"},
	{formType, ""},
	{formType, "junk=%zz&api_key=$KEY&to=alice&amount=1000&currency=BTC&tail=%"},
	{formType, "api_key=%zz$KEY&to=alice&amount=1000&currency=BTC"},
	{formType, "api_key=$KEY;&to=alice&amount=1000&currency=BTC"},
	{formType, "api_key=$KEY&to=%FF%FEalice%00&amount=1000&currency=BTC&referral=%C3&ip_address=%00%FF"},
	{formType, "api_key=$KEY&to=alice&amount=1000&currency=BTC&referral=" + strings.Repeat("a", 63) + "%C3%A9"},
	{formType, "api_key=$KEY&to=" + strings.Repeat("a", 319) + "%C3%A9&amount=1000&currency=BTC"},
	{formType, "api_key=$KEY&to=" + strings.Repeat("a", 10_000) + "&amount=1000&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=1.5&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=-1&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=0&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=1e3&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=99999999999999999999&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=9223372036854775807&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=%201&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=+1&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=0x10&currency=BTC"},
	{formType, "api_key=$KEY&to=alice&amount=1000&currency=btc"},
	{formType, "api_key=$KEY&to=alice&amount=1000&currency=XYZ"},
	{formType, "api_key=$KEY&to=nobody&amount=1000&currency=BTC"},
	{formType, "api_key=$KEY&api_key=wrong&to=alice&to=bob&amount=1000&amount=-1&currency=BTC"},
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
	for _, s := range formSeeds {
		f.Add(s.contentType, []byte(s.body))
	}
	fx := newSendFixture(f, 1)
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		if strings.ContainsFunc(contentType, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			t.Skip("net/http cannot send control bytes in a header")
		}
		fx.send(t, 0, contentType, fx.fill(0, body))
	})
}

var jsonSeeds = []string{
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
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	fx := newSendFixture(f, 1)
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
	fx := newSendFixture(f, 3)
	f.Fuzz(func(t *testing.T, to, amount, currency, ipAddress, referral string) {
		// The marks are replaced in the fields, not in the encoded bodies,
		// where form encoding would hide them.
		to = strings.ReplaceAll(to, hashMark, fx.hash)
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
		asForm := run(0, formType, []byte(form.Encode()))
		asJSON := run(1, "application/json", mustJSON(t, fields(1)))
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
		if isJSONNumber(amount) {
			numeric := map[string]any{}
			for k, v := range fields(2) {
				numeric[k] = v
			}
			numeric["amount"] = json.RawMessage(amount)
			compare("JSON with a numeric amount", run(2, "application/json", mustJSON(t, numeric)))
		}
	})
}
