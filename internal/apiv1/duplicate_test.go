package apiv1_test

import (
	"encoding/json"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
)

// pairEncodings are the three body formats of D20, each encoding name-value
// pairs in the order given, repeats included.
var pairEncodings = []struct {
	name   string
	encode func(pairs [][2]string) (body, contentType string)
}{
	{"form", func(pairs [][2]string) (string, string) {
		var parts []string
		for _, p := range pairs {
			parts = append(parts, url.QueryEscape(p[0])+"="+url.QueryEscape(p[1]))
		}
		return strings.Join(parts, "&"), "application/x-www-form-urlencoded"
	}},
	{"multipart", func(pairs [][2]string) (string, string) {
		var b strings.Builder
		w := multipart.NewWriter(&b)
		_ = w.SetBoundary("drip-duplicate-parameters") // a valid boundary: cannot fail
		for _, p := range pairs {
			_ = w.WriteField(p[0], p[1]) // a strings.Builder takes every write
		}
		_ = w.Close()
		return b.String(), w.FormDataContentType()
	}},
	{"JSON", func(pairs [][2]string) (string, string) {
		var members []string
		for _, p := range pairs {
			name, _ := json.Marshal(p[0]) // strings always marshal
			value, _ := json.Marshal(p[1])
			members = append(members, string(name)+":"+string(value))
		}
		return "{" + strings.Join(members, ",") + "}", "application/json"
	}},
}

// TestDuplicateParametersFirstWins: a parameter given more than once is
// read from its first occurrence, in a form, a multipart and a JSON body
// alike (issue 9 item 5): the same pairs get the same outcome in each.
func TestDuplicateParametersFirstWins(t *testing.T) {
	t.Parallel()
	const wrongKey = "not-the-faucets-key"
	send := func(extra ...[2]string) [][2]string {
		return append([][2]string{{"api_key", keyMark}, {"to", "alice"}, {"amount", "1000"}, {"currency", "BTC"}}, extra...)
	}
	for _, c := range []struct {
		name  string
		pairs [][2]string
		want  int
		pays  int64
	}{
		{"api_key valid then invalid", send([2]string{"api_key", wrongKey}), 200, sendAmount},
		{"api_key invalid then valid", [][2]string{{"api_key", wrongKey}, {"to", "alice"}, {"amount", "1000"}, {"currency", "BTC"}, {"api_key", keyMark}}, 403, 0},
		{"api_key empty then valid", [][2]string{{"api_key", ""}, {"to", "alice"}, {"amount", "1000"}, {"currency", "BTC"}, {"api_key", keyMark}}, 403, 0},
		{"amount valid then larger", send([2]string{"amount", "5000"}), 200, sendAmount},
		{"amount valid then invalid", send([2]string{"amount", "1.5"}), 200, sendAmount},
		{"amount invalid then valid", [][2]string{{"api_key", keyMark}, {"to", "alice"}, {"amount", "1.5"}, {"currency", "BTC"}, {"amount", "1000"}}, 405, 0},
		{"amount beyond the balance then valid", [][2]string{{"api_key", keyMark}, {"to", "alice"}, {"amount", "999999999"}, {"currency", "BTC"}, {"amount", "1000"}}, 402, 0},
		{"currency valid then unknown", send([2]string{"currency", "NOPE"}), 200, sendAmount},
		{"to alice then bob", send([2]string{"to", "bob"}), 200, sendAmount},
	} {
		var cases []requestCase
		for _, f := range pairEncodings {
			_, contentType := f.encode(c.pairs)
			cases = append(cases, requestCase{name: f.name, contentType: contentType, want: c.want, paysAlice: c.pays,
				bodyOf: func(key string) string {
					pairs := make([][2]string, len(c.pairs))
					for i, p := range c.pairs {
						pairs[i] = [2]string{p[0], strings.ReplaceAll(p[1], keyMark, key)}
					}
					body, _ := f.encode(pairs)
					return body
				}})
		}
		t.Run(c.name, func(t *testing.T) {
			runRequestCases(t, cases) // in parallel
		})
	}
}

// TestDuplicateJSONMemberFirstWins: in a JSON body the first occurrence
// wins even where a form has no twin: a first null means absent, and a
// name written with escapes is the same member.
func TestDuplicateJSONMemberFirstWins(t *testing.T) {
	json := func(name, members string, want int, pays int64) requestCase {
		return requestCase{name: name, contentType: "application/json", body: "{" + members + "}", want: want, paysAlice: pays}
	}
	runRequestCases(t, []requestCase{
		json("api_key null then valid", `"api_key":null,"to":"alice","amount":1000,"currency":"BTC","api_key":"$KEY"`, 403, 0),
		json("amount null then valid", `"api_key":"$KEY","to":"alice","amount":null,"currency":"BTC","amount":1000`, 405, 0),
		json("amount a number then a string", `"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC","amount":"5000"`, 200, sendAmount),
		json("amount then an escaped amount", `"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC","\u0061mount":"1.5"`, 200, sendAmount),
		json("api_key then an object", `"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC","api_key":{"k":1}`, 200, sendAmount),
		json("a malformed repeat is still malformed", `"api_key":"$KEY","to":"alice","amount":1000,"currency":"BTC","api_key":tru`, 403, 0),
	})
}
