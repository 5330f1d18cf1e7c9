package apiv2

import (
	"reflect"
	"testing"

	"github.com/dripfaucet/drip/internal/operation"
)

// flatProbe has a field of every kind decodeFlat meets: the ones it sets
// (string, bool, operation.Amount) and the ones it leaves to the strict
// path (an integer, a list, a pointer, a field the JSON ignores, a
// ",string" field).
type flatProbe struct {
	Name    string           `json:"name"`
	Flag    bool             `json:"flag,omitempty"`
	Amount  operation.Amount `json:"amount"`
	Count   int64            `json:"count"`
	List    []string         `json:"list"`
	Limit   *int             `json:"limit"`
	Quoted  int64            `json:"quoted,string"`
	Ignored string           `json:"-"`
}

// decodeBoth decodes body into a T by decodeFlat and by decodeStrict, and
// fails t where decodeFlat accepted what the strict path did not, or set
// anything else, or set anything while declining.
func decodeBoth[T any](t *testing.T, body []byte) (fast bool) {
	t.Helper()
	var flat, strict T
	fast = decodeFlat(body, &flat)
	err := decodeStrict(body, &strict)
	switch {
	case fast && err != nil:
		t.Errorf("%q: decodeFlat accepted what the strict path refuses: %v", body, err)
	case fast && !reflect.DeepEqual(flat, strict):
		t.Errorf("%q: decodeFlat set %+v, the strict path %+v", body, flat, strict)
	case !fast && !reflect.ValueOf(flat).IsZero():
		t.Errorf("%q: decodeFlat declined but set %+v", body, flat)
	}
	return fast
}

// TestDecodeFlat: the bodies decodeFlat reads alone, each decoded as the
// strict path decodes it, and the ones it leaves to the strict path.
func TestDecodeFlat(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body string
		fast bool
	}{
		// Read alone.
		{`{"idempotency_key":"k-1","to":"alice","amount":1000,"currency":"BTC"}`, true},
		{" \t\r\n{ \"to\" : \"alice\" ,\n\"amount\":\"1000\", \"dry_run\": true } \n", true},
		{`{"amount":-0.5e+10,"dry_run":false,"ip_address":"203.0.113.7","referral":""}`, true},
		{`{"amount":"not a number","to":"ünïcødé ✓"}`, true},
		{`{}`, true},
		{`{"amount":0}`, true},
		// Left to the strict path.
		{`{"to":"al\u0069ce"}`, false},       // an escape
		{`{"to":"a\u0000"}`, false},          // a NUL escape
		{`{"to":null}`, false},               // null
		{`{"to":1}`, false},                  // a number for a string
		{`{"amount":true}`, false},           // true for an amount
		{`{"dry_run":"true"}`, false},        // a string for a bool
		{`{"dry_run":1}`, false},             // a number for a bool
		{`{"to":"a","to":"b"}`, false},       // a repeat
		{`{"To":"a"}`, false},                // another case
		{`{"nope":"a"}`, false},              // unknown
		{`{"to":"a"} {}`, false},             // data after the object
		{`{"to":"a",}`, false},               // a trailing comma
		{`{"to":"a"`, false},                 // cut short
		{`{"amount":01}`, false},             // a leading zero
		{`{"amount":1.}`, false},             // a bare point
		{`{"amount":1e}`, false},             // a bare exponent
		{`{"amount":-}`, false},              // a bare sign
		{`{"amount":+1}`, false},             // a plus
		{`{"dry_run":tru}`, false},           // cut short
		{`{"dry_run":truex}`, false},         // too long
		{"{\"to\":\"a\tb\"}", false},         // a raw control character
		{"{\"to\":\"\xff\"}", false},         // not UTF-8
		{`["to"]`, false},                    // not an object
		{`null`, false},                      // not an object
		{`{"to":{"a":1}}`, false},            // nested
		{"\xef\xbb\xbf{}", false},            // a byte order mark
		{`{"idempotency_key":["k"]}`, false}, // a list for a string
		{`{"amount":1000 "to":"a"}`, false},  // no comma
		{`{"amount" 1000}`, false},           // no colon
		{`{amount:1000}`, false},             // a bare name
		{`{"amount":1000,"currency":"BTC"`, false},
	} {
		if fast := decodeBoth[operation.SendParams](t, []byte(c.body)); fast != c.fast {
			t.Errorf("%q: decodeFlat read it alone: %v, want %v", c.body, fast, c.fast)
		}
	}
	for _, c := range []struct {
		body string
		fast bool
	}{
		{`{"name":"a","flag":true,"amount":5}`, true},
		{`{"count":5}`, false},
		{`{"list":[]}`, false},
		{`{"limit":3}`, false},
		{`{"quoted":"3"}`, false},
		{`{"Ignored":"x"}`, false},
		{`{"-":"x"}`, false},
	} {
		if fast := decodeBoth[flatProbe](t, []byte(c.body)); fast != c.fast {
			t.Errorf("%q into flatProbe: decodeFlat read it alone: %v, want %v", c.body, fast, c.fast)
		}
	}
}

// FuzzDecodeFlat holds decodeFlat to the strict path: whatever it reads
// alone, the strict path accepts and decodes the same.
func FuzzDecodeFlat(f *testing.F) {
	for _, s := range []string{
		`{"idempotency_key":"k-1","to":"alice","amount":1000,"currency":"BTC","ip_address":"203.0.113.7"}`,
		`{"to":"a","amount":"12","dry_run":true,"referral":"r"}`,
		`{"amount":-1.5E-3}`, `{"to":"a\u0062"}`, `{"to":"a","to":"a"}`, ` {} `, `{"dry_run":false}`,
		`{"name":"n","flag":false,"count":1,"list":["a"],"limit":null,"quoted":"1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeBoth[operation.SendParams](t, body)
		decodeBoth[flatProbe](t, body)
	})
}
