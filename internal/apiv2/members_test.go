package apiv2

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/operation"
)

// TestUniqueMembers: checkMembers finds a member repeated in any object of a
// body and names it with the object's place; it passes bodies without a
// repeat, and leaves malformed or too deep ones to the strict decode.
func TestUniqueMembers(t *testing.T) {
	t.Parallel()
	wide := make([]string, 20_000)
	for i := range wide {
		wide[i] = `"m` + strconv.Itoa(i) + `":0`
	}
	for _, c := range []struct {
		name, body string
		message    string // "" when the body passes
	}{
		{"no members", `{}`, ""},
		{"distinct members", `{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, ""},
		{"a repeat at the top", `{"a":1,"b":2,"a":3}`, `Member "a" appears more than once in the request body: send each member once.`},
		{"a repeat in an object", `{"a":{"x":1,"x":2}}`, `Member "x" appears more than once in a: send each member once.`},
		{"a repeat in a list's object", `{"list":[{"x":1},{"x":1,"y":[],"x":2}]}`, `Member "x" appears more than once in list[1]: send each member once.`},
		{"a repeat deeper", `{"a":[[{}],[{"b":{"c":1,"c":2}}]]}`, `Member "c" appears more than once in a[1][0].b: send each member once.`},
		{"a repeat in a top-level list", `[1,{"x":1,"x":2}]`, `Member "x" appears more than once in [1]: send each member once.`},
		{"an escaped repeat", `{"ab":1,"\u0061\u0062":2}`, `Member "ab" appears more than once in the request body: send each member once.`},
		{"names in another case", `{"a":1,"A":2}`, ""},
		{"values that repeat", `{"a":["x","x"],"b":"a","c":"a"}`, ""},
		{"a repeat after the object", `{"a":1} {"a":1,"a":2}`, ""},
		{"malformed before a repeat", `{"a":1,}"a":2}`, ""},
		{"a huge number", `{"a":1e999,"b":1,"b":2}`, `Member "b" appears more than once in the request body: send each member once.`},
		{"nesting past maxDepth", `{"a":` + strings.Repeat("[", maxDepth+5) + `{"x":1,"x":2}` + strings.Repeat("]", maxDepth+5) + `}`, ""},
		{"nesting to maxDepth", strings.Repeat("[", maxDepth-1) + `{"x":1,"x":2}` + strings.Repeat("]", maxDepth-1),
			`Member "x" appears more than once in ` + strings.Repeat("[0]", maxDepth-1) + `: send each member once.`},
		{"twenty thousand members", `{` + strings.Join(wide, ",") + `}`, ""},
		{"twenty thousand members and a repeat", `{` + strings.Join(wide, ",") + `,"m0":1}`, `Member "m0" appears more than once in the request body: send each member once.`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := checkMembers([]byte(c.body), nil)
			if c.message == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if drip.ErrorCode(err) != drip.CodeMalformed || drip.ErrorMessage(err) != c.message {
				t.Errorf("got %q %q, want malformed_request %q", drip.ErrorCode(err), drip.ErrorMessage(err), c.message)
			}
		})
	}
}

// TestCheckMembersFieldNames: a member matching a field of the decoded
// type only when case is ignored is an unknown field, named with its
// object's place, at any depth the type reaches (a struct, a list of
// them, a map's values, a pointer); a repeat anywhere is reported before
// it.
func TestCheckMembersFieldNames(t *testing.T) {
	t.Parallel()
	type limit struct {
		Currency string `json:"currency"`
	}
	type body struct {
		A          string           `json:"a"`
		Ratelimits []limit          `json:"ratelimits"`
		M          map[string]limit `json:"m"`
		P          *limit           `json:"p"`
		Raw        json.RawMessage  `json:"raw"`
	}
	for _, c := range []struct {
		name, body string
		code       drip.Code // "" when the body passes
		message    string
	}{
		{"known fields", `{"a":"x","ratelimits":[{"currency":"BTC"}],"m":{"k":{"currency":"BTC"}},"p":{"currency":"BTC"}}`, "", ""},
		{"an escaped known name", `{"\u0061":"x"}`, "", ""},
		{"a field in another case", `{"A":"x"}`, drip.CodeInvalid, `Unknown field "A".`},
		{"in a list's item", `{"ratelimits":[{"currency":"BTC"},{"CURRENCY":"BTC"}]}`, drip.CodeInvalid, `Unknown field "CURRENCY" in ratelimits[1].`},
		{"in a map's value", `{"m":{"k":{"Currency":"BTC"}}}`, drip.CodeInvalid, `Unknown field "Currency" in m.k.`},
		{"behind a pointer", `{"p":{"coin":"BTC"}}`, drip.CodeInvalid, `Unknown field "coin" in p.`},
		{"an escaped unknown name", `{"a":"x\"y","b\\":1}`, drip.CodeInvalid, `Unknown field "b\\".`},
		{"anything inside a raw member", `{"raw":{"Any":[{"thing":1}]}}`, "", ""},
		{"a value of another type", `{"ratelimits":"BTC","p":null}`, "", ""},
		{"a repeat after an unknown field", `{"Zed":1,"a":"x","a":"y"}`, drip.CodeMalformed, `Member "a" appears more than once in the request body: send each member once.`},
		{"a repeat under an unknown field", `{"zed":{"k":1,"k":2}}`, drip.CodeMalformed, `Member "k" appears more than once in zed: send each member once.`},
		{"not well-formed", `{"A":1,}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := checkMembers([]byte(c.body), reflect.TypeFor[body]())
			if c.code == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if drip.ErrorCode(err) != c.code || drip.ErrorMessage(err) != c.message {
				t.Errorf("got %q %q, want %q %q", drip.ErrorCode(err), drip.ErrorMessage(err), c.code, c.message)
			}
		})
	}
}

// BenchmarkDecodeSend: the checks and decode of a /send body, the v2
// request path's share of reading its input: as decode reads it (by
// decodeFlat) and by the strict path alone, as every body was read before
// decodeFlat.
func BenchmarkDecodeSend(b *testing.B) {
	in := &input{body: []byte(`{"idempotency_key":"bench-0123456789","to":"user-1234","amount":1000,"currency":"BTC","ip_address":"203.0.113.7"}`)}
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p operation.SendParams
			if err := in.decode(&p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("strict", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p operation.SendParams
			if err := decodeStrict(in.body, &p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
