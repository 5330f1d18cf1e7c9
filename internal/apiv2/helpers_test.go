// The helpers every test file of this package shares: how the application
// is started for a test, the fixtures it starts with, the requests the
// tests make, and the checks they hold the replies to. The tests drive the
// real server over HTTP through apptest, on every engine storetest.Engines
// gives.
package apiv2_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// ---- Running the application

// unlimited is a request rate no test reaches: it keeps a key's rate (D40)
// or a caller IP's (D29) from deciding an outcome the test is not about.
var unlimited = ratelimit.Config{PerMinute: 1e6, Burst: 1_000_000}

// apptestStart is the clock apptest starts at: 15:09:26 UTC, so 8h50m34s
// (31834 s) before the UTC midnight that resets daily caps (D36).
var apptestStart = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// forEachEngine runs t in parallel and fn as a parallel subtest of it on
// every engine (D30, D31).
func forEachEngine(t *testing.T, fn func(t *testing.T, eng storetest.Engine)) {
	t.Helper()
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, eng)
		})
	}
}

// forEachEngineApp runs fn as a parallel subtest on every engine, each with
// an application of its own (checkedEnv). Every request of a test comes
// from one IP: its limit (D29, TestCallerIPLimit) is out of the way here;
// the key's request rate is the default (D40).
func forEachEngineApp(t *testing.T, fn func(t *testing.T, env *apptest.Env)) {
	t.Helper()
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		fn(t, checkedEnv(t, eng.Open(t), apptest.Options{CallerRate: unlimited}))
	})
}

// checkedEnv is apptest.New whose ledger is reconciled (D3) when the test
// and all its subtests have ended.
func checkedEnv(t *testing.T, st store.Store, opts apptest.Options) *apptest.Env {
	t.Helper()
	env := apptest.New(t, st, opts)
	t.Cleanup(func() { env.Reconcile(t) })
	return env
}

// sqliteEnv is checkedEnv on a fresh SQLite store with default options.
func sqliteEnv(t *testing.T) *apptest.Env {
	t.Helper()
	return checkedEnv(t, storetest.OpenSQLite(t), apptest.Options{})
}

// sendEnv is apptest.New with the key's request rate out of the way and
// USD prices from prices (the built-in table when nil, D60).
func sendEnv(t *testing.T, st store.Store, prices price.Source) *apptest.Env {
	t.Helper()
	return apptest.New(t, st, apptest.Options{Rate: unlimited, Prices: prices})
}

// sendEnvOnClock is sendEnv with prices built on the env's own clock first
// (a feed judges staleness by it, D60).
func sendEnvOnClock(t *testing.T, st store.Store, prices func(now func() time.Time) price.Source) *apptest.Env {
	t.Helper()
	clock := apptest.NewClock(apptestStart)
	a, err := app.New(context.Background(), st, app.Options{Now: clock.Now, Rate: unlimited, Prices: prices(clock.Now)})
	if err != nil {
		t.Fatalf("app: %v", err)
	}
	srv := httptest.NewServer(a.Handler(app.HandlerOptions{}))
	t.Cleanup(a.Close)
	t.Cleanup(srv.Close)
	return &apptest.Env{App: a, Server: srv, Clock: clock}
}

// btcAt is a static table pricing BTC at usd a whole coin and nothing else.
func btcAt(usd string) price.Source {
	return price.Static(map[string]decimal.Decimal{"BTC": decimal.RequireFromString(usd)}, "static", nil)
}

// noPrices is a price source that never has a price.
type noPrices struct{}

func (noPrices) Quote(_ context.Context, coin string) (price.Quote, error) {
	return price.Quote{}, fmt.Errorf("%w: test source has no %s", price.ErrUnavailable, coin)
}

// ---- Fixtures

// fixture is a funded faucet, a verified recipient bob, and keys.
type fixture struct {
	f     *drip.Faucet
	v1key string
	bob   *drip.User
	read  string // a key of each scope alone
	send  string
	mng   string
	admin string
}

// newFixture funds a new faucet and registers bob; one fixture per env.
func newFixture(t *testing.T, env *apptest.Env, funds map[string]int64) *fixture {
	t.Helper()
	f, v1key := env.Faucet(t, funds)
	return &fixture{
		f: f, v1key: v1key, bob: env.User(t, "bob"),
		read: env.Key(t, f, drip.ScopeRead), send: env.Key(t, f, drip.ScopeSend),
		mng: env.Key(t, f, drip.ScopeManage), admin: env.Key(t, f, drip.ScopeAdmin),
	}
}

// allScopesKey mints a key of f holding every scope.
func allScopesKey(t *testing.T, env *apptest.Env, f *drip.Faucet) string {
	t.Helper()
	return env.Key(t, f, drip.Scopes...)
}

// mintKey mints a v2 key, of the send and read scopes unless p names
// others, and returns it with its secret.
func mintKey(t *testing.T, env *apptest.Env, p key.MintParams) (*drip.Key, string) {
	t.Helper()
	if p.Scopes == nil {
		p.Scopes = []drip.Scope{drip.ScopeSend, drip.ScopeRead}
	}
	k, secret, err := env.App.Keys.Mint(context.Background(), p)
	if err != nil {
		t.Fatalf("mint key: %v", err)
	}
	return k, secret
}

// dailyCap is $1 a day, and BTC at $50,000 makes 1 satoshi 500 micros, so a
// key with this cap may send 2000 satoshis a day.
const dailyCap = 1_000_000

// ---- Paths and request bodies

// route is a v2 path and the scope spec 4.2 gives it.
type route struct {
	path  string
	scope drip.Scope
}

// read reports whether the path is a read path, which also takes GET (D33).
func (p route) read() bool { return p.scope == drip.ScopeRead }

// routes is every path of spec 4.2, in its order.
var routes = []route{
	{"/balance", drip.ScopeRead},
	{"/balances", drip.ScopeRead},
	{"/currencies", drip.ScopeRead},
	{"/check-address", drip.ScopeRead},
	{"/payouts", drip.ScopeRead},
	{"/faucet", drip.ScopeRead},
	{"/stats/daily", drip.ScopeRead},
	{"/stats/users", drip.ScopeRead},
	{"/transactions", drip.ScopeRead},
	{"/ratelimits", drip.ScopeRead},
	{"/low-balance-notification", drip.ScopeRead},
	{"/audit", drip.ScopeRead},
	{"/events", drip.ScopeRead},
	{"/faucet/update", drip.ScopeManage},
	{"/ratelimits/set", drip.ScopeManage},
	{"/ip-whitelist", drip.ScopeManage},
	{"/ip-whitelist/set", drip.ScopeManage},
	{"/low-balance-notification/toggle", drip.ScopeManage},
	{"/anti-fraud/rules", drip.ScopeManage},
	{"/anti-fraud/toggle", drip.ScopeManage},
	{"/anti-fraud/rules/update", drip.ScopeManage},
	{"/send", drip.ScopeSend},
	{"/send/batch", drip.ScopeSend},
	{"/faucet/create", drip.ScopeAdmin},
	{"/approval-cost", drip.ScopeAdmin},
	{"/faucet/request-approval", drip.ScopeAdmin},
}

// validBody is a body with which a key of the path's scope gets 200 from
// the fixture's faucet. Every call of /send gets a fresh idempotency key.
func validBody(path string) any {
	switch path {
	case "/balance":
		return map[string]any{"currency": "BTC"}
	case "/check-address":
		return map[string]any{"address": "bob"}
	case "/payouts":
		return map[string]any{"count": 5}
	case "/stats/users", "/transactions":
		return map[string]any{"coin": "BTC", "page": 1}
	case "/faucet/update":
		return map[string]any{"faucet_name": "Updated", "faucet_domain": "updated.example.com",
			"faucet_url": "https://updated.example.com/", "faucet_description": "", "timer_minutes": 30}
	case "/ratelimits/set":
		return map[string]any{"ratelimits": []any{}}
	case "/ip-whitelist/set":
		return map[string]any{"ip_whitelist": []string{"127.0.0.0/8", "::1"}}
	case "/low-balance-notification/toggle":
		return map[string]any{"enabled": false}
	case "/anti-fraud/toggle":
		return map[string]any{"enabled": true}
	case "/anti-fraud/rules/update":
		return map[string]any{"trust_rank": 0}
	case "/send":
		return freshSend("bob", 1000, "BTC")
	case "/send/batch":
		return map[string]any{"items": []sendBody{freshSend("bob", 1000, "BTC")}}
	case "/faucet/create":
		return map[string]any{"faucet_name": "Created", "faucet_domain": "created.example.com",
			"faucet_url": "https://created.example.com/"}
	case "/approval-cost", "/faucet/request-approval":
		return map[string]any{"coin": "BTC"}
	}
	return nil // paths without parameters
}

// sendBody is a /send body; empty fields are left out.
type sendBody struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	To             string `json:"to,omitempty"`
	Amount         any    `json:"amount,omitempty"`
	Currency       string `json:"currency,omitempty"`
	IPAddress      string `json:"ip_address,omitempty"`
	Referral       string `json:"referral,omitempty"`
}

var idemSeq atomic.Int64

// freshIdem is an idempotency key no other request of the process used.
func freshIdem() string { return "idem-" + strconv.FormatInt(idemSeq.Add(1), 10) }

// freshSend is a /send body with a fresh idempotency key.
func freshSend(to string, amount int64, coin string) sendBody {
	return sendBody{IdempotencyKey: freshIdem(), To: to, Amount: amount, Currency: coin}
}

// sendToAlice is a /send of 100 BTC units to alice under idempotency key idem.
func sendToAlice(idem string) sendBody {
	return sendBody{IdempotencyKey: idem, To: "alice", Amount: 100, Currency: "BTC"}
}

// sendJSON is a /send body with a fresh idempotency key, the given amount
// as raw JSON, and extra raw members appended.
func sendJSON(amount, extra string) string {
	return fmt.Sprintf(`{"idempotency_key":%q,"to":"bob","amount":%s,"currency":"BTC"%s}`, freshIdem(), amount, extra)
}

// siteJSON is a /faucet/update body with raw members appended.
func siteJSON(extra string) string {
	return `{"faucet_name":"Moon","faucet_domain":"moon.example.com","faucet_url":"https://moon.example.com/",` +
		`"faucet_description":"","timer_minutes":5` + extra + `}`
}

// askBalance asks /balance of BTC with a key (read scope).
func askBalance(t *testing.T, env *apptest.Env, secret string) *apptest.V2Reply {
	t.Helper()
	return env.V2(t, secret, "/balance", map[string]string{"currency": "BTC"})
}

// pay sends amount of coin to to with a fresh idempotency key, fails the
// test unless it is paid, and returns the payout's id.
func pay(t *testing.T, env *apptest.Env, sendKey, to string, amount int64, coin string) int64 {
	t.Helper()
	return wantPaid(t, env.V2(t, sendKey, "/send", freshSend(to, amount, coin)), false).PayoutID
}

// ---- Checks of replies

// wantOK fails the test unless r is a 200 success (D32).
func wantOK(t testing.TB, r *apptest.V2Reply) {
	t.Helper()
	if r.HTTPStatus != http.StatusOK || !r.Envelope.Success || r.Envelope.Status != http.StatusOK || r.Envelope.Error != nil {
		t.Fatalf("HTTP %d, want a 200 success: %s", r.HTTPStatus, r.Raw)
	}
}

// wantData fails the test unless r is a 200 success whose data is the JSON want.
func wantData(t testing.TB, r *apptest.V2Reply, want string) {
	t.Helper()
	wantOK(t, r)
	if diff := cmp.Diff(decodeJSON(t, want), decodeJSON(t, string(r.Envelope.Data))); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}

// sendData is the data of a paid send (spec 4.2).
type sendData struct {
	RateLimitRemaining float64     `json:"rate_limit_remaining"`
	Currency           string      `json:"currency"`
	Balance            int64       `json:"balance"`
	BalanceBitcoin     json.Number `json:"balance_bitcoin"`
	PayoutID           int64       `json:"payout_id"`
	PayoutUserHash     string      `json:"payout_user_hash"`
}

// wantPaid fails the test unless r is a paid send, replayed (D35) or not as
// wantReplayed says, and returns its data.
func wantPaid(t testing.TB, r *apptest.V2Reply, wantReplayed bool) sendData {
	t.Helper()
	wantOK(t, r)
	if got := r.Header.Get("Idempotent-Replayed") == "true"; got != wantReplayed {
		t.Errorf("Idempotent-Replayed %q, want replayed=%v (D35)", r.Header.Get("Idempotent-Replayed"), wantReplayed)
	}
	var d sendData
	r.Data(t, &d)
	if d.PayoutID <= 0 {
		t.Errorf("payout_id %d: %s", d.PayoutID, r.Raw)
	}
	return d
}

// v1StatusOf is the v1 status (spec 7.1) an error envelope names for the
// codes that have one beyond doubt; nil means null (D32).
var v1StatusOf = map[string]*int{
	"unauthenticated": intPtr(403), "forbidden": intPtr(401), "rate_limited": intPtr(459), "invalid_currency": intPtr(410),
	"invalid_amount": intPtr(405), "recipient_not_payable": intPtr(456), "recipient_refused": intPtr(457),
	"send_limit_reached": intPtr(450), "insufficient_balance": intPtr(402),
	"insufficient_scope": nil, "idempotency_key_reuse": nil, "conflict": nil,
}

// wantError fails the test unless r is an error envelope (D32) with the
// HTTP status and error code, the v1_status v1StatusOf gives the code, and
// no Idempotent-Replayed: a refusal is never a replay (D35).
func wantError(t testing.TB, r *apptest.V2Reply, status int, code string) {
	t.Helper()
	if r.HTTPStatus != status || r.Code() != code {
		t.Errorf("HTTP %d %q, want %d %q: %s", r.HTTPStatus, r.Code(), status, code, r.Raw)
		return
	}
	if r.Envelope.Success || r.Envelope.Status != status || string(r.Envelope.Data) != "null" || r.Envelope.Message == "" {
		t.Errorf("error envelope (D32): want success false, status %d, data null and a message: %s", status, r.Raw)
	}
	if h := r.Header.Get("Idempotent-Replayed"); h != "" {
		t.Errorf("a refusal carries Idempotent-Replayed %q", h)
	}
	if want, ok := v1StatusOf[code]; ok {
		wantV1Status(t, r, want)
	}
}

// wantV1Status checks the error's v1_status against drip's one table; nil
// means null is wanted.
func wantV1Status(t testing.TB, r *apptest.V2Reply, want *int) {
	t.Helper()
	if r.Envelope.Error == nil {
		t.Fatalf("no error member: %s", r.Raw)
	}
	got := r.Envelope.Error.V1Status
	if (got == nil) != (want == nil) || (got != nil && *got != *want) {
		t.Errorf("error.v1_status %s, want %s: %s", intText(got), intText(want), r.Raw)
	}
}

// wantUnauthenticated checks a reply is 401 unauthenticated with a Bearer
// challenge and v1_status 403 (v1's "api_key invalid or missing").
func wantUnauthenticated(t *testing.T, r *apptest.V2Reply) {
	t.Helper()
	wantError(t, r, http.StatusUnauthorized, "unauthenticated")
	if h := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(h, "Bearer") {
		t.Errorf("WWW-Authenticate %q, want a Bearer challenge (RFC 6750)", h)
	}
	wantV1Status(t, r, intPtr(403))
}

// wantForbidden checks a reply is 403 forbidden with v1_status 401 (v1's
// "IP not whitelisted, or owner account suspended").
func wantForbidden(t *testing.T, r *apptest.V2Reply) {
	t.Helper()
	wantError(t, r, http.StatusForbidden, "forbidden")
	if h := r.Header.Get("WWW-Authenticate"); h != "" {
		t.Errorf("a 403 carries WWW-Authenticate %q", h)
	}
	wantV1Status(t, r, intPtr(401))
}

// retryAfter reads a reply's Retry-After as whole seconds.
func retryAfter(t *testing.T, r *apptest.V2Reply) int {
	t.Helper()
	h := r.Header.Get("Retry-After")
	n, err := strconv.Atoi(h)
	if err != nil || n <= 0 {
		t.Fatalf("Retry-After %q, want a positive number of seconds: %s", h, r.Raw)
	}
	return n
}

// intPtr is a pointer to n, for a v1_status that is not null.
func intPtr(n int) *int { return &n }

// intText is *p as JSON text: "null" for nil.
func intText(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}

// ---- Expected data

// stamp is how v2 writes a time: RFC 3339, UTC.
func stamp(tm time.Time) string { return tm.UTC().Format(time.RFC3339) }

// payoutItem is one /payouts item as the test expects it.
func payoutItem(id int64, to string, amount int64, coin, ip, referral string, at time.Time) map[string]any {
	return map[string]any{"payout_id": id, "to": to, "amount": amount, "currency": coin,
		"ip_address": ip, "referral": referral, "created_at": stamp(at)}
}

// faucetWant is the /faucet record (D38) the test expects.
type faucetWant struct {
	id                      int64
	name, domain, url, desc string
	timer                   int
	currencies, categories  []string
	created                 time.Time
	whitelist               []string
	limits                  []any
	rules                   map[string]any
	lowBalance              map[string]any
	listing                 any
	balances                []any
}

func (w faucetWant) json(t testing.TB) string {
	return jsonText(t, map[string]any{
		"id": w.id, "faucet_name": w.name, "faucet_domain": w.domain, "faucet_url": w.url,
		"faucet_description": w.desc, "timer_minutes": w.timer, "currencies_selected": w.currencies,
		"categories_selected": w.categories, "owner_status": "active", "created_at": stamp(w.created),
		"ip_whitelist": w.whitelist, "ratelimits": w.limits, "anti_fraud": w.rules,
		"low_balance_notification": w.lowBalance, "listing": w.listing, "balances": w.balances,
	})
}

// newFaucetWant is what /faucet says of a faucet just made by apptest.
func newFaucetWant(t testing.TB, f *drip.Faucet, balances ...any) faucetWant {
	if balances == nil {
		balances = []any{}
	}
	return faucetWant{
		id: f.ID, name: f.Name, domain: f.Domain, url: f.URL, desc: "", timer: 60,
		currencies: []string{}, categories: []string{}, created: f.CreatedAt,
		whitelist: []string{}, limits: []any{},
		rules:      decodeJSON(t, defaultRules).(map[string]any),
		lowBalance: map[string]any{"enabled": false, "thresholds": map[string]any{}},
		listing:    nil, balances: balances,
	}
}

// defaultRules is the anti-fraud record of a new faucet (D42).
const defaultRules = `{"anti_fraud":true,"trust_rank":0,"negative_rank":100,"whitelist":[],"blacklist":[]}`

// balanceJSON is one balance of /faucet as the test expects it.
func balanceJSON(coin string, units int64) map[string]any {
	return map[string]any{"currency": coin, "balance": units, "balance_bitcoin": json.Number(drip.FormatCoins(units))}
}

// dropIDs removes member name from every object of list and returns the
// values, for ids the test cannot know in advance.
func dropIDs(t testing.TB, list any, name string) []int64 {
	t.Helper()
	items, ok := list.([]any)
	if !ok {
		t.Fatalf("not a list: %v", list)
	}
	var ids []int64
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			t.Fatalf("not an object: %v", it)
		}
		n, ok := m[name].(json.Number)
		if !ok {
			t.Fatalf("%s is not a number: %v", name, m)
		}
		id, err := n.Int64()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ids = append(ids, id)
		delete(m, name)
	}
	return ids
}

// decodeJSON decodes JSON text into generic values, numbers kept as written.
func decodeJSON(t testing.TB, text string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("JSON %s: %v", text, err)
	}
	return v
}

// jsonText is v as JSON text.
func jsonText(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// ---- The store, read behind the server's back

// payouts lists f's payouts from the store, newest first.
func payouts(t *testing.T, env *apptest.Env, f *drip.Faucet) []drip.Payout {
	t.Helper()
	list, err := env.App.Store.PayoutList(context.Background(), &store.PayoutListParams{FaucetID: f.ID, Limit: 1000})
	if err != nil {
		t.Fatalf("payout list: %v", err)
	}
	return list
}

// keySpend is a key's spend of the current UTC day, in USD micros (D36).
func keySpend(t *testing.T, env *apptest.Env, k *drip.Key) int64 {
	t.Helper()
	n, err := env.App.Store.KeySpendGet(context.Background(), k.ID, ledger.Day(env.Clock.Now()))
	if err != nil {
		t.Fatalf("key spend: %v", err)
	}
	return n
}

// ownerFaucets lists the faucets of f's owner.
func ownerFaucets(t *testing.T, env *apptest.Env, f *drip.Faucet) []drip.Faucet {
	t.Helper()
	list, err := env.App.Store.FaucetListByOwner(context.Background(), f.OwnerID)
	if err != nil {
		t.Fatalf("faucets of owner: %v", err)
	}
	return list
}

// ---- Sends at once

// sentReply is what one concurrent sender saw. Errors are kept, not
// reported, because t.Fatal may not be called from a sender's goroutine.
type sentReply struct {
	HTTPStatus int
	Replayed   bool
	Raw        string
	Code       string
	Data       sendData
	Err        error
}

// sendRequest is one concurrent request: a Bearer key and a /send body, to
// one of the servers (index into the urls sendAtOnce is given).
type sendRequest struct {
	Server int
	Key    string
	Body   sendBody
}

// sendAtOnce starts one goroutine per request, releases them together, and
// returns the replies in request order. Its keep-alive client has room for
// every sender, so the requests reach the servers together.
func sendAtOnce(t *testing.T, servers []string, reqs []sendRequest) []sentReply {
	t.Helper()
	tr := &http.Transport{MaxIdleConns: len(reqs), MaxIdleConnsPerHost: len(reqs)}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	replies := make([]sentReply, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, rq := range reqs {
		wg.Go(func() {
			<-start
			replies[i] = postSend(client, servers[rq.Server]+apiv2.Prefix+"/send", rq)
		})
	}
	close(start)
	wg.Wait()
	for i, r := range replies {
		if r.Err != nil {
			t.Errorf("sender %d: %v %s", i, r.Err, r.Raw)
		}
	}
	return replies
}

// postSend makes one request of sendAtOnce.
func postSend(client *http.Client, target string, rq sendRequest) sentReply {
	body, err := json.Marshal(rq.Body)
	if err != nil {
		return sentReply{Err: err}
	}
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return sentReply{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+rq.Key)
	resp, err := client.Do(req)
	if err != nil {
		return sentReply{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := sentReply{HTTPStatus: resp.StatusCode, Raw: string(raw), Err: err,
		Replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if err != nil {
		return r
	}
	var env struct {
		Status int             `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		r.Err = fmt.Errorf("reply is not a v2 envelope: %v", err)
		return r
	}
	if env.Status != resp.StatusCode {
		r.Err = fmt.Errorf("envelope status %d, HTTP %d", env.Status, resp.StatusCode)
	}
	if env.Error != nil {
		r.Code = env.Error.Code
	} else if err := json.Unmarshal(env.Data, &r.Data); err != nil {
		r.Err = fmt.Errorf("data: %v", err)
	}
	return r
}

// outcomes counts replies by "HTTP code" ("200", "409 insufficient_balance").
func outcomes(replies []sentReply) map[string]int {
	counts := map[string]int{}
	for _, r := range replies {
		k := strconv.Itoa(r.HTTPStatus)
		if r.Code != "" {
			k += " " + r.Code
		}
		counts[k]++
	}
	return counts
}

// ---- The OpenAPI document

// openAPIDoc is the parsed and validated document apptest checks every
// exchange against (D39).
func openAPIDoc(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := apptest.V2Document()
	if err != nil {
		t.Fatalf("OpenAPI document: %v", err)
	}
	return doc
}

// schema is a JSON schema of the document, as generic JSON.
type schema = map[string]any

// openAPIJSON is the served document, as generic JSON.
func openAPIJSON(t *testing.T) schema {
	t.Helper()
	var doc schema
	if err := json.Unmarshal(apiv2.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// requestSchema is the schema of an operation's JSON body, or nil.
func requestSchema(op schema) schema {
	return object(object(object(object(op, "requestBody"), "content"), "application/json"), "schema")
}

// typesOf is the schema's type, a list even when the schema gives one.
func typesOf(s schema) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringsOf(t)
	}
	return nil
}

// stringsOf is a JSON list of strings as a Go slice (empty if v is none).
func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		out = append(out, e.(string))
	}
	return out
}

// intOf is the schema's number key as an int, or def when it has none.
func intOf(s schema, key string, def int) int {
	if f, ok := s[key].(float64); ok {
		return int(f)
	}
	return def
}

// object is the member key of m when it is an object, else nil.
func object(m map[string]any, key string) map[string]any {
	o, _ := m[key].(map[string]any)
	return o
}

// pattern is the schema's pattern, or "".
func pattern(s schema) string { v, _ := s["pattern"].(string); return v }
