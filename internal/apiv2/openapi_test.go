// Tests of the OpenAPI document of v2 (D39): it is a valid OpenAPI 3.1
// document, it lists exactly the paths the handler serves with the scopes
// the handler asks, it is served, real replies match it, and the validator
// every v2 test runs (apptest) fails replies that do not.
//
// The helpers are those of helpers_test.go.
package apiv2_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
)

func TestOpenAPIDocumentIsValid31(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t) // loads and runs doc.Validate
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	if doc.Info.Title != "drip v2" || doc.Info.Version == "" {
		t.Errorf("info: title %q version %q", doc.Info.Title, doc.Info.Version)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != apiv2.Prefix {
		t.Errorf("servers %v, want one with url %s", doc.Servers, apiv2.Prefix)
	}
	bearer := doc.Components.SecuritySchemes["bearer"]
	if bearer == nil || bearer.Value.Type != "http" || bearer.Value.Scheme != "bearer" {
		t.Errorf("components.securitySchemes.bearer is not an http bearer scheme")
	}
	if len(doc.Security) != 1 || doc.Security[0]["bearer"] == nil {
		t.Errorf("security %v, want the bearer scheme for every operation", doc.Security)
	}
	// The embedded bytes are JSON, as the Content-Type served says.
	if !json.Valid(apiv2.OpenAPI()) {
		t.Errorf("openapi.json is not JSON")
	}
}

// TestOpenAPIDocumentsEveryRoute checks the document against the handler:
// each path of routes exists (401 without a key, not 404), refuses a key
// with every scope but the one its x-scope names, takes the methods the
// document gives it and no others, and nothing else is documented.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	env := sqliteEnv(t)
	f, _ := env.Faucet(t, nil)

	var documented []string
	for path := range doc.Paths.Map() {
		documented = append(documented, path)
	}
	want := []string{"/openapi.json"}
	for _, r := range routes {
		want = append(want, r.path)
	}
	sort.Strings(documented)
	sort.Strings(want)
	if diff := cmp.Diff(want, documented); diff != "" {
		t.Errorf("documented paths (-want +got):\n%s", diff)
	}

	for _, rt := range routes {
		path, scope := rt.path, rt.scope
		item := doc.Paths.Value(path)
		if item == nil {
			continue // reported above
		}
		methods := []string{http.MethodPost}
		if scope == drip.ScopeRead {
			methods = []string{http.MethodGet, http.MethodPost}
		}
		var got []string
		for m, op := range item.Operations() {
			got = append(got, m)
			if s, _ := op.Extensions["x-scope"].(string); s != string(scope) {
				t.Errorf("%s %s: x-scope %q, want %q", m, path, s, scope)
			}
			if !strings.Contains(op.Description, "Scope: **"+string(scope)+"**") {
				t.Errorf("%s %s: the description does not name the scope %s", m, path, scope)
			}
			if op.Security != nil {
				t.Errorf("%s %s: overrides the bearer security requirement", m, path)
			}
		}
		sort.Strings(got)
		if diff := cmp.Diff(methods, got); diff != "" {
			t.Errorf("%s: documented methods (-want +got):\n%s", path, diff)
		}

		// The handler serves the path: without a key it is 401, not 404.
		if r := env.V2(t, "", path, nil); r.HTTPStatus != http.StatusUnauthorized {
			t.Errorf("POST %s without a key: HTTP %d %s, want 401", path, r.HTTPStatus, r.Code())
		}
		// ... with the scope the document gives, and no other.
		var others []drip.Scope
		for _, s := range drip.Scopes {
			if s != scope {
				others = append(others, s)
			}
		}
		if r := env.V2(t, env.Key(t, f, others...), path, nil); r.HTTPStatus != http.StatusForbidden || r.Code() != string(drip.CodeInsufficientScope) {
			t.Errorf("POST %s with scopes %v: HTTP %d %s, want 403 insufficient_scope", path, others, r.HTTPStatus, r.Code())
		}
		// ... and the methods the document gives: a wrong one is 405.
		wrong := http.MethodPut
		if !slices.Contains(methods, http.MethodGet) {
			wrong = http.MethodGet
		}
		if r := env.V2Do(t, wrong, "", path, nil, nil); r.HTTPStatus != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: HTTP %d, want 405", wrong, path, r.HTTPStatus)
		}
	}

	for _, path := range []string{"/nope", "/balance/", "/stats", "", "/send/x"} {
		if r := env.V2(t, "", path, nil); r.HTTPStatus != http.StatusNotFound || r.Code() != string(drip.CodeNotFound) {
			t.Errorf("POST %s%s: HTTP %d %s, want 404 not_found", apiv2.Prefix, path, r.HTTPStatus, r.Code())
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		req, err := http.NewRequest(method, env.Server.URL+apiv2.OpenAPIPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := env.Server.Client().Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, apiv2.OpenAPIPath, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: HTTP %d", method, apiv2.OpenAPIPath, resp.StatusCode)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", method, apiv2.OpenAPIPath, ct)
		}
		want := apiv2.OpenAPI()
		if method == http.MethodHead {
			want = nil
		}
		if !bytes.Equal(body, want) {
			t.Errorf("%s %s: the body is not the embedded document (%d bytes, want %d)", method, apiv2.OpenAPIPath, len(body), len(want))
		}
		if err := apptest.ValidateV2Exchange(req, nil, resp.StatusCode, resp.Header, body); err != nil {
			t.Errorf("%s %s: %v", method, apiv2.OpenAPIPath, err)
		}
	}
	// Any other method is refused with the envelope and Allow (checked by
	// the validator against the document's methods).
	if r := env.V2(t, "", "/openapi.json", nil); r.HTTPStatus != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST %s: HTTP %d Allow %q, want 405 with Allow: GET, HEAD", apiv2.OpenAPIPath, r.HTTPStatus, r.Header.Get("Allow"))
	}
}

// TestOpenAPIRepliesMatch makes a success of every path, each read path by
// GET and by POST, over a faucet with payouts, limits, a low-balance email
// and a listing request, so that nullable and list fields are exercised
// both empty and filled. apptest checks each reply against the document.
func TestOpenAPIRepliesMatch(t *testing.T) {
	t.Parallel()
	env := sqliteEnv(t)
	ctx := context.Background()
	f, _ := env.Faucet(t, map[string]int64{"BTC": 1_000_000, "DOGE": 500})
	env.User(t, "alice")
	readKey := env.Key(t, f, drip.ScopeRead)
	all := env.Key(t, f, drip.Scopes...)
	if err := env.App.Listing.SetCost(ctx, "BTC", 1000); err != nil {
		t.Fatalf("set listing cost: %v", err)
	}

	ok := func(key, method, path string, body any) *apptest.V2Reply {
		t.Helper()
		r := env.V2Do(t, method, key, path, body, nil)
		if r.HTTPStatus != http.StatusOK {
			t.Errorf("%s %s: HTTP %d %s", method, path, r.HTTPStatus, r.Raw)
		}
		return r
	}
	reads := func(stage string) {
		t.Helper()
		for _, c := range []struct {
			path  string
			body  any
			query string
		}{
			{"/balance", nil, ""},
			{"/balance", map[string]any{"currency": "DOGE"}, "?currency=DOGE"},
			{"/balances", nil, ""},
			{"/currencies", map[string]any{}, ""},
			{"/check-address", map[string]any{"address": "alice"}, "?address=alice&currency=BTC"},
			{"/payouts", map[string]any{"currency": "BTC", "count": 100}, "?count=5"},
			{"/faucet", nil, ""},
			{"/stats/daily", nil, ""},
			{"/stats/users", map[string]any{"coin": "BTC"}, "?coin=BTC&page=1"},
			{"/transactions", map[string]any{"coin": "BTC", "page": nil}, "?coin=BTC"},
			{"/transactions", map[string]any{"coin": "BTC", "page": 2}, "?coin=BTC&page=2"},
			{"/ratelimits", nil, ""},
			{"/low-balance-notification", nil, ""},
			{"/audit", map[string]any{"count": 10}, "?count=5"},
		} {
			t.Run(stage+c.path+c.query, func(t *testing.T) {
				ok(readKey, http.MethodPost, c.path, c.body)
				ok(readKey, http.MethodGet, c.path+c.query, nil)
			})
		}
	}

	reads("empty")

	ok(all, http.MethodPost, "/faucet/update", map[string]any{
		"faucet_name": "Drip Test", "faucet_domain": "drip.example.com", "faucet_url": "https://drip.example.com/claim",
		"faucet_description": "A faucet.", "timer_minutes": 30,
		"currencies_selected": []string{"BTC", "DOGE"}, "categories_selected": []string{"bitcoin", "games"},
	})
	ok(all, http.MethodPost, "/ratelimits/set", map[string]any{"ratelimits": []map[string]any{
		{"currency": nil, "per": "recipient", "window_seconds": 3600, "max_count": 50},
		{"currency": "BTC", "per": "faucet", "window_seconds": 86400, "max_amount": 900_000, "max_count": nil},
	}})
	ok(all, http.MethodPost, "/ip-whitelist/set", map[string]any{"ip_whitelist": []string{"127.0.0.1", "::1", "10.0.0.0/8"}})
	ok(all, http.MethodPost, "/ip-whitelist", nil)
	ok(all, http.MethodPost, "/low-balance-notification/toggle", map[string]any{"enabled": true, "thresholds": map[string]int64{"BTC": 999_990}})
	ok(all, http.MethodPost, "/anti-fraud/toggle", nil)
	ok(all, http.MethodPost, "/anti-fraud/toggle", map[string]any{"enabled": true})
	ok(all, http.MethodPost, "/anti-fraud/rules/update", map[string]any{"trust_rank": 0, "negative_rank": 100, "whitelist": []string{"alice"}, "blacklist": []string{"mallory@example.com", "203.0.113.66"}})
	ok(all, http.MethodPost, "/anti-fraud/rules", nil)

	send := map[string]any{"idempotency_key": "order-1", "to": "alice", "amount": 100, "currency": "BTC", "ip_address": "203.0.113.9", "referral": "spring"}
	first := ok(all, http.MethodPost, "/send", send)
	replay := ok(all, http.MethodPost, "/send", send)
	if replay.Header.Get("Idempotent-Replayed") != "true" || replay.Envelope.Data == nil || string(replay.Envelope.Data) != string(first.Envelope.Data) {
		t.Errorf("replay: Idempotent-Replayed %q, data %s, want true and %s", replay.Header.Get("Idempotent-Replayed"), replay.Envelope.Data, first.Envelope.Data)
	}
	ok(all, http.MethodPost, "/send", map[string]any{"idempotency_key": "order-2", "to": "alice", "amount": "25", "currency": "BTC"})

	ok(all, http.MethodPost, "/approval-cost", map[string]any{"coin": "BTC"})
	ok(all, http.MethodPost, "/faucet/request-approval", map[string]any{"coin": "BTC"})
	ok(all, http.MethodPost, "/approval-cost", map[string]any{"coin": "BTC"})
	ok(all, http.MethodPost, "/faucet/create", map[string]any{"faucet_name": "Second", "faucet_domain": "second.example.com", "faucet_url": "http://second.example.com/"})

	reads("filled")

	// The error replies the document lists are checked as well.
	for _, c := range []struct {
		key, path string
		body      any
		status    int
	}{
		{"", "/balance", nil, http.StatusUnauthorized},
		{readKey, "/send", nil, http.StatusForbidden},
		{readKey, "/balance", `{"currency":`, http.StatusBadRequest},
		{readKey, "/balance", map[string]any{"currency": "XXX"}, http.StatusBadRequest},
		{all, "/send", map[string]any{"idempotency_key": "order-1", "to": "alice", "amount": 101, "currency": "BTC"}, http.StatusConflict},
		{all, "/send", map[string]any{"idempotency_key": "order-3", "to": "alice", "amount": 1, "currency": "DOGE", "ip_address": "203.0.113.66"}, http.StatusForbidden},
		{all, "/faucet/request-approval", map[string]any{"coin": "BTC"}, http.StatusConflict},
	} {
		if r := env.V2(t, c.key, c.path, c.body); r.HTTPStatus != c.status {
			t.Errorf("POST %s %v: HTTP %d, want %d: %s", c.path, c.body, r.HTTPStatus, c.status, r.Raw)
		}
	}
}

// TestOpenAPIValidatorFails feeds the validator replies that break the
// document, one way each, after checking the reply they are made from
// passes: a validator that passes everything would pass every v2 test.
func TestOpenAPIValidatorFails(t *testing.T) {
	t.Parallel()
	const balanceOK = `{"success":true,"status":200,"message":"OK","data":{"currency":"BTC","balance":4321,"balance_bitcoin":0.00004321}}`
	const unauthorized = `{"success":false,"status":401,"message":"Invalid key.","data":null,"error":{"code":"unauthenticated","v1_status":403}}`
	const notFound = `{"success":false,"status":404,"message":"Unknown path.","data":null,"error":{"code":"not_found","v1_status":404}}`
	const methodNotAllowed = `{"success":false,"status":405,"message":"Method not allowed.","data":null,"error":{"code":"method_not_allowed","v1_status":null}}`
	const sendOK = `{"success":true,"status":200,"message":"Payout sent.","data":{"rate_limit_remaining":119,"currency":"BTC","balance":900,"balance_bitcoin":0.000009,"payout_id":7,"payout_user_hash":"0123456789abcdef0123456789abcdef01234567","dry_run":false}}`
	const sendBody = `{"idempotency_key":"k1","to":"alice","amount":"100","currency":"BTC"}`
	const limited = `{"success":false,"status":429,"message":"Rate limited.","data":null,"error":{"code":"rate_limited","v1_status":459}}`
	jsonHeader := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	type exchange struct {
		method, path, reqBody string
		status                int
		header                http.Header
		body                  string
	}
	cases := []struct {
		name      string
		good, bad exchange
	}{
		{"data lacks a field",
			exchange{"POST", "/balance", "", 200, jsonHeader(), balanceOK},
			exchange{"POST", "/balance", "", 200, jsonHeader(), strings.Replace(balanceOK, `,"balance_bitcoin":0.00004321`, "", 1)}},
		{"data field of the wrong type",
			exchange{"GET", "/balance", "", 200, jsonHeader(), balanceOK},
			exchange{"GET", "/balance", "", 200, jsonHeader(), strings.Replace(balanceOK, `"balance":4321`, `"balance":"4321"`, 1)}},
		{"data has an undocumented field",
			exchange{"POST", "/balance", "", 200, jsonHeader(), balanceOK},
			exchange{"POST", "/balance", "", 200, jsonHeader(), strings.Replace(balanceOK, `"balance":4321`, `"balance":4321,"extra":1`, 1)}},
		{"data of another path",
			exchange{"POST", "/send", sendBody, 200, jsonHeader(), sendOK},
			exchange{"POST", "/send", sendBody, 200, jsonHeader(), balanceOK}},
		{"success false on a 200",
			exchange{"POST", "/balance", "", 200, jsonHeader(), balanceOK},
			exchange{"POST", "/balance", "", 200, jsonHeader(), strings.Replace(balanceOK, `"success":true`, `"success":false`, 1)}},
		{"undocumented status",
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), unauthorized},
			exchange{"POST", "/balance", "", 418, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), strings.Replace(unauthorized, "401", "418", 1)}},
		{"status not documented for the path",
			exchange{"POST", "/send", "", 429, jsonHeader("Retry-After", "3"), limited},
			exchange{"POST", "/balance", "", 409, jsonHeader(), `{"success":false,"status":409,"message":"x","data":null,"error":{"code":"conflict","v1_status":null}}`}},
		{"401 without WWW-Authenticate",
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), unauthorized},
			exchange{"POST", "/balance", "", 401, jsonHeader(), unauthorized}},
		{"429 without Retry-After",
			exchange{"POST", "/balance", "", 429, jsonHeader("Retry-After", "3"), limited},
			exchange{"POST", "/balance", "", 429, jsonHeader(), limited}},
		{"error code of another status",
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), unauthorized},
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), strings.Replace(unauthorized, `"unauthenticated","v1_status":403`, `"forbidden","v1_status":401`, 1)}},
		{"v1_status of another code",
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), unauthorized},
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), strings.Replace(unauthorized, `"v1_status":403`, `"v1_status":null`, 1)}},
		{"error envelope with data",
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), unauthorized},
			exchange{"POST", "/balance", "", 401, jsonHeader("WWW-Authenticate", `Bearer realm="drip"`), strings.Replace(unauthorized, `"data":null`, `"data":{}`, 1)}},
		{"not JSON",
			exchange{"POST", "/balance", "", 200, jsonHeader(), balanceOK},
			exchange{"POST", "/balance", "", 200, http.Header{"Content-Type": {"text/plain"}}, "OK"}},
		{"a success to a request the document refuses",
			exchange{"POST", "/send", sendBody, 200, jsonHeader(), sendOK},
			exchange{"POST", "/send", `{"to":"alice","amount":"100","currency":"BTC"}`, 200, jsonHeader(), sendOK}},
		{"a success to an undocumented field",
			exchange{"POST", "/send", sendBody, 200, jsonHeader(), sendOK},
			exchange{"POST", "/send", strings.Replace(sendBody, `"to"`, `"memo":"x","to"`, 1), 200, jsonHeader(), sendOK}},
		{"undocumented path answered",
			exchange{"POST", "/nope", "", 404, jsonHeader(), notFound},
			exchange{"POST", "/nope", "", 200, jsonHeader(), balanceOK}},
		{"undocumented path without the envelope",
			exchange{"POST", "/nope", "", 404, jsonHeader(), notFound},
			exchange{"POST", "/nope", "", 404, jsonHeader(), `{"status":404,"message":"Not found."}`}},
		{"unknown path answered with another error",
			exchange{"POST", "/nope", "", 404, jsonHeader(), notFound},
			exchange{"POST", "/nope", "", 404, jsonHeader(), strings.Replace(notFound, `"not_found","v1_status":404`, `"invalid","v1_status":405`, 1)}},
		{"path escaped as the handler decodes it",
			exchange{"POST", "/bal%61nce", "", 200, jsonHeader(), balanceOK},
			exchange{"POST", "/bal%61nce", "", 200, jsonHeader(), strings.Replace(balanceOK, `"balance":4321`, `"balance":-1`, 1)}},
		{"405 with an Allow the document does not give",
			exchange{"PUT", "/balance", "", 405, jsonHeader("Allow", "GET, POST"), methodNotAllowed},
			exchange{"PUT", "/balance", "", 405, jsonHeader("Allow", "POST"), methodNotAllowed}},
		{"undocumented method answered",
			exchange{"GET", "/send", "", 405, jsonHeader("Allow", "POST"), methodNotAllowed},
			exchange{"GET", "/send", "", 200, jsonHeader(), sendOK}},
	}
	check := func(e exchange) error {
		req, err := http.NewRequest(e.method, "http://127.0.0.1:1"+apiv2.Prefix+e.path, strings.NewReader(e.reqBody))
		if err != nil {
			t.Fatal(err)
		}
		return apptest.ValidateV2Exchange(req, []byte(e.reqBody), e.status, e.header, []byte(e.body))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if err := check(c.good); err != nil {
				t.Fatalf("the reply the case starts from fails: %v", err)
			}
			if err := check(c.bad); err == nil {
				t.Errorf("validation passed %s %s HTTP %d %s", c.bad.method, c.bad.path, c.bad.status, c.bad.body)
			}
		})
	}
}

// TestOpenAPIErrorCodes checks the document's error codes against the
// code tables: each code is documented under the status apiv2 answers it
// with (D34), with the v1 status drip gives it.
func TestOpenAPIErrorCodes(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	codes := []drip.Code{
		drip.CodeInvalid, drip.CodeUnauthenticated, drip.CodeForbidden, drip.CodeRateLimited,
		drip.CodeInvalidCurrency, drip.CodeInvalidAmount, drip.CodeRecipientUnknown, drip.CodeRecipientRefused,
		drip.CodeSendLimit, drip.CodeClaimerRateLimit, drip.CodeInsufficientFunds, drip.CodeDailyCap,
		drip.CodeIdempotencyReuse, drip.CodePriceUnavailable, drip.CodeInsufficientScope, drip.CodeMalformed,
		drip.CodeMethodNotAllowed, drip.CodeNotFound, drip.CodeConflict, drip.CodeInternal,
		drip.CodeUnavailable, drip.CodeOutcomeUnknown,
	}
	var want, got []string
	for _, c := range codes {
		want = append(want, string(c))
	}
	for _, v := range doc.Components.Schemas["ErrorCode"].Value.Enum {
		got = append(got, v.(string))
	}
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ErrorCode enum (-want +got):\n%s", diff)
	}

	// The status each code is documented under.
	documented := map[string][]int{}
	for name, r := range doc.Components.Responses {
		schema := r.Value.Content.Get("application/json").Schema.Value
		var status int
		var enum []any
		for _, part := range schema.AllOf {
			if p := part.Value.Properties; part.Ref == "" && p["status"] != nil {
				status = int(p["status"].Value.Const.(float64))
				enum = p["error"].Value.Properties["code"].Value.Enum
			}
		}
		if status == 0 {
			t.Errorf("components.responses.%s does not fix its status", name)
		}
		for _, c := range enum {
			documented[c.(string)] = append(documented[c.(string)], status)
		}
	}
	// The v1 status each code is paired with.
	v1 := map[string]any{}
	for _, branch := range doc.Components.Schemas["ErrorDetail"].Value.OneOf {
		p := branch.Value.Properties
		v1[p["code"].Value.Const.(string)] = p["v1_status"].Value.Const
		if enum := p["v1_status"].Value.Enum; enum != nil {
			v1[p["code"].Value.Const.(string)] = fmt.Sprint(enum)
		}
	}
	for _, c := range codes {
		if s := documented[string(c)]; len(s) != 1 || s[0] != apiv2.Status(c) {
			t.Errorf("%s is documented under statuses %v, apiv2 answers %d", c, s, apiv2.Status(c))
		}
		var wantV1 any
		if s, ok := c.V1Status(); ok {
			wantV1 = float64(s)
		}
		if c == drip.CodeInvalid {
			// An invalid field is v1's unknown coin (410) or unpayable
			// recipient (456) when it names one (Error.V1Status), else
			// nothing of v1's.
			wantV1 = fmt.Sprint([]any{nil, float64(410), float64(456)})
		}
		if got, ok := v1[string(c)]; !ok || got != wantV1 {
			t.Errorf("%s: the document pairs v1_status %v, drip gives %v", c, got, wantV1)
		}
	}
}

func TestOpenAPICategories(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t)
	var got []string
	for _, v := range doc.Components.Schemas["FaucetRecord"].Value.Properties["categories_selected"].Value.Items.Value.Enum {
		got = append(got, v.(string))
	}
	if diff := cmp.Diff(drip.Categories, got); diff != "" {
		t.Errorf("categories_selected enum (-drip.Categories +document):\n%s", diff)
	}
}
