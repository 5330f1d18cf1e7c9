package apiv2

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
)

// TestUniqueMembers: the walk finds a member repeated in any object of a
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
			err := uniqueMembers([]byte(c.body))
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
