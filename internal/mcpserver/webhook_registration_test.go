// Tests of D54 (spec 5, v2 rule 4; issue 12): webhook endpoints are
// registered only from the console's pages, in a session that passed
// two-factor authentication; no API key of any scope registers, lists or
// changes one, through v2 or the tool server.
//
// They try with keys holding every scope: every path v2 serves (taken
// from its route table and from the OpenAPI document it serves, so a path
// added later is tried too), paths a client might guess, and every tool
// the tool server lists, each with bodies and arguments shaped like an
// endpoint's registration, listing or change. Then they read the store:
// the only endpoint is the one the console's service made before the
// calls, unchanged, and no reply showed its URL or any signing secret.
package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/server"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/webhook"
)

// The URLs a client asks events to be sent to. hookIP is a public address
// written as such, which D53's check admits with no lookup: a path that
// registered endpoints would succeed with it on a machine without DNS.
const (
	hookURL = "https://example.com/hook"
	hookIP  = "https://93.184.215.14/hook"
)

// seededHost is the host of the endpoint the console's service registers
// before the calls. No request names it, so a reply that does revealed
// the endpoint.
const seededHost = "receiver-d54.example.net"

// hookResolver answers for seededHost alone, with a public address, so
// that D53's check admits the seeded URL without a real lookup.
type hookResolver struct{}

func (hookResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host != seededHost {
		return nil, fmt.Errorf("no such host %s", host)
	}
	return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
}

// hookMethods are the methods tried on every v2 path.
var hookMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// guessedPaths are v2 paths a client looking for webhooks might try; each
// must answer 404 in v2's error envelope, whatever the method.
func guessedPaths(id int64) []string {
	return []string{
		"/webhooks", "/webhooks/", "/webhook", "/Webhooks", "/webhook-endpoints", "/webhook_endpoints",
		"/webhooks/1", fmt.Sprintf("/webhooks/%d", id), fmt.Sprintf("/webhooks/%d/secret", id),
		"/webhooks/create", "/webhooks/register", "/webhooks/list", "/webhook/register",
		"/endpoints", "/endpoints/1", "/faucet/webhooks", "/faucet/webhook", "/faucet/webhooks/create",
		"/faucet/endpoints", "/hooks", "/events/webhooks", "/events/subscribe", "/subscriptions",
	}
}

// guessedTools are tools an assistant looking for webhooks might call.
var guessedTools = []string{
	"register_webhook", "create_webhook", "add_webhook", "set_webhook", "list_webhooks", "get_webhooks",
	"update_webhook", "delete_webhook", "rotate_webhook_secret", "create_webhook_endpoint", "webhooks",
}

// hookBodies are the bodies (and tool arguments) of a registration,
// listing or change of endpoint id: the fields together; each naming of
// the URL alone with the events, since a path that took one would refuse
// the others as unknown fields; those of a change; none, as a listing
// sends; and the schema's own properties whose names say URL, events, id
// or switch (guided), as a path naming its fields otherwise would take.
func hookBodies(id int64, schema map[string]any) []map[string]any {
	events := []string{drip.EventPayoutSent}
	bodies := []map[string]any{
		{"url": hookURL, "events": events, "webhook_url": hookURL, "endpoint": hookURL},
		{"url": hookURL, "events": events},
		{"url": hookIP, "events": events},
		{"webhook_url": hookIP, "events": events},
		{"endpoint": hookIP, "events": events},
		{"endpoint_url": hookIP, "events": events},
		{"endpoint": map[string]any{"url": hookIP, "events": events}},
		{"webhook": map[string]any{"url": hookIP, "events": events}},
		{"id": id, "url": hookIP, "events": events, "enabled": false},
		{"endpoint_id": id, "enabled": false},
		{"id": id},
		{},
	}
	if g := guided(id, schema); g != nil {
		bodies = append(bodies, g)
	}
	return bodies
}

var urlish = regexp.MustCompile(`(?i)url|uri|endpoint|hook|callback|target`)

// guided fills the schema's properties that name an endpoint's URL, its
// events, its id or its switch; nil when it has none.
func guided(id int64, schema map[string]any) map[string]any {
	props, _ := schema["properties"].(map[string]any)
	out := map[string]any{}
	for name, p := range props {
		types := schemaTypes(p)
		n := strings.ToLower(name)
		switch {
		case strings.HasSuffix(n, "id") && (types["integer"] || types["number"]):
			out[name] = id
		case strings.Contains(n, "event") && types["array"]:
			out[name] = []string{drip.EventPayoutSent}
		case strings.Contains(n, "event") && types["string"]:
			out[name] = drip.EventPayoutSent
		case urlish.MatchString(n) && types["string"]:
			out[name] = hookIP
		case (n == "enabled" || n == "active") && types["boolean"]:
			out[name] = false
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// schemaTypes are the types a JSON schema admits ("type" a name or a list).
func schemaTypes(schema any) map[string]bool {
	out := map[string]bool{}
	s, _ := schema.(map[string]any)
	switch t := s["type"].(type) {
	case string:
		out[t] = true
	case []any:
		for _, x := range t {
			if name, ok := x.(string); ok {
				out[name] = true
			}
		}
	}
	return out
}

// query is body as a GET's query ("" for none): lists as repeated
// parameters, objects as JSON.
func query(body map[string]any) string {
	q := url.Values{}
	for k, v := range body {
		switch v := v.(type) {
		case []string:
			for _, s := range v {
				q.Add(k, s)
			}
		case map[string]any:
			b, _ := json.Marshal(v)
			q.Set(k, string(b))
		default:
			q.Set(k, fmt.Sprint(v))
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// hookKey is a key with every scope.
type hookKey struct {
	name   string // which faucet's
	secret string
}

// hooks is two faucets of different owners, each with a key holding every
// scope: bare, which has no endpoint, and seeded, which has one that the
// console's service (webhook.Endpoints) registered.
type hooks struct {
	e            *env
	svc          *webhook.Endpoints
	bare, seeded *drip.Faucet
	keys         []hookKey
	endpoint     store.WebhookEndpoint // the seeded endpoint as stored before any call
	secret       string                // its signing secret
}

func newHooks(t *testing.T, e *env) *hooks {
	t.Helper()
	ctx := context.Background()
	bare, _ := e.Faucet(t, map[string]int64{"BTC": 100_000_000})
	seeded, _ := e.Faucet(t, map[string]int64{"BTC": 100_000_000})
	svc, err := webhook.NewEndpoints(ctx, e.App.Store, webhook.EndpointOptions{HTTP: safehttp.Options{Resolver: hookResolver{}}})
	if err != nil {
		t.Fatal(err)
	}
	made, secret, err := svc.Create(ctx, seeded.ID, "https://"+seededHost+"/drip/events", []string{drip.EventPayoutSent, drip.EventLowBalance})
	if err != nil {
		t.Fatalf("seed an endpoint: %v", err)
	}
	stored, err := e.App.Store.WebhookEndpointGet(ctx, seeded.ID, made.ID)
	if err != nil {
		t.Fatal(err)
	}
	return &hooks{e: e, svc: svc, bare: bare, seeded: seeded, endpoint: *stored, secret: secret, keys: []hookKey{
		{"the faucet without endpoints", e.Key(t, bare, drip.Scopes...)},
		{"the faucet with an endpoint", e.Key(t, seeded, drip.Scopes...)},
	}}
}

// revealed names what of the seeded endpoint, or of any signing secret,
// text shows.
func (h *hooks) revealed(text string) []string {
	var out []string
	for _, s := range []struct{ what, value string }{
		{"a signing secret's prefix", webhook.SecretPrefix},
		{"the endpoint's secret", strings.TrimPrefix(h.secret, webhook.SecretPrefix)},
		{"the endpoint's sealed secret", h.endpoint.SecretSealed},
		{"the endpoint's host", seededHost},
		{"the endpoint's URL", h.endpoint.URL},
		{"the endpoint's seal binding", fmt.Sprintf("endpoint:%d", h.endpoint.ID)},
	} {
		if strings.Contains(text, s.value) {
			out = append(out, s.what)
		}
	}
	return out
}

// hookMember finds the members of a reply that would carry an endpoint.
// No record of v2 or of a tool has one; the guard is the names, since an
// endpoint listed would carry its id and events, which the text check
// cannot tell from other numbers and words.
var hookMember = regexp.MustCompile(`(?i)hook|endpoint|secret|event|callback|subscri`)

// hookMembers are the paths of v's members whose names hookMember finds.
func hookMembers(v any, at string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if hookMember.MatchString(k) {
				out = append(out, at+"."+k)
			}
			out = append(out, hookMembers(v[k], at+"."+k)...)
		}
	case []any:
		for i, x := range v {
			out = append(out, hookMembers(x, fmt.Sprintf("%s[%d]", at, i))...)
		}
	}
	return out
}

// checkReply fails the test if a reply shows the seeded endpoint, a
// signing secret, or a member that would carry an endpoint.
func (h *hooks) checkReply(t *testing.T, call, text string) {
	t.Helper()
	if r := h.revealed(text); len(r) > 0 {
		t.Errorf("%s: the reply shows %s:\n%s", call, strings.Join(r, ", "), text)
	}
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		m := slices.DeleteFunc(hookMembers(v, "$"), func(m string) bool { return feedMember(call, m) })
		if len(m) > 0 {
			t.Errorf("%s: the reply has members %v:\n%s", call, m, text)
		}
	}
}

// feedCall finds a call of the events feed, /events (D59), which reads a
// faucet's events and never where they are sent.
var feedCall = regexp.MustCompile(`^\S+ ` + regexp.QuoteMeta(apiv2.Prefix) + `/events[? ]`)

// feedMember tells the members of a reply that are the events feed's:
// the events its reply carries, and its path and record in the OpenAPI
// document. The reply must still show no endpoint (revealed).
func feedMember(call, member string) bool {
	switch {
	case feedCall.MatchString(call):
		return member == "$.data.events" || strings.HasPrefix(member, "$.data.events[")
	case strings.Contains(call, " "+apiv2.OpenAPIPath):
		return strings.HasPrefix(member, "$.paths./events") || strings.HasPrefix(member, "$.components.schemas.Events")
	}
	return false
}

// checkStore fails the test unless the store holds, of every faucet the
// two owners have (admin keys create faucets), no endpoint but the seeded
// one, as it was before the calls, its secret the same.
func (h *hooks) checkStore(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	st := h.e.App.Store
	var faucets []drip.Faucet
	for _, owner := range []int64{h.bare.OwnerID, h.seeded.OwnerID} {
		fs, err := st.FaucetListByOwner(ctx, owner)
		if err != nil {
			t.Fatal(err)
		}
		faucets = append(faucets, fs...)
	}
	for _, f := range faucets {
		want := 0
		if f.ID == h.seeded.ID {
			want = 1
		}
		if n, err := st.WebhookEndpointCount(ctx, f.ID); err != nil || n != want {
			t.Errorf("faucet %d (%s) has %d webhook endpoints (%v), want %d: a key registered or deleted one (D54)", f.ID, f.Name, n, err, want)
		}
	}
	list, err := st.WebhookEndpointList(ctx, h.seeded.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]store.WebhookEndpoint{h.endpoint}, list); diff != "" {
		t.Errorf("the faucet's endpoints after the calls (-before +after): a key changed them (D54):\n%s", diff)
	}
	if len(list) == 1 {
		if secret, err := h.svc.Secret(ctx, &list[0]); err != nil || secret != h.secret {
			t.Errorf("the endpoint's secret no longer opens to the one it was given (%v)", err)
		}
	}
}

// refused are the statuses of a request that never reached its path's
// operation: a call refused so proves nothing.
var refused = map[int]bool{http.StatusUnauthorized: true, http.StatusForbidden: true, http.StatusTooManyRequests: true}

// v2Paths are every path v2 serves: its route table's (Handler.Paths,
// built as the application builds it) and the served document's, each
// with the schema of its parameters by method ("get": the query's, as an
// object schema; "post": the body's) where the document gives one.
func v2Paths(t *testing.T, e *env) map[string]map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]map[string]any{}
	v2 := apiv2.New(apiv2.Deps{Ops: e.App.Ops, Payouts: e.App.Payouts, Log: e.App.Log, ClientIP: server.ClientIP(nil)})
	for _, p := range v2.Paths() {
		out[p] = map[string]map[string]any{}
	}
	resp, err := e.Server.Client().Get(e.Server.URL + apiv2.OpenAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Name   string         `json:"name"`
				Schema map[string]any `json:"schema"`
			} `json:"parameters"`
			RequestBody struct {
				Content map[string]struct {
					Schema map[string]any `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d, %v", apiv2.OpenAPIPath, resp.StatusCode, err)
	}
	for p, item := range doc.Paths {
		schemas := map[string]map[string]any{}
		if get, ok := item["get"]; ok {
			props := map[string]any{}
			for _, param := range get.Parameters {
				props[param.Name] = param.Schema
			}
			schemas["get"] = map[string]any{"properties": props}
		}
		if post, ok := item["post"]; ok {
			schemas["post"] = post.RequestBody.Content["application/json"].Schema
		}
		out[apiv2.Prefix+p] = schemas
	}
	if len(out) < 20 {
		t.Fatalf("only %d v2 paths found: %v", len(out), slices.Sorted(maps.Keys(out)))
	}
	return out
}

// v2Reply is a reply of v2 as sent: its status, headers and body.
type v2Reply struct {
	status int
	header http.Header
	body   []byte
}

// sendV2 sends method to target (a path under apiv2.Prefix with its
// query) with the Bearer key and body (none when nil). It sends raw,
// unlike Env.V2Do, which checks every reply against the OpenAPI document:
// that check compiles the document's error schema for each of the
// thousands of refusals here, so the test runs it on one call of each
// path and method (see checkEnvelope).
func sendV2(t *testing.T, e *env, method, key, target string, body []byte) (*http.Request, v2Reply) {
	t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return req, v2Reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// envelope is the part of v2's envelope (D32) these tests read.
type envelope struct {
	Success bool `json:"success"`
	Status  int  `json:"status"`
	Error   *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// checkEnvelope fails the test unless r is v2's envelope, as JSON, its
// status the HTTP status's. validate checks it against the OpenAPI
// document too, as Env.V2Do does, so a guessed path's 404 and a wrong
// method's 405 are the document's error replies.
func checkEnvelope(t *testing.T, call string, req *http.Request, body []byte, r v2Reply, validate bool) envelope {
	t.Helper()
	var env envelope
	if err := json.Unmarshal(r.body, &env); err != nil {
		t.Errorf("%s: the reply is not v2's envelope: %v\n%s", call, err, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", call, ct)
	}
	if env.Status != r.status || env.Success != (r.status == http.StatusOK) {
		t.Errorf("%s: envelope status %d success %v, HTTP status %d", call, env.Status, env.Success, r.status)
	}
	if r.status >= 500 && r.status != http.StatusServiceUnavailable {
		t.Errorf("%s: HTTP %d: %s", call, r.status, r.body)
	}
	if validate {
		if err := apptest.ValidateV2Exchange(req, body, r.status, r.header, r.body); err != nil {
			t.Errorf("%s: HTTP %d does not match the OpenAPI document: %v\n%s", call, r.status, err, r.body)
		}
	}
	return env
}

// TestV2CannotReachWebhookEndpoints (D54): every v2 path, by every
// method, and every guessed one, called with a key holding every scope and
// a registration's, listing's or change's fields, leaves the endpoints as
// the console made them and shows none; a guessed path is 404 in v2's
// error envelope.
func TestV2CannotReachWebhookEndpoints(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		h := newHooks(t, e)
		paths := v2Paths(t, e)
		guessed := map[string]bool{}
		for _, p := range guessedPaths(h.endpoint.ID) {
			p = apiv2.Prefix + p
			if guessed[p] {
				continue // the seeded endpoint's id is 1 on a fresh store
			}
			if _, served := paths[p]; served {
				t.Errorf("v2 serves %s: a path for webhook endpoints (D54)", p)
				continue
			}
			guessed[p] = true
			paths[p] = nil
		}
		calls := 0
		for _, k := range h.keys {
			for _, path := range slices.Sorted(maps.Keys(paths)) {
				document := path == apiv2.OpenAPIPath || path == apiv2.DocsPath // no envelope
				for _, method := range hookMethods {
					schema := paths[path]["post"]
					if method == http.MethodGet {
						schema = paths[path]["get"]
					}
					for i, body := range hookBodies(h.endpoint.ID, schema) {
						// Each call one second later: the caller's IP rate
						// (D29) refills faster than the calls spend it.
						e.Clock.Advance(time.Second)
						calls++
						target, raw := path, []byte(nil)
						if method == http.MethodGet {
							target += query(body)
						} else {
							raw, _ = json.Marshal(body)
						}
						call := fmt.Sprintf("%s %s %s with the key of %s", method, target, raw, k.name)
						req, r := sendV2(t, e, method, k.secret, target, raw)
						h.checkReply(t, call, string(r.body))
						if refused[r.status] {
							t.Errorf("%s: HTTP %d %s: the key was refused, so the call proves nothing", call, r.status, r.body)
						}
						if document {
							if r.status >= 500 {
								t.Errorf("%s: HTTP %d", call, r.status)
							}
							continue
						}
						env := checkEnvelope(t, call, req, raw, r, i == 0)
						if guessed[path] && (r.status != http.StatusNotFound || env.Error == nil || env.Error.Code != string(drip.CodeNotFound)) {
							t.Errorf("%s: HTTP %d %s, want 404 %s in v2's error envelope", call, r.status, r.body, drip.CodeNotFound)
						}
						if r.status == http.StatusMethodNotAllowed && !guessed[path] {
							break // refused before the body is read: the others would be too
						}
					}
				}
			}
		}
		t.Logf("%d v2 calls", calls)
		h.checkStore(t)
	})
}

// hookOffer finds, in a tool's definition, an offer to register, list or
// change webhook endpoints.
var hookOffer = regexp.MustCompile(`(?i)web[ _-]?hooks?|hooks?\b|endpoints?|callbacks?|subscri|whsec_|signing secret|\bevents?\b`)

// TestToolsCannotReachWebhookEndpoints (D54): the tool server, to a key
// holding every scope, offers no tool for webhook endpoints and nothing
// beside tools; every tool it lists, and every guessed one, called with a
// registration's, listing's or change's arguments, leaves the endpoints as
// the console made them and shows none.
func TestToolsCannotReachWebhookEndpoints(t *testing.T) {
	run(t, envOptions{}, func(t *testing.T, e *env) {
		h := newHooks(t, e)
		calls := 0
		for _, k := range h.keys {
			cs := e.connect(t, k.secret)
			// Resources or prompts would be more ways to show an endpoint:
			// offering them, the server must be tried through them here too.
			if caps := cs.InitializeResult().Capabilities; caps.Resources != nil || caps.Prompts != nil || caps.Tools == nil {
				t.Errorf("the tool server offers resources %v, prompts %v, tools %v: only tools are tried here", caps.Resources, caps.Prompts, caps.Tools)
			}
			schemas := map[string]map[string]any{}
			for tool, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				def, err := json.Marshal(tool)
				if err != nil {
					t.Fatal(err)
				}
				if m := hookOffer.FindAllString(string(def), -1); len(m) > 0 {
					t.Errorf("tool %s offers %q (D54): %s", tool.Name, m, def)
				}
				var in map[string]any
				b, _ := json.Marshal(tool.InputSchema)
				if err := json.Unmarshal(b, &in); err != nil {
					t.Fatalf("%s: input schema %s: %v", tool.Name, b, err)
				}
				schemas[tool.Name] = in
			}
			if len(schemas) < len(allTools) {
				t.Fatalf("tools/list gives %d tools to a key of every scope, want at least %d", len(schemas), len(allTools))
			}
			for _, name := range guessedTools {
				if _, listed := schemas[name]; listed {
					t.Errorf("the tool server lists %s: a tool for webhook endpoints (D54)", name)
				}
			}
			for _, name := range append(slices.Sorted(maps.Keys(schemas)), guessedTools...) {
				_, listed := schemas[name]
				for _, args := range hookBodies(h.endpoint.ID, schemas[name]) {
					e.Clock.Advance(time.Second) // as in the v2 test: D29's rate refills
					calls++
					raw, _ := json.Marshal(args)
					call := fmt.Sprintf("%s %s with the key of %s", name, raw, k.name)
					res, err := callErr(cs, name, args)
					switch {
					case err != nil && listed:
						t.Errorf("%s: %v: the call was not made, so it proves nothing", call, err)
						continue
					case err != nil:
						continue // an unknown tool: a protocol error
					case !listed && !res.IsError:
						t.Errorf("%s: an unlisted tool answered %q", call, texts(t, res))
					}
					for _, text := range texts(t, res) {
						h.checkReply(t, call, text)
					}
					if res.StructuredContent != nil {
						sc, err := json.Marshal(res.StructuredContent)
						if err != nil {
							t.Fatal(err)
						}
						h.checkReply(t, call, string(sc))
					}
				}
			}
		}
		t.Logf("%d tool calls", calls)
		h.checkStore(t)
	})
}
