// The property test of the OpenAPI document (issue 10 item 2, D39):
// requests generated from the document, valid and invalid, against a
// running server, in both directions. Every request the document allows
// gets past shape validation (never 400); every request it refuses, one
// field mutated at a time, is 400.
package apiv2_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// requestsPerPath is how many requests the property test makes per path and
// direction (POST; GET makes half as many): DRIP_PROPERTY_N, or 100,
// which keeps the test near 20 s on SQLite.
func requestsPerPath() int {
	if n, err := strconv.Atoi(os.Getenv("DRIP_PROPERTY_N")); err == nil && n > 0 {
		return n
	}
	return 100
}

// tally counts what the test tried.
type tally struct {
	valid, invalid, skipped int
	codes                   map[string]int // replies to valid requests, by status and code
}

func TestOpenAPIProperty(t *testing.T) {
	doc := openAPIJSON(t)
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			env := checkedEnv(t, engine.Open(t), apptest.Options{Rate: unlimited, CallerRate: unlimited})
			ctx := context.Background()
			for _, coin := range []string{"BTC", "DOGE", "LTC", "ETH"} {
				if err := env.App.Listing.SetCost(ctx, coin, 10); err != nil {
					t.Fatal(err)
				}
			}
			recipients := []string{}
			for _, name := range []string{"alice", "bob", "carol"} {
				u := env.User(t, fmt.Sprintf("%s%s", name, engine.Name))
				recipients = append(recipients, u.Username, u.Email, u.PayoutUserHash)
			}
			start := time.Now()
			total := tally{codes: map[string]int{}}
			paths := object(doc, "paths")
			for _, path := range slices.Sorted(maps.Keys(paths)) {
				if path == "/openapi.json" {
					continue
				}
				// Each path has a faucet of its own: what one path's
				// requests set (an IP whitelist, anti-fraud rules) does
				// not refuse another's.
				f, _ := env.Faucet(t, map[string]int64{"BTC": 1 << 50, "DOGE": 1 << 50, "LTC": 1 << 50, "ETH": 1 << 50})
				p := &generator{
					t: t, env: env, path: path, key: env.Key(t, f, drip.Scopes...),
					rand:       rand.New(rand.NewPCG(uint64(len(path)), 2026)),
					recipients: recipients,
					after: func() { // an IP whitelist without the test's address would lock it out
						if path == "/ip-whitelist/set" {
							if _, _, err := env.App.Faucets.SetIPWhitelist(ctx, f.ID, nil); err != nil {
								t.Fatal(err)
							}
						}
					},
					tally: &total,
				}
				item := object(paths, path)
				if post := object(item, "post"); post != nil {
					p.post(requestSchema(post))
				}
				if get := object(item, "get"); get != nil {
					p.get(get["parameters"])
				}
			}
			t.Logf("%s: %d requests the document allows (replies %v), %d it refuses, all answered as it says, in %v (%d generated values the document did not judge as meant were not sent)",
				engine.Name, total.valid, total.codes, total.invalid, time.Since(start).Round(time.Millisecond), total.skipped)
		})
	}
}

// generator generates and sends the requests of one path.
type generator struct {
	t          *testing.T
	env        *apptest.Env
	path, key  string
	rand       *rand.Rand
	recipients []string
	after      func()
	tally      *tally
	keys       int // sends so far, each with an idempotency key of its own
}

// post sends valid and invalid bodies, and the bodies that are not
// objects.
func (p *generator) post(s schema) {
	n := requestsPerPath()
	for i, tries := 0, 0; i < n && tries < 20*n; tries++ {
		body := p.fixup(p.valid(s, "").(map[string]any))
		raw, _ := json.Marshal(body)
		if err := apptest.ValidateV2Request(http.MethodPost, p.path, raw); err != nil {
			p.tally.skipped++
			continue
		}
		i++
		p.sendValid(http.MethodPost, p.path, raw)
	}
	for i, tries := 0, 0; i < n && tries < 20*n; tries++ {
		body := p.fixup(p.valid(s, "").(map[string]any))
		what, bad := p.mutate(s, body)
		raw, _ := json.Marshal(bad)
		if apptest.ValidateV2Request(http.MethodPost, p.path, raw) == nil {
			p.tally.skipped++
			continue
		}
		i++
		p.sendInvalid(http.MethodPost, p.path, raw, what, "")
	}
	for _, raw := range []string{"null", "[]", `[{}]`, `"x"`, "1", "true", " null "} {
		p.sendInvalid(http.MethodPost, p.path, []byte(raw), "body "+raw, string(drip.CodeMalformed))
	}
}

// get sends valid and invalid queries; a parameter given twice is 400
// malformed_request (D33), which a schema cannot say.
func (p *generator) get(params any) {
	list, _ := params.([]any)
	n := requestsPerPath() / 2
	props, required := schema{}, []any{}
	for _, e := range list {
		e := e.(map[string]any)
		props[e["name"].(string)] = e["schema"]
		if e["required"] == true {
			required = append(required, e["name"])
		}
	}
	s := schema{"type": "object", "properties": props, "required": required}
	query := func(body map[string]any) string {
		q := url.Values{}
		for k, v := range body {
			switch v := v.(type) {
			case nil:
			case string:
				q.Add(k, v)
			default:
				b, _ := json.Marshal(v)
				q.Add(k, string(b))
			}
		}
		if len(q) == 0 {
			return ""
		}
		return "?" + q.Encode()
	}
	for i, tries := 0, 0; i < n && tries < 20*n; tries++ {
		body := p.fixup(p.valid(s, "").(map[string]any))
		for k, v := range body {
			if v == nil {
				delete(body, k) // a query has no null
			}
		}
		path := p.path + query(body)
		if apptest.ValidateV2Request(http.MethodGet, path, nil) != nil {
			p.tally.skipped++
			continue
		}
		i++
		p.sendValid(http.MethodGet, path, nil)
		if len(body) > 0 { // the same parameter twice, the same value or another
			name := slices.Sorted(maps.Keys(body))[p.rand.IntN(len(body))]
			dup := url.Values{}
			dup.Add(name, fmt.Sprint(body[name]))
			dup.Add(name, fmt.Sprint(p.valid(props[name].(map[string]any), name)))
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			p.sendInvalid(http.MethodGet, path+sep+dup.Encode(), nil, name+" twice", string(drip.CodeMalformed))
		}
	}
	for i, tries := 0, 0; i < n && tries < 20*n; tries++ {
		body := p.fixup(p.valid(s, "").(map[string]any))
		what, bad := p.mutate(s, body)
		if strings.HasPrefix(what, "null") || strings.HasPrefix(what, "wrong type") && !p.queryable(bad.(map[string]any)) {
			continue // a query carries text: no null, no list or object
		}
		path := p.path + query(bad.(map[string]any))
		if !strings.HasPrefix(what, "unknown") && apptest.ValidateV2Request(http.MethodGet, path, nil) == nil {
			p.tally.skipped++ // an unknown parameter is refused by the document's text (D33)
			continue
		}
		i++
		p.sendInvalid(http.MethodGet, path, nil, what, "")
	}
}

func (p *generator) queryable(body map[string]any) bool {
	for _, v := range body {
		switch v.(type) {
		case map[string]any, []any:
			return false
		}
	}
	return true
}

// sendValid sends a request the document allows: it must get past
// validation. Refusals of business (balance, an idempotency key reused
// with other fields, a pending listing) are counted, not failed.
func (p *generator) sendValid(method, path string, raw []byte) {
	p.t.Helper()
	r := p.env.V2Do(p.t, method, p.key, path, raw, nil)
	p.after()
	p.tally.valid++
	p.tally.codes[fmt.Sprintf("%d %s", r.HTTPStatus, r.Code())]++
	if r.HTTPStatus == http.StatusBadRequest || r.HTTPStatus >= 500 || r.HTTPStatus == http.StatusUnauthorized || r.HTTPStatus == http.StatusNotFound {
		p.t.Errorf("%s %s %s: the document allows it, the server answered %d %s: %s", method, path, raw, r.HTTPStatus, r.Code(), r.Envelope.Message)
	}
}

// sendInvalid sends a request the document refuses: it must be 400, with
// code when one is given.
func (p *generator) sendInvalid(method, path string, raw []byte, what, code string) {
	p.t.Helper()
	r := p.env.V2Do(p.t, method, p.key, path, raw, nil)
	p.after()
	p.tally.invalid++
	if r.HTTPStatus != http.StatusBadRequest || (code != "" && r.Code() != code) {
		p.t.Errorf("%s %s %s (%s): the document refuses it, the server answered %d %s: %s", method, path, raw, what, r.HTTPStatus, r.Code(), r.Envelope.Message)
	}
}

// fixup makes a generated body valid for business as well as for shape
// where the document cannot say how: a recipient is a registered user, a
// faucet's URL is on its domain.
func (p *generator) fixup(body map[string]any) map[string]any {
	if _, ok := body["idempotency_key"].(string); ok {
		// A key of its own for every send: a key bound before to another
		// request is 409 idempotency_key_reuse (D35) whatever else the
		// request holds, which is not what the test asks.
		p.keys++
		body["idempotency_key"] = fmt.Sprintf("prop-%d-%s", p.keys, body["idempotency_key"])
		if k := body["idempotency_key"].(string); len(k) > 255 {
			body["idempotency_key"] = k[:255]
		}
	}
	for _, name := range []string{"to", "address"} {
		if _, ok := body[name].(string); ok {
			body[name] = p.recipients[p.rand.IntN(len(p.recipients))]
		}
	}
	if domain, ok := body["faucet_domain"].(string); ok {
		if _, ok := body["faucet_url"].(string); ok {
			body["faucet_url"] = []string{"http", "https", "HTTPS"}[p.rand.IntN(3)] + "://" + domain +
				[]string{"", "/", "/claim?ref=1#top", ":8080/a%20b"}[p.rand.IntN(4)]
		}
	}
	if _, ok := body["after"].(string); ok {
		body["after"] = "" // a cursor is one the faucet's feed gave (D59): from the start
	}
	return body
}

// valid generates a value the schema allows, preferring its examples
// and enums, which name real coins and amounts.
func (p *generator) valid(s schema, name string) any {
	r := p.rand
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[r.IntN(len(ex))]
	}
	if enum, ok := s["enum"].([]any); ok {
		return enum[r.IntN(len(enum))]
	}
	if anyOf, ok := s["anyOf"].([]any); ok && s["type"] == nil {
		return p.valid(anyOf[r.IntN(len(anyOf))].(map[string]any), name)
	}
	types := typesOf(s)
	if len(types) == 0 {
		return nil
	}
	typ := types[0]
	if slices.Contains(types, "null") && r.IntN(5) == 0 {
		return nil
	}
	switch typ {
	case "object":
		return p.validObject(s)
	case "array":
		items := object(s, "items")
		lo, hi := intOf(s, "minItems", 0), intOf(s, "maxItems", 5)
		count := lo + r.IntN(min(hi, lo+5)-lo+1)
		if r.IntN(20) == 0 {
			count = hi
		}
		out := []any{}
		for range count {
			out = append(out, p.valid(items, name))
		}
		return out
	case "string":
		return p.validString(s)
	case "integer":
		lo, hi := intOf(s, "minimum", -1000), intOf(s, "maximum", 1_000_000)
		switch r.IntN(4) {
		case 0:
			return lo
		case 1:
			return hi
		}
		return lo + r.IntN(hi-lo+1)
	case "number":
		return r.Float64() * 100
	case "boolean":
		return r.IntN(2) == 0
	}
	return nil
}

func (p *generator) validObject(s schema) map[string]any {
	r := p.rand
	out := map[string]any{}
	props := object(s, "properties")
	required := stringsOf(s["required"])
	for _, name := range slices.Sorted(maps.Keys(props)) {
		if slices.Contains(required, name) || r.IntN(2) == 0 {
			out[name] = p.valid(object(props, name), name)
		}
	}
	// anyOf of required members (a limit's max_count or max_amount):
	// one branch is made to hold.
	if anyOf, ok := s["anyOf"].([]any); ok {
		branch := anyOf[r.IntN(len(anyOf))].(map[string]any)
		for _, name := range stringsOf(branch["required"]) {
			out[name] = p.valid(object(object(branch, "properties"), name), name)
		}
	}
	if extra, ok := s["additionalProperties"].(map[string]any); ok {
		names := object(s, "propertyNames")
		for range r.IntN(4) {
			out[p.valid(names, "").(string)] = p.valid(extra, "")
		}
	}
	return out
}

func (p *generator) validString(s schema) string {
	lo, hi := intOf(s, "minLength", 0), intOf(s, "maxLength", 40)
	for range 50 {
		var v string
		if pattern, ok := s["pattern"].(string); ok {
			v = p.fromPattern(pattern)
		} else {
			v = p.text(lo + p.rand.IntN(min(hi, lo+30)-lo+1))
		}
		if p.rand.IntN(10) == 0 && pattern(s) == "" {
			v = p.text(hi) // the longest
		}
		if n := utf8.RuneCountInString(v); n >= lo && n <= hi {
			return v
		}
	}
	return strings.Repeat("a", lo)
}

// text is n characters of ASCII, accents, CJK, emoji and spaces.
func (p *generator) text(n int) string {
	alphabet := []rune("abcXYZ019 -_.@/:'\"\\<>&é日本語🙂\u00a0\u3000\t")
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[p.rand.IntN(len(alphabet))])
	}
	return b.String()
}

// fromPattern generates a string the pattern matches.
func (p *generator) fromPattern(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		p.t.Fatalf("pattern %q: %v", pattern, err)
	}
	var b strings.Builder
	p.gen(re.Simplify(), &b)
	return b.String()
}

func (p *generator) gen(re *syntax.Regexp, b *strings.Builder) {
	r := p.rand
	repeat := func(lo, hi int) {
		if hi < 0 || hi > lo+4 {
			hi = lo + 4
		}
		for range lo + r.IntN(hi-lo+1) {
			p.gen(re.Sub[0], b)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, c := range re.Rune {
			b.WriteRune(c)
		}
	case syntax.OpCharClass:
		i := 2 * r.IntN(len(re.Rune)/2)
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi-lo > 0x7f && r.IntN(4) != 0 { // a wide class: mostly ASCII letters
			if c := rune('a' + r.IntN(26)); c >= lo && c <= hi {
				b.WriteRune(c)
				return
			}
		}
		c := lo + rune(r.IntN(int(min(hi-lo, 0x3000))+1))
		if !utf8.ValidRune(c) {
			c = lo
		}
		b.WriteRune(c)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteRune(rune('a' + r.IntN(26)))
	case syntax.OpCapture:
		p.gen(re.Sub[0], b)
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			p.gen(sub, b)
		}
	case syntax.OpAlternate:
		p.gen(re.Sub[r.IntN(len(re.Sub))], b)
	case syntax.OpStar:
		repeat(0, 3)
	case syntax.OpPlus:
		repeat(1, 4)
	case syntax.OpQuest:
		repeat(0, 1)
	case syntax.OpRepeat:
		repeat(re.Min, re.Max)
	}
}

// mutate breaks one value of a valid body, at any depth, in one way, and
// says how.
func (p *generator) mutate(s schema, body map[string]any) (string, any) {
	r := p.rand
	type slot struct {
		where    string
		schema   schema
		parent   schema
		get      func() any
		set      func(any)
		del      func()
		required bool
	}
	var slots []slot
	var walk func(s schema, v any, where string)
	walk = func(s schema, v any, where string) {
		switch v := v.(type) {
		case map[string]any:
			props := object(s, "properties")
			req := stringsOf(s["required"])
			for _, name := range slices.Sorted(maps.Keys(v)) {
				ps := object(props, name)
				if ps == nil {
					ps = object(s, "additionalProperties")
				}
				slots = append(slots, slot{where + "." + name, ps, s,
					func() any { return v[name] }, func(x any) { v[name] = x }, func() { delete(v, name) }, slices.Contains(req, name)})
				walk(ps, v[name], where+"."+name)
			}
		case []any:
			for i := range v {
				walk(object(s, "items"), v[i], fmt.Sprintf("%s[%d]", where, i))
				slots = append(slots, slot{fmt.Sprintf("%s[%d]", where, i), object(s, "items"), s,
					func() any { return v[i] }, func(x any) { v[i] = x }, nil, true})
			}
		}
	}
	walk(s, body, "")
	// Members of the body itself, present or not, can be removed or added.
	switch k := r.IntN(10); {
	case k == 0 || len(slots) == 0:
		name := []string{"x_unknown", "Currency", "COIN", "to "}[r.IntN(4)]
		body[name] = 1
		return "unknown field " + name, body
	case k == 1:
		if req := stringsOf(s["required"]); len(req) > 0 {
			name := req[r.IntN(len(req))]
			delete(body, name)
			return "missing " + name, body
		}
	case k == 2:
		// an unknown member inside a nested object (a limit), in another case
		for _, sl := range slots {
			if m, ok := sl.get().(map[string]any); ok && sl.schema != nil && sl.schema["additionalProperties"] == false {
				for name := range m {
					m[strings.ToUpper(name)] = m[name]
					return "unknown field " + strings.ToUpper(name) + " in " + sl.where, body
				}
				m["x_unknown"] = 1
				return "unknown field in " + sl.where, body
			}
		}
	}
	sl := slots[r.IntN(len(slots))]
	if sl.schema == nil {
		return "unknown field", body
	}
	var how []string
	types := typesOf(sl.schema)
	if lo, ok := sl.schema["minimum"]; ok {
		how = append(how, "below minimum")
		_ = lo
	}
	if _, ok := sl.schema["maximum"]; ok {
		how = append(how, "above maximum")
	}
	if slices.Contains(types, "string") {
		if _, ok := sl.schema["maxLength"]; ok {
			how = append(how, "too long")
		}
		if intOf(sl.schema, "minLength", 0) > 0 {
			how = append(how, "empty")
		}
		if pattern(sl.schema) != "" {
			how = append(how, "pattern break")
		}
	}
	if _, ok := sl.schema["enum"]; ok {
		how = append(how, "not in enum")
	}
	if _, ok := sl.schema["maxItems"]; ok {
		how = append(how, "too many items")
	}
	how = append(how, "wrong type", "wrong type")
	if !slices.Contains(types, "null") {
		how = append(how, "null")
	}
	h := how[r.IntN(len(how))]
	switch h {
	case "below minimum":
		sl.set(intOf(sl.schema, "minimum", 0) - 1 - r.IntN(3))
	case "above maximum":
		sl.set(intOf(sl.schema, "maximum", 0) + 1 + r.IntN(3))
	case "too long":
		sl.set(strings.Repeat("A", intOf(sl.schema, "maxLength", 0)+1+r.IntN(3)))
	case "empty":
		sl.set("")
	case "pattern break":
		sl.set([]string{"", " ", "btc", "BTC ", "x y", "a\u00a0", "\u3000", "-a.com", "a..b", "ftp://x.example.com/", "1.2.3.256", "fe80::1%eth0", "01.2.3.4", "0", "00", "ünïcode", "\x00"}[r.IntN(17)] + p.text(r.IntN(2)))
	case "not in enum":
		sl.set("galaxy")
	case "too many items":
		list := []any{}
		for range intOf(sl.schema, "maxItems", 0) + 1 {
			list = append(list, p.valid(object(sl.schema, "items"), ""))
		}
		sl.set(list)
	case "wrong type":
		sl.set([]any{"text", 1.5, 7, true, []any{}, map[string]any{}}[r.IntN(6)])
	case "null":
		sl.set(nil)
	}
	return h + " at " + sl.where, body
}

// TestV1Status: error.v1_status is the v1 status of the same condition
// (issue 10 item 3): 410 for a missing coin, 456 for a missing address,
// 405 for an invalid amount, and null where v1 has none (a missing
// idempotency key, a body that is not a JSON object).
func TestV1Status(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000})
	env.User(t, "alice")
	key := env.Key(t, f, drip.Scopes...)
	for _, c := range []struct {
		method, path string
		body         any
		code         string
		want         *int
	}{
		{http.MethodPost, "/stats/users", map[string]any{}, "invalid", intPtr(410)},
		{http.MethodGet, "/stats/users", nil, "invalid", intPtr(410)},
		{http.MethodPost, "/transactions", map[string]any{"page": 1}, "invalid", intPtr(410)},
		{http.MethodPost, "/approval-cost", nil, "invalid", intPtr(410)},
		{http.MethodPost, "/check-address", map[string]any{}, "invalid", intPtr(456)},
		{http.MethodGet, "/check-address?currency=BTC", nil, "invalid", intPtr(456)},
		{http.MethodPost, "/send", map[string]any{"idempotency_key": "k", "to": "alice", "amount": "1.5", "currency": "BTC"}, "invalid_amount", intPtr(405)},
		{http.MethodPost, "/send", map[string]any{"idempotency_key": "k", "to": "alice", "amount": 0, "currency": "BTC"}, "invalid_amount", intPtr(405)},
		{http.MethodPost, "/send", map[string]any{"to": "alice", "amount": 100, "currency": "BTC"}, "invalid", nil},
		{http.MethodPost, "/send", "null", "malformed_request", nil},
		{http.MethodPost, "/balance", "[1]", "malformed_request", nil},
		{http.MethodPost, "/anti-fraud/toggle", `"on"`, "malformed_request", nil},
		{http.MethodPost, "/balance", `{"currency":`, "malformed_request", nil},
	} {
		r := env.V2Do(t, c.method, key, c.path, c.body, nil)
		got := r.Envelope.Error
		switch {
		case r.HTTPStatus != http.StatusBadRequest || got == nil:
			t.Errorf("%s %s %v: HTTP %d %s, want 400", c.method, c.path, c.body, r.HTTPStatus, r.Raw)
		case got.Code != c.code:
			t.Errorf("%s %s %v: code %s, want %s", c.method, c.path, c.body, got.Code, c.code)
		case (got.V1Status == nil) != (c.want == nil) || got.V1Status != nil && *got.V1Status != *c.want:
			t.Errorf("%s %s %v: v1_status %s, want %v", c.method, c.path, c.body, r.Raw, intText(c.want))
		}
	}
	// The reply says null, not an absent member.
	if r := env.V2(t, key, "/send", "null"); !strings.Contains(r.Raw, `"v1_status":null`) {
		t.Errorf("malformed body: %s, want v1_status null", r.Raw)
	}
}
