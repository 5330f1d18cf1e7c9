// The helpers every test file of this package shares: how the application
// is started for a test, the fixtures it starts with, the requests the
// tests make, and the checks they hold the replies and the ledger to. The
// tests drive the real server over HTTP through apptest, on every engine
// storetest.Engines gives.
package apiv1_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apiv1"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
)

// ---- Running the application

// unlimited is a request rate no test reaches: the bucket is too large to
// empty, even by a fuzz run, and the fixed test clock never refills it, so
// the key's request rate (D40) decides no outcome the test is not about.
var unlimited = ratelimit.Config{PerMinute: 60_000, Burst: 1 << 30}

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

// checkedEnv is apptest.New whose ledger is reconciled (D3) when the test
// and all its subtests have ended.
func checkedEnv(t *testing.T, st store.Store, opts apptest.Options) *apptest.Env {
	t.Helper()
	env := apptest.New(t, st, opts)
	reconcileAtEnd(t, env)
	return env
}

// reconcileAtEnd has env's ledger reconciled (D3) when the test and all its
// subtests have ended.
func reconcileAtEnd(t *testing.T, env *apptest.Env) {
	t.Cleanup(func() { env.Reconcile(t) })
}

// ---- Users, faucets and their settings

// nameSeq makes usernames unique across the parallel tests sharing an env.
var nameSeq atomic.Int64

// uniqueSuffix is a fresh suffix for a unique name.
func uniqueSuffix() string { return strconv.FormatInt(nameSeq.Add(1), 10) }

// newUser creates a verified, active user whose name starts with prefix.
func newUser(t testing.TB, env *apptest.Env, prefix string) *drip.User {
	t.Helper()
	return env.User(t, fmt.Sprintf("%s%d", prefix, nameSeq.Add(1)))
}

// unverifiedUser creates a user who has not verified their email, whose
// name starts with prefix.
func unverifiedUser(t testing.TB, env *apptest.Env, prefix string) *drip.User {
	t.Helper()
	name := prefix + uniqueSuffix()
	u, err := env.App.Users.Create(context.Background(), user.CreateParams{Username: name, Email: name + "@example.com", Verified: false})
	if err != nil {
		t.Fatalf("create unverified user: %v", err)
	}
	return u
}

// suspendedUser creates a verified user, then suspends them.
func suspendedUser(t testing.TB, env *apptest.Env, prefix string) *drip.User {
	t.Helper()
	u := newUser(t, env, prefix)
	if err := env.App.Users.SetStatus(context.Background(), u, drip.UserSuspended); err != nil {
		t.Fatalf("suspend user: %v", err)
	}
	return u
}

// linkAddress links a wallet address of coin to u (D11).
func linkAddress(t testing.TB, env *apptest.Env, u *drip.User, coin, address string) {
	t.Helper()
	if err := env.App.Users.LinkAddress(context.Background(), u, coin, address); err != nil {
		t.Fatalf("link %s address: %v", coin, err)
	}
}

// scene is one faucet of an env with its v1 key.
type scene struct {
	env *apptest.Env
	f   *drip.Faucet
	key string
}

// newScene creates a funded faucet and reconciles the ledger when the
// test ends.
func newScene(t *testing.T, env *apptest.Env, funds map[string]int64) *scene {
	t.Helper()
	f, key := env.Faucet(t, funds)
	reconcileAtEnd(t, env)
	return &scene{env: env, f: f, key: key}
}

// post sends a form POST to path with the faucet's key and the given
// name/value pairs.
func (s *scene) post(t testing.TB, path string, pairs ...string) *apptest.Reply {
	t.Helper()
	return s.env.Post(t, path, keyForm(s.key, pairs...))
}

// send posts /send and fails the test unless the reply has status want.
func (s *scene) send(t testing.TB, want int, pairs ...string) *apptest.Reply {
	t.Helper()
	r := s.post(t, "/send", pairs...)
	if got := r.Status(); got != want {
		t.Fatalf("/send %v: status %d, want %d: %s", pairs, got, want, r.Raw)
	}
	return r
}

// balances is every balance of an account, for before/after comparisons.
func (s *scene) balances(t testing.TB, accountID int64) []drip.Balance {
	t.Helper()
	b, err := s.env.App.Store.BalanceList(context.Background(), accountID)
	if err != nil {
		t.Fatalf("balance list: %v", err)
	}
	return b
}

// setWhitelist sets the scene's faucet IP whitelist from its text form.
func setWhitelist(t testing.TB, s *scene, list string) {
	t.Helper()
	ips, err := faucet.ParseIPList(list)
	if err != nil {
		t.Fatalf("parse %q: %v", list, err)
	}
	if _, _, err := s.env.App.Faucets.SetIPWhitelist(context.Background(), s.f.ID, ips); err != nil {
		t.Fatalf("set IP whitelist: %v", err)
	}
}

// suspendOwner suspends the owner of the scene's faucet.
func suspendOwner(t testing.TB, s *scene) {
	t.Helper()
	ctx := context.Background()
	owner, err := s.env.App.Store.UserGetByID(ctx, s.f.OwnerID)
	if err != nil {
		t.Fatalf("owner: %v", err)
	}
	if err := s.env.App.Users.SetStatus(ctx, owner, drip.UserSuspended); err != nil {
		t.Fatalf("suspend owner: %v", err)
	}
}

// setLimits replaces the send limits of the scene's faucet (D41).
func setLimits(t testing.TB, s *scene, limits ...drip.Limit) {
	t.Helper()
	ctx := context.Background()
	if _, _, err := s.env.App.Faucets.SetLimits(ctx, s.f.ID, limits); err != nil {
		t.Fatalf("set limits: %v", err)
	}
}

// setRules changes the anti-fraud rules of the scene's faucet (D42).
func setRules(t testing.TB, s *scene, c faucet.RulesChange) {
	t.Helper()
	if _, _, err := s.env.App.Faucets.SetRules(context.Background(), s.f.ID, c); err != nil {
		t.Fatalf("set rules: %v", err)
	}
}

// blacklist is a rules change that sets the blacklist to entries.
func blacklist(entries ...string) faucet.RulesChange {
	return faucet.RulesChange{Blacklist: &entries}
}

// exhaustBucket spends the faucet's whole request bucket of size burst.
func exhaustBucket(t testing.TB, s *scene, burst int) {
	t.Helper()
	for range burst {
		if r := s.post(t, "/currencies"); r.Status() != 200 {
			t.Fatalf("request within the burst: %s", r.Raw)
		}
	}
}

// refusedElsewhere has another faucet's blacklist refuse u once, which
// raises u's negative rank by 25 (D42, antifraud.NegativeRank).
func refusedElsewhere(t testing.TB, env *apptest.Env, u *drip.User) {
	t.Helper()
	f, key := env.Faucet(t, map[string]int64{"BTC": 100})
	other := &scene{env: env, f: f, key: key}
	setRules(t, other, blacklist(u.Username))
	other.send(t, 457, "to", u.Username, "amount", "1", "currency", "BTC")
}

// payouts lists f's payouts from the store, newest first.
func payouts(t testing.TB, env *apptest.Env, f *drip.Faucet) []drip.Payout {
	t.Helper()
	list, err := env.App.Store.PayoutList(context.Background(), &store.PayoutListParams{FaucetID: f.ID, Limit: 10_000})
	if err != nil {
		t.Fatalf("payout list: %v", err)
	}
	return list
}

// ---- Requests

// keyForm is a form with api_key and the given name/value pairs.
func keyForm(key string, pairs ...string) url.Values {
	form := url.Values{"api_key": {key}}
	for i := 0; i+1 < len(pairs); i += 2 {
		form.Set(pairs[i], pairs[i+1])
	}
	return form
}

// formBody is fields form-encoded, each value as fmt.Sprint writes it.
func formBody(fields map[string]any) string {
	form := url.Values{}
	for k, v := range fields {
		form.Set(k, fmt.Sprint(v))
	}
	return form.Encode()
}

// multipartBody encodes fields as a multipart/form-data body and returns
// it with its Content-Type.
func multipartBody(t testing.TB, fields ...string) (body, contentType string) {
	t.Helper()
	var b strings.Builder
	w := multipart.NewWriter(&b)
	for i := 0; i+1 < len(fields); i += 2 {
		if err := w.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), w.FormDataContentType()
}

// percentAll escapes every byte of s, as an over-eager client might.
func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// request is the request a case makes.
type request struct {
	Method string // "" is POST
	Path   string // "" is /send
	// Form is the body, form-encoded. The faucet's api_key is added unless
	// Form names api_key; a nil value (Form["api_key"] = nil) leaves the
	// member out of the body altogether.
	Form url.Values
}

// do makes req as the scene's faucet.
func (s *scene) do(t testing.TB, req request) *apptest.Reply {
	t.Helper()
	method, path := req.Method, req.Path
	if method == "" {
		method = http.MethodPost
	}
	if path == "" {
		path = "/send"
	}
	form := url.Values{}
	for k, v := range req.Form {
		form[k] = v
	}
	if _, ok := form["api_key"]; !ok {
		form.Set("api_key", s.key)
	}
	return s.env.Do(t, method, path, "application/x-www-form-urlencoded", form.Encode())
}

// sendTo is a /send of amount units of coin to "to".
func sendTo(to, amount, coin string, more ...string) request {
	form := url.Values{"to": {to}, "amount": {amount}, "currency": {coin}}
	for i := 0; i+1 < len(more); i += 2 {
		form.Set(more[i], more[i+1])
	}
	return request{Form: form}
}

// without is req with the members named left out of the body.
func without(req request, names ...string) request {
	for _, n := range names {
		if n == "api_key" {
			req.Form[n] = nil
		} else {
			delete(req.Form, n)
		}
	}
	return req
}

// ---- Replies: members, kinds and shapes

// shapeOf maps each member of a JSON object to the kind of its value:
// "string", "number", "boolean", "array", "object" or "null". Comparing
// shapes checks both that every member has its type and that there is no
// member too many or too few.
func shapeOf(members map[string]json.RawMessage) map[string]string {
	shape := make(map[string]string, len(members))
	for name, raw := range members {
		shape[name] = kindOf(raw)
	}
	return shape
}

// kindOf is the kind of a JSON value by its first byte; "missing" for none.
func kindOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "missing"
	}
	switch c := raw[0]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "number"
	}
	return "invalid " + string(raw)
}

// integerRE matches a JSON integer: no fraction, no exponent.
var integerRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// intMember reads a member that must be a JSON integer: a number written
// without fraction or exponent.
func intMember(t testing.TB, members map[string]json.RawMessage, name string) int64 {
	t.Helper()
	raw := string(members[name])
	if !integerRE.MatchString(raw) {
		t.Errorf("%s = %s, want a JSON integer", name, raw)
		return 0
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		t.Errorf("%s = %s: %v", name, raw, err)
	}
	return n
}

// stringMember reads a member that must be a JSON string.
func stringMember(t testing.TB, members map[string]json.RawMessage, name string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(members[name], &s); err != nil {
		t.Errorf("%s = %s, want a JSON string", name, members[name])
	}
	return s
}

// objectsMember decodes a member that must be an array of objects.
func objectsMember(t testing.TB, members map[string]json.RawMessage, name string) []map[string]json.RawMessage {
	t.Helper()
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(members[name], &list); err != nil {
		t.Fatalf("%s = %s, want an array of objects: %v", name, members[name], err)
	}
	return list
}

// atoi reads a decimal integer the test itself wrote.
func atoi(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// coinsEqual reports whether the JSON number text equals units/1e8
// exactly (D1).
func coinsEqual(text string, units int64) bool {
	r, ok := new(big.Rat).SetString(text)
	return ok && r.Cmp(big.NewRat(units, 100_000_000)) == 0
}

// hashRE matches a payout_user_hash (D12).
var hashRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Error replies are the envelope alone (spec 2.1, 7.1): nothing a faucet's
// visitor should not see, and no member a client could mistake for a result.
var errorShape = map[string]string{"status": "number", "message": "string"}

// The members of each success reply, as the handlers write them (spec 2.3-2.6).
var (
	sendShape = map[string]string{
		"status": "number", "message": "string", "rate_limit_remaining": "number",
		"currency": "string", "balance": "number", "balance_bitcoin": "number",
		"payout_id": "number", "payout_user_hash": "string",
	}
	checkAddressShape = map[string]string{"status": "number", "message": "string", "payout_user_hash": "string"}
	balanceShape      = map[string]string{
		"status": "number", "message": "string", "currency": "string", "balance": "number", "balance_bitcoin": "number",
	}
	payoutsShape    = map[string]string{"status": "number", "message": "string", "rewards": "array"}
	rewardShape     = map[string]string{"to": "string", "amount": "number", "date": "string"}
	currenciesShape = map[string]string{
		"status": "number", "message": "string", "currencies": "array", "currencies_names": "array",
	}
	coinNameShape = map[string]string{"name": "string", "acronym": "string"}
)

// checkError checks a refusal: HTTP 200 (spec 7.1), the v1 status, an
// envelope of exactly status and message, and a message to show.
func checkError(t testing.TB, r *apptest.Reply, want int) {
	t.Helper()
	if r.HTTPStatus != 200 {
		t.Errorf("HTTP status %d, want 200 (spec 7.1): %s", r.HTTPStatus, r.Raw)
	}
	if got := r.Status(); got != want {
		t.Errorf("status %d, want %d: %s", got, want, r.Raw)
	}
	if want == 200 {
		return
	}
	if diff := cmp.Diff(errorShape, shapeOf(r.Body)); diff != "" {
		t.Errorf("error reply members (-want +got):\n%s\n%s", diff, r.Raw)
	}
	intMember(t, r.Body, "status")
	if stringMember(t, r.Body, "message") == "" {
		t.Errorf("empty message: %s", r.Raw)
	}
}

// checkOK checks a success reply: HTTP 200, status 200 as an integer,
// a message, and exactly the members of shape.
func checkOK(t testing.TB, r *apptest.Reply, shape map[string]string) {
	t.Helper()
	if r.HTTPStatus != 200 {
		t.Errorf("HTTP status %d, want 200: %s", r.HTTPStatus, r.Raw)
	}
	if got := intMember(t, r.Body, "status"); got != 200 {
		t.Fatalf("status %d, want 200: %s", got, r.Raw)
	}
	if diff := cmp.Diff(shape, shapeOf(r.Body)); diff != "" {
		t.Errorf("reply members (-want +got):\n%s\n%s", diff, r.Raw)
	}
	if stringMember(t, r.Body, "message") == "" {
		t.Errorf("empty message: %s", r.Raw)
	}
}

// reward is a decoded /payouts item.
type reward struct {
	To     string
	Amount int64
	Date   string
}

// decodeRewards checks a /payouts reply and its items' members and types
// (spec 2.5) and returns the items.
func decodeRewards(t testing.TB, r *apptest.Reply) []reward {
	t.Helper()
	checkOK(t, r, payoutsShape)
	var out []reward
	for i, item := range objectsMember(t, r.Body, "rewards") {
		if diff := cmp.Diff(rewardShape, shapeOf(item)); diff != "" {
			t.Errorf("rewards[%d] members (-want +got):\n%s", i, diff)
		}
		out = append(out, reward{To: stringMember(t, item, "to"), Amount: intMember(t, item, "amount"), Date: stringMember(t, item, "date")})
	}
	return out
}

// ptr is a pointer to v.
func ptr[T any](v T) *T { return &v }

// eventData decodes an event's data, checking its members and types,
// and that amount is an integer.
func eventData(t testing.TB, e drip.Event, shape map[string]string) map[string]any {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(e.Data, &members); err != nil {
		t.Fatalf("%s data %s: %v", e.Type, e.Data, err)
	}
	if diff := cmp.Diff(shape, shapeOf(members)); diff != "" {
		t.Errorf("%s data members (-want +got):\n%s", e.Type, diff)
	}
	intMember(t, members, "amount")
	dec := json.NewDecoder(bytes.NewReader(e.Data))
	dec.UseNumber()
	var data map[string]any
	if err := dec.Decode(&data); err != nil {
		t.Fatalf("%s data: %v", e.Type, err)
	}
	return data
}

// ---- Status cases: one request, one v1 status, every balance checked

// statusCase is one request provoking one v1 status.
type statusCase struct {
	name string
	// prepare sets up the scene (faucet settings, users, earlier sends) and
	// returns the request under test and the recipient whose wallet must
	// not change (nil when there is none).
	prepare func(t *testing.T, s *scene) (request, *drip.User)
	want    int
}

// runStatusCases runs each case on a faucet of its own, funded with
// 1,000,000 BTC and DOGE units, in env. A refused request must leave every
// balance of the faucet and of the recipient as it was.
func runStatusCases(t *testing.T, env *apptest.Env, cases []statusCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newScene(t, env, map[string]int64{"BTC": 1_000_000, "DOGE": 1_000_000})
			req, recipient := tc.prepare(t, s)
			faucetBefore := s.balances(t, s.f.AccountID)
			var recipientBefore []drip.Balance
			if recipient != nil {
				recipientBefore = s.balances(t, recipient.AccountID)
			}
			coin := drip.Symbol(req.Form.Get("currency")) // any case (D28)
			var recipientCoinBefore int64
			if recipient != nil && tc.want == 200 {
				recipientCoinBefore = s.env.Balance(t, recipient.AccountID, coin)
			}
			r := s.do(t, req)
			checkError(t, r, tc.want)
			if tc.want == 200 {
				// A paid send pays the recipient the amount (D2).
				if recipient != nil {
					want := recipientCoinBefore + atoi(t, req.Form.Get("amount"))
					if got := s.env.Balance(t, recipient.AccountID, coin); got != want {
						t.Errorf("recipient %s balance %d, want %d", coin, got, want)
					}
				}
				return
			}
			if diff := cmp.Diff(faucetBefore, s.balances(t, s.f.AccountID)); diff != "" {
				t.Errorf("refused request changed the faucet's balances (-before +after):\n%s", diff)
			}
			if recipient != nil {
				if diff := cmp.Diff(recipientBefore, s.balances(t, recipient.AccountID)); diff != "" {
					t.Errorf("refused request changed the recipient's balances (-before +after):\n%s", diff)
				}
			}
		})
	}
}

// ---- Request cases: one request, its v1 outcome, and the ledger after it

// ledgerFixtureFunds is what each robustness faucet starts with, in BTC units;
// enough for every paying case at sendAmount.
const (
	ledgerFixtureFunds = 1_000_000
	sendAmount         = 1000
)

// keyMark in a case's body stands for the faucet's v1 key, which is
// random per environment.
const keyMark = "$KEY"

// noPath as a case's path sends to the v1 prefix itself.
const noPath = "(none)"

// validSendForm is a valid send of sendAmount BTC to alice.
const validSendForm = "api_key=$KEY&to=alice&amount=1000&currency=BTC"

// operationPaths are every v1 operation (spec 4.1) and the /balance alias (D20).
var operationPaths = []string{"/send", "/checkaddress", "/getbalance", "/balance", "/payouts", "/currencies"}

// ledgerFixture is a running app with one funded faucet and two recipients.
type ledgerFixture struct {
	env    *apptest.Env
	faucet *drip.Faucet
	key    string
	alice  *drip.User
	bob    *drip.User
}

// newLedgerFixture starts the application over st, its key's request rate
// out of the way, and registers alice and bob.
func newLedgerFixture(t *testing.T, st store.Store) *ledgerFixture {
	t.Helper()
	env := apptest.New(t, st, apptest.Options{Rate: unlimited})
	f, key := env.Faucet(t, map[string]int64{"BTC": ledgerFixtureFunds})
	return &ledgerFixture{env: env, faucet: f, key: key, alice: env.User(t, "alice"), bob: env.User(t, "bob")}
}

// ledgerState is everything a refused request must leave untouched.
type ledgerState struct {
	Faucet, Alice, Bob int64 // BTC balances
	Payouts            []drip.Payout
}

// state reads fx's ledgerState.
func (fx *ledgerFixture) state(t *testing.T) ledgerState {
	t.Helper()
	return ledgerState{
		Faucet:  fx.env.Balance(t, fx.faucet.AccountID, "BTC"),
		Alice:   fx.env.Balance(t, fx.alice.AccountID, "BTC"),
		Bob:     fx.env.Balance(t, fx.bob.AccountID, "BTC"),
		Payouts: payouts(t, fx.env, fx.faucet),
	}
}

// requestCase is one request and the v1 outcome it must get.
type requestCase struct {
	name        string
	method      string                  // POST when empty
	path        string                  // "/send" when empty; noPath for the prefix alone
	contentType string                  // form-urlencoded when empty; "-" sends none
	body        string                  // keyMark stands for the key
	bodyOf      func(key string) string // overrides body, when the key's length matters
	want        int                     // v1 status in the body
	wantMessage string                  // a substring of the message, when it matters
	// paysAlice is the amount a successful send pays alice; 0 means the
	// request must change nothing.
	paysAlice int64
}

// check sends c and holds its reply and its effect on the ledger to the
// case's expectations.
func (fx *ledgerFixture) check(t *testing.T, c requestCase) {
	t.Helper()
	method, path, contentType := c.method, c.path, c.contentType
	if method == "" {
		method = http.MethodPost
	}
	switch path {
	case "":
		path = "/send"
	case noPath:
		path = ""
	}
	switch contentType {
	case "":
		contentType = "application/x-www-form-urlencoded"
	case "-":
		contentType = ""
	}
	body := strings.ReplaceAll(c.body, keyMark, fx.key)
	if c.bodyOf != nil {
		body = c.bodyOf(fx.key)
	}
	before := fx.state(t)
	r := fx.env.Do(t, method, strings.ReplaceAll(path, keyMark, fx.key), contentType, body)
	if r.HTTPStatus != http.StatusOK {
		t.Errorf("HTTP status %d, want 200 (spec 7.1); body %s", r.HTTPStatus, r.Raw)
	}
	if got := r.Status(); got != c.want {
		t.Errorf("status %d, want %d; body %s", got, c.want, r.Raw)
	}
	var message string
	if err := json.Unmarshal(r.Body["message"], &message); err != nil || message == "" {
		t.Errorf("message missing or not a string (spec 2.1): %s", r.Raw)
	}
	if c.wantMessage != "" && !strings.Contains(message, c.wantMessage) {
		t.Errorf("message %q does not say %q", message, c.wantMessage)
	}
	if strings.Contains(r.Raw, fx.key) {
		t.Errorf("reply echoes the api_key (D25): %s", r.Raw)
	}

	after := fx.state(t)
	want := before
	if c.paysAlice > 0 && c.want == 200 {
		want.Faucet -= c.paysAlice
		want.Alice += c.paysAlice
		if len(after.Payouts) != len(before.Payouts)+1 {
			t.Fatalf("payouts went from %d to %d, want one more", len(before.Payouts), len(after.Payouts))
		}
		paid := after.Payouts[0]
		if paid.Amount != c.paysAlice || paid.RecipientID != fx.alice.ID {
			t.Errorf("new payout pays %d to user %d, want %d to alice (%d)", paid.Amount, paid.RecipientID, c.paysAlice, fx.alice.ID)
		}
		want.Payouts = append([]drip.Payout{paid}, before.Payouts...)
	}
	if diff := cmp.Diff(want, after); diff != "" {
		t.Errorf("ledger state after the request (-want +got):\n%s", diff)
	}
	fx.env.Reconcile(t)
}

// runRequestCases runs the cases on every engine in parallel (the test
// too), one faucet per engine; the cases run in order because each checks
// the state the previous one left.
func runRequestCases(t *testing.T, cases []requestCase) {
	t.Helper()
	forEachEngine(t, func(t *testing.T, eng storetest.Engine) {
		fx := newLedgerFixture(t, eng.Open(t))
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) { fx.check(t, c) })
		}
	})
}

// ---- Sends at once

// sentReply is what one concurrent sender saw.
type sentReply struct {
	HTTPStatus int
	Raw        string
	Status     int   `json:"status"`
	PayoutID   int64 `json:"payout_id"`
	Balance    int64 `json:"balance"`
	Err        error
}

// sendAtOnce starts one goroutine per form, releases them together, and
// returns each one's reply in the order of forms. It uses its own
// keep-alive client with room for every sender's connection, so the
// requests reach the server together instead of queueing for a socket.
func sendAtOnce(t *testing.T, env *apptest.Env, forms []url.Values) []sentReply {
	t.Helper()
	tr := &http.Transport{MaxIdleConns: len(forms), MaxIdleConnsPerHost: len(forms)}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	replies := make([]sentReply, len(forms))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, form := range forms {
		wg.Go(func() {
			<-start
			replies[i] = postForm(client, env.Server.URL+apiv1.Prefix+"/send", form)
		})
	}
	close(start)
	wg.Wait()
	return replies
}

// postForm sends one form; it reports problems in the reply because
// t.Fatal may not be called from a sender's goroutine.
func postForm(client *http.Client, target string, form url.Values) sentReply {
	resp, err := client.Post(target, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return sentReply{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	r := sentReply{HTTPStatus: resp.StatusCode, Raw: string(raw), Err: err}
	if err == nil {
		if err := json.Unmarshal(raw, &r); err != nil {
			r.Err = fmt.Errorf("reply is not JSON: %v", err)
		}
	}
	return r
}

// countStatuses fails on transport errors and non-200 HTTP replies and
// counts the v1 statuses.
func countStatuses(t *testing.T, replies []sentReply) map[int]int {
	t.Helper()
	counts := map[int]int{}
	for i, r := range replies {
		if r.Err != nil {
			t.Errorf("sender %d: %v %s", i, r.Err, r.Raw)
			continue
		}
		if r.HTTPStatus != http.StatusOK {
			t.Errorf("sender %d: HTTP status %d, want 200 (spec 7.1): %s", i, r.HTTPStatus, r.Raw)
		}
		counts[r.Status]++
	}
	return counts
}

// checkPaidPayouts holds the paid replies to the payouts the store lists:
// unique ids, one row for each, no other rows.
func checkPaidPayouts(t *testing.T, env *apptest.Env, f *drip.Faucet, replies []sentReply) {
	t.Helper()
	var ids []int64
	for _, r := range replies {
		if r.Status == 200 {
			if r.PayoutID <= 0 {
				t.Errorf("paid reply without a payout_id: %s", r.Raw)
			}
			ids = append(ids, r.PayoutID)
		}
	}
	slices.Sort(ids)
	if len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("payout_ids are not unique: %v", ids)
	}
	var stored []int64
	for _, p := range payouts(t, env, f) {
		stored = append(stored, p.ID)
	}
	slices.Sort(stored)
	if diff := cmp.Diff(ids, stored); diff != "" {
		t.Errorf("payouts stored vs payout_ids replied (-replied +stored):\n%s", diff)
	}
}

// ---- The fuzz targets' fixture

// hashMark in a fuzz input stands for alice's payout_user_hash, as keyMark
// stands for the faucet's v1 key.
const hashMark = "$HASH"

// sendFixtureFunds is a faucet's balance at start and after each top-up.
const sendFixtureFunds = 1_000_000_000_000

// sendStatuses are the v1 statuses /send may answer in these fixtures
// (spec 7.1); 401 cannot occur as no faucet has an IP whitelist.
var sendStatuses = map[int]bool{200: true, 402: true, 403: true, 404: true, 405: true, 410: true, 450: true, 456: true, 457: true, 459: true}

// formType is the Content-Type of a v1 form body.
const formType = "application/x-www-form-urlencoded"

// sendFixture is an SQLite app with funded faucets and the users they can pay.
type sendFixture struct {
	env     *apptest.Env
	faucets []*drip.Faucet
	keys    []string
	users   []*drip.User // every user a send can pay: the owners, alice, bob
	hash    string       // alice's payout_user_hash
}

// newSendFixture funds faucets faucets and registers alice and bob, bob
// with a linked BTC address, for the whole fuzz run.
func newSendFixture(f *testing.F, faucets int) *sendFixture {
	f.Helper()
	env := apptest.New(f, storetest.OpenSQLite(f), apptest.Options{Rate: unlimited})
	fx := &sendFixture{env: env}
	for range faucets {
		fc, key := env.Faucet(f, map[string]int64{"BTC": sendFixtureFunds, "DOGE": sendFixtureFunds})
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
func (fx *sendFixture) fill(i int, b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(keyMark), []byte(fx.keys[i]))
	return bytes.ReplaceAll(b, []byte(hashMark), []byte(fx.hash))
}

// holdings is every balance a send can change.
type holdings struct {
	faucet map[string]int64 // per coin
	users  map[string]int64 // per coin, all users together
}

// money reads the holdings faucet i's sends can change.
func (fx *sendFixture) money(t *testing.T, i int) holdings {
	t.Helper()
	m := holdings{faucet: map[string]int64{}, users: map[string]int64{}}
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
func (fx *sendFixture) topUp(t *testing.T, i int) {
	t.Helper()
	for _, coin := range []string{"BTC", "DOGE"} {
		if b := fx.env.Balance(t, fx.faucets[i].AccountID, coin); b < sendFixtureFunds/2 {
			if _, err := fx.env.App.Ledger.Deposit(context.Background(), fx.faucets[i], coin, sendFixtureFunds-b); err != nil {
				t.Fatalf("top up: %v", err)
			}
		}
	}
}

// send posts body to /send as faucet i and checks the reply and the money
// it moved; it returns the reply and the amount paid (0 when refused).
func (fx *sendFixture) send(t *testing.T, i int, contentType string, body []byte) (*apptest.Reply, int64) {
	t.Helper()
	fx.topUp(t, i)
	before := fx.money(t, i)
	r := fx.env.Do(t, http.MethodPost, "/send", contentType, string(body))
	after := fx.money(t, i)

	if r.HTTPStatus != http.StatusOK {
		t.Fatalf("HTTP status %d, want 200 (spec 7.1): %s", r.HTTPStatus, r.Raw)
	}
	status := r.Status()
	if !sendStatuses[status] {
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

// isJSONNumber reports whether s is one JSON number literal.
func isJSONNumber(s string) bool {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return false
	}
	n, ok := v.(json.Number)
	return ok && n.String() == s
}

// mustJSON is v as JSON.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
