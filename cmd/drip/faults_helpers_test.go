package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/faultproxy"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/sqlite"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The deadlines the suite holds drip serve to.
const (
	// faultRequestTimeout is serve's --request-timeout (its default).
	faultRequestTimeout = 5 * time.Second
	// latencyCeiling is the longest any answer may take: the request's
	// deadline and a generous margin. A request past it hung.
	latencyCeiling = faultRequestTimeout + 5*time.Second
	// clientTimeout is when a client gives up: past the ceiling, so that
	// a hang shows as a latency, not as a client's own timeout.
	clientTimeout = 20 * time.Second
	// recoverWithin bounds the wait, once every fault is lifted, for sends
	// to be paid again.
	recoverWithin = 30 * time.Second
)

// The load's sends.
const (
	sendAmount  = 1000 // satoshi a send
	recipients  = 20
	v2Tries     = 5 // a v2 send is tried this often at most, with one idempotency key
	v2RetryWait = 500 * time.Millisecond
)

// faultProfile is how many faults of each kind a run injects, and how many
// clients load it.
type faultProfile struct {
	name    string
	clients int
	// PostgreSQL's network.
	resets, lostCommits    int              // ResetAll, and resets as PostgreSQL answers a COMMIT
	stalls, stalledCommits int              // blackholes, and blackholes holding a COMMIT
	stallFor               [2]time.Duration // how long a blackhole lasts, at least and at most
	refusals               int              // connections refused (and the open ones reset)
	refusedCommits         int              // connections refused, and the open ones reset as PostgreSQL answers a COMMIT
	kills                  int              // SIGKILL of drip serve, then a restart (both engines)
	// Redis's network.
	redisResets, redisStalls int
}

var (
	shortFaults = faultProfile{name: "short", clients: 16,
		resets: 8, lostCommits: 2, stalls: 2, stalledCommits: 1, stallFor: [2]time.Duration{3 * time.Second, 5 * time.Second},
		refusals: 2, refusedCommits: 1, kills: 3, redisResets: 6, redisStalls: 2}
	longFaults = faultProfile{name: "long", clients: 48,
		resets: 100, lostCommits: 20, stalls: 20, stalledCommits: 10, stallFor: [2]time.Duration{3 * time.Second, 8 * time.Second},
		refusals: 10, refusedCommits: 10, kills: 20, redisResets: 100, redisStalls: 20}
)

// faultProfileFromEnv is the long profile when DRIP_FAULTS=long, else the short one.
func faultProfileFromEnv(t *testing.T) faultProfile {
	switch v := os.Getenv("DRIP_FAULTS"); v {
	case "", "short":
		return shortFaults
	case "long":
		return longFaults
	default:
		t.Fatalf("DRIP_FAULTS=%q: want short or long", v)
		return faultProfile{}
	}
}

// jitter is a random duration in [lo, hi].
func jitter(lo, hi time.Duration) time.Duration {
	return lo + rand.N(hi-lo+1)
}

// faultDB is a run's database: how drip serve reaches it (PostgreSQL
// through a fault proxy) and how the test and drip admin reach it
// directly.
type faultDB struct {
	engine     string
	serveArgs  []string
	directArgs []string
	proxy      *faultproxy.Proxy // PostgreSQL's network; nil on SQLite
	// use opens the database directly for fn.
	use func(t *testing.T, fn func(store.Store))
	// committed, on PostgreSQL, asks the database directly, while drip
	// serve runs, whether a payout with this tag is committed.
	committed func(ctx context.Context, tag string) (bool, error)
}

// postgresDB is a fresh schema of DRIP_TEST_POSTGRES_URL behind a fault proxy.
func postgresDB(t *testing.T) *faultDB {
	st, direct := storetest.OpenPostgresURL(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	px := startFaultProxy(t, u.Host)
	u.Host = px.Addr() // the query keeps the schema's search_path
	pool, err := pgxpool.New(context.Background(), direct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &faultDB{
		engine:     "postgres",
		serveArgs:  []string{"--database-url", u.String()},
		directArgs: []string{"--database-url", direct},
		proxy:      px,
		use:        func(_ *testing.T, fn func(store.Store)) { fn(st) },
		committed: func(ctx context.Context, tag string) (bool, error) {
			var ok bool
			err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM payouts WHERE referral = $1)", tag).Scan(&ok)
			return ok, err
		},
	}
}

// sqliteDB is a fresh --data-dir. The test opens it only while no drip
// serve runs on it.
func sqliteDB(t *testing.T) *faultDB {
	dir := t.TempDir()
	return &faultDB{
		engine:     "sqlite",
		serveArgs:  []string{"--data-dir", dir},
		directArgs: []string{"--data-dir", dir},
		use: func(t *testing.T, fn func(store.Store)) {
			st, err := sqlite.Open(context.Background(), filepath.Join(dir, "drip.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			fn(st)
		},
	}
}

func startFaultProxy(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	px, err := faultproxy.Start(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	return px
}

// faultFixture is what the load pays with: one owner's faucet, funded for
// every send, its keys, and the recipients.
type faultFixture struct {
	faucet     *drip.Faucet
	deposit    int64
	v1Key      string
	v2Key      string // send scope
	recipients []*drip.User
}

func newFaultFixture(t *testing.T, db *faultDB) *faultFixture {
	t.Helper()
	fx := &faultFixture{deposit: 1_000_000 * 100_000_000} // a million BTC
	db.use(t, func(st store.Store) {
		ctx := context.Background()
		a, err := app.New(ctx, st, app.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		owner, err := a.Users.Create(ctx, user.CreateParams{Username: "owner", Email: "owner@example.com", Verified: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range recipients {
			name := fmt.Sprintf("r%02d", i)
			u, err := a.Users.Create(ctx, user.CreateParams{Username: name, Email: name + "@example.com", Verified: true})
			if err != nil {
				t.Fatal(err)
			}
			fx.recipients = append(fx.recipients, u)
		}
		fx.faucet, fx.v1Key, err = a.Faucets.Create(ctx, faucet.CreateParams{OwnerID: owner.ID, Name: "Faults", Domain: "faults.example.com", URL: "https://faults.example.com/"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Ledger.Deposit(ctx, fx.faucet, "BTC", fx.deposit); err != nil {
			t.Fatal(err)
		}
		if _, fx.v2Key, err = a.Keys.Mint(ctx, key.MintParams{FaucetID: fx.faucet.ID, Scopes: []drip.Scope{drip.ScopeSend, drip.ScopeRead}}); err != nil {
			t.Fatal(err)
		}
	})
	return fx
}

// faultNode is a drip serve process that can be killed and started again
// on the same address, as a supervisor restarts a crashed service: the
// clients keep their URL.
type faultNode struct {
	args []string
	addr string
	base string
	proc *server         // the running process; nil between a kill and a restart
	logs []*bytes.Buffer // the stderr of every process, read once it has ended
}

func startFaultNode(t *testing.T, args ...string) *faultNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &faultNode{args: args, addr: ln.Addr().String(), base: "http://" + ln.Addr().String()}
	ln.Close()
	n.start(t)
	t.Cleanup(func() {
		if n.proc != nil {
			n.kill()
		}
	})
	return n
}

// start runs drip serve and waits until it answers /healthz.
func (n *faultNode) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(dripBin, append([]string{"serve", "--listen", n.addr}, n.args...)...)
	s := &server{cmd: cmd, base: n.base, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	n.proc, n.logs = s, append(n.logs, s.stderr)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-s.done:
			n.proc = nil
			t.Fatalf("drip serve exited early: %v\n%s", err, s.stderr)
		default:
		}
		if resp, err := http.Get(n.base + "/healthz"); err == nil {
			resp.Body.Close()
			return
		}
	}
	t.Fatalf("drip serve did not answer on %s", n.addr)
}

// kill ends the process with SIGKILL: no shutdown, no deferred call.
func (n *faultNode) kill() {
	_ = n.proc.cmd.Process.Kill()
	<-n.proc.done
	n.proc = nil
}

// stop ends the process with SIGTERM and expects a clean exit.
func (n *faultNode) stop(t *testing.T) {
	t.Helper()
	n.proc.stop(t)
	n.proc = nil
}

// errorLines are the server's error-level log lines, of every process
// that has ended, at most limit of them.
func (n *faultNode) errorLines(limit int) []string {
	var lines []string
	for _, b := range n.logs {
		if b == n.currentLog() {
			continue // still being written
		}
		sc := bufio.NewScanner(bytes.NewReader(b.Bytes()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() && len(lines) < limit {
			if strings.Contains(sc.Text(), `"level":"ERROR"`) {
				lines = append(lines, sc.Text())
			}
		}
	}
	return lines
}

func (n *faultNode) currentLog() *bytes.Buffer {
	if n.proc == nil {
		return nil
	}
	return n.proc.stderr
}

// readyz is /readyz's HTTP status and checks ("database": "ok" or "down").
func readyz(base string) (int, map[string]string, error) {
	client := &http.Client{Timeout: clientTimeout}
	resp, err := client.Get(base + "/readyz")
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Checks map[string]string `json:"checks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, body.Checks, nil
}

// How a request was answered. v1 says "unavailable" and "outcome_unknown"
// with status 459 (HTTP 200) and tells them apart by message; v2 with HTTP
// 503 and its error code. Every other answer is named in full (as
// "v1 HTTP 500" or "v2 401 unauthenticated") and is unexpected.
const (
	answerPaid      = "paid"
	answerNothing   = "unavailable"     // nothing done, retry later (D58)
	answerUnknown   = "outcome_unknown" // a payout may or may not have been made (D6)
	answerTransport = "transport error" // no answer: the connection failed, or the client timed out
)

// attempt is one request of a send and its answer.
type attempt struct {
	at       time.Time
	latency  time.Duration
	answer   string
	payoutID int64  // when paid
	replayed bool   // v2 answered with the payout an earlier try made (Idempotent-Replayed)
	detail   string // the body or the error, for reports
	// probed: answered outcome_unknown, the database was asked at once
	// whether the payout was committed, and committed is what it said.
	probed, committed bool
	// A batch item's: the batch's request (1, 2...), what occurrence of
	// its key the item is ("" the first, "duplicate", "reuse"), and the
	// refusal it is meant to get in place of paid ("" none).
	try        int
	item, want string
}

// faultSend is one logical send: a tag, unique to it (the payout's
// referral and, on v2, its idempotency key), and the requests made for it.
// A v1 send is one request; a v2 send is retried with the same key after
// an outage answer or a transport error, a few times. A batch item's
// attempts are its key's answers in each request of its batch, those of a
// duplicate or a reuse of the key included.
type faultSend struct {
	tag      string
	api      string // "v1", "v2" or "batch"
	to       *drip.User
	attempts []attempt
	batch    *faultBatch // a batch item's
}

// apis are the kinds of request of a client's turn, in order.
var apis = []string{"v1", "v2", "batch"}

// apiIndex is the index of an api in apis.
func apiIndex(api string) int { return slices.Index(apis, api) }

// paidIDs are the payout ids the send's answers acknowledged.
func (s *faultSend) paidIDs() []int64 {
	var ids []int64
	for _, a := range s.attempts {
		if a.answer == answerPaid {
			ids = append(ids, a.payoutID)
		}
	}
	return ids
}

// settled reports whether the send's outcome was learnt: paid, refused
// (a batch item meant to be), or every answer unavailable. A reuse of a
// batch item's key answers for another request, not for the key's.
func (s *faultSend) settled() bool {
	if len(s.paidIDs()) > 0 {
		return true
	}
	answers, unavailable := 0, 0
	for _, a := range s.attempts {
		switch {
		case a.item == "reuse":
			continue
		case strings.HasPrefix(a.answer, answerRefused):
			return true
		case a.answer == answerNothing:
			unavailable++
		}
		answers++
	}
	return answers > 0 && unavailable == answers
}

func (s *faultSend) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s send %s to %s:", s.api, s.tag, s.to.Username)
	if s.batch != nil {
		fmt.Fprintf(&b, " (item of batch %s)", s.batch.tag)
	}
	for i, a := range s.attempts {
		try := i + 1
		if a.try > 0 {
			try = a.try
		}
		fmt.Fprintf(&b, "\n    try %d at %s after %s: %s %s", try, a.at.Format("15:04:05.000"), a.latency.Round(time.Millisecond), a.answer, a.detail)
		if a.item != "" {
			fmt.Fprintf(&b, " (a %s of the key in its batch)", a.item)
		}
		if a.want != "" {
			fmt.Fprintf(&b, " (meant to be %s)", a.want)
		}
		if a.replayed {
			b.WriteString(" (replayed)")
		}
		if a.probed {
			fmt.Fprintf(&b, " (committed when answered: %t)", a.committed)
		}
	}
	return b.String()
}

// sendLoad is a closed-loop load: clients each sending, a v1 send, a v2
// send and a v2 batch in turn, small amounts to random recipients, one
// request (and its retries) after the other.
type sendLoad struct {
	clients   int
	base      string
	fx        *faultFixture
	client    *http.Client
	committed func(ctx context.Context, tag string) (bool, error) // faultDB.committed
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu      sync.Mutex
	sends   []*faultSend // a batch's items included
	batches []*faultBatch
	paid    int64     // requests answered as paid (a batch: with an item paid)
	last    time.Time // when the latest of them was sent
	began   time.Time
	took    time.Duration

	// The owner watching the statistics while the load runs (watch):
	// its reads by answer, and the answers no fault explains.
	statsReads tally
	statsWrong []string
}

func startSendLoad(t *testing.T, base string, db *faultDB, fx *faultFixture, clients int) *sendLoad {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * clients
	ctx, cancel := context.WithCancel(context.Background())
	l := &sendLoad{clients: clients, base: base, fx: fx, client: &http.Client{Timeout: clientTimeout, Transport: tr},
		committed: db.committed, cancel: cancel, began: time.Now()}
	for c := range clients {
		l.wg.Go(func() { l.run(ctx, c) })
	}
	l.wg.Go(func() { l.watch(ctx) })
	t.Cleanup(func() { l.stop() })
	return l
}

// stop ends the load once every client has finished its send (retries
// included) and returns the sends. Calling it again returns them again.
func (l *sendLoad) stop() []*faultSend {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.took == 0 {
		l.took = time.Since(l.began)
	}
	return l.sends
}

// doneBatches are the batches of the sends stop returned.
func (l *sendLoad) doneBatches() []*faultBatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.batches
}

func (l *sendLoad) run(ctx context.Context, client int) {
	for seq := 0; ctx.Err() == nil; seq++ {
		tag := fmt.Sprintf("c%02d-%06d", client, seq)
		api := apis[(client+seq)%len(apis)]
		if api == "batch" {
			b := l.newBatch(tag)
			l.sendBatch(b)
			l.mu.Lock()
			l.sends = append(l.sends, b.sends...)
			l.batches = append(l.batches, b)
			l.mu.Unlock()
			continue
		}
		s := &faultSend{tag: tag, api: api, to: l.fx.recipients[rand.N(len(l.fx.recipients))]}
		for try := 1; ; try++ {
			a := l.request(s)
			if a.answer == answerUnknown && l.committed != nil {
				// At once: what commits from now on commits after its
				// caller was answered, which D6 rules out.
				var err error
				if a.committed, err = l.committed(context.Background(), s.tag); err == nil {
					a.probed = true
				}
			}
			s.attempts = append(s.attempts, a)
			if a.answer == answerPaid {
				l.mu.Lock()
				l.paid++
				if a.at.After(l.last) {
					l.last = a.at
				}
				l.mu.Unlock()
			}
			retry := a.answer == answerNothing || a.answer == answerUnknown || a.answer == answerTransport
			if s.api == "v1" || !retry || try == v2Tries {
				break
			}
			time.Sleep(v2RetryWait)
		}
		l.mu.Lock()
		l.sends = append(l.sends, s)
		l.mu.Unlock()
	}
}

// watch reads the faucet's statistics every statsEvery, as an owner
// watching them during the load would, which keeps SQLite's folder adding
// payouts to its sums under the load (D73), so that the faults strike it
// too. An answer is 200, or 503 during an outage (D58), or lost with its
// connection; any other is recorded.
func (l *sendLoad) watch(ctx context.Context) {
	const statsEvery = 200 * time.Millisecond
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, l.base+"/api/v2/stats/users?coin=BTC&page=1", nil)
		req.Header.Set("Authorization", "Bearer "+l.fx.v2Key)
		answer := "transport error"
		resp, err := l.client.Do(req)
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer = fmt.Sprintf("HTTP %d", resp.StatusCode)
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
				l.mu.Lock()
				l.statsWrong = append(l.statsWrong, fmt.Sprintf("HTTP %d %s", resp.StatusCode, bytes.TrimSpace(raw)))
				l.mu.Unlock()
			}
		}
		if ctx.Err() != nil {
			return // the load's end, not an answer
		}
		l.mu.Lock()
		l.statsReads.add(answer, 1)
		l.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(statsEvery):
		}
	}
}

// request makes one request for s and classifies its answer.
func (l *sendLoad) request(s *faultSend) attempt {
	var req *http.Request
	if s.api == "v1" {
		form := url.Values{"api_key": {l.fx.v1Key}, "to": {s.to.Username}, "amount": {fmt.Sprint(sendAmount)}, "currency": {"BTC"}, "referral": {s.tag}}
		req, _ = http.NewRequest(http.MethodPost, l.base+"/api/v1/send", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		body, _ := json.Marshal(map[string]any{"idempotency_key": s.tag, "referral": s.tag, "to": s.to.Username, "amount": sendAmount, "currency": "BTC"})
		req, _ = http.NewRequest(http.MethodPost, l.base+"/api/v2/send", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+l.fx.v2Key)
	}
	a := attempt{at: time.Now()}
	resp, err := l.client.Do(req)
	var raw []byte
	if err == nil {
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	a.latency = time.Since(a.at)
	if err != nil {
		a.answer, a.detail = answerTransport, err.Error()
		return a
	}
	if s.api == "v1" {
		a.answer, a.payoutID = classifyV1(resp.StatusCode, raw)
	} else {
		a.answer, a.payoutID = classifyV2(resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	a.replayed = resp.Header.Get("Idempotent-Replayed") == "true"
	if a.answer == answerPaid {
		a.detail = fmt.Sprintf("payout %d", a.payoutID) // the body adds nothing; a long run keeps many
	} else {
		a.detail = fmt.Sprintf("HTTP %d %s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return a
}

// classifyV1 reads a v1 send's answer: always HTTP 200, status 200 with
// the payout, or 459 "retry later" during an outage (D58).
func classifyV1(httpStatus int, raw []byte) (string, int64) {
	var body struct {
		Status   int    `json:"status"`
		Message  string `json:"message"`
		PayoutID int64  `json:"payout_id"`
	}
	if httpStatus != http.StatusOK || json.Unmarshal(raw, &body) != nil {
		return fmt.Sprintf("v1 HTTP %d", httpStatus), 0
	}
	switch {
	case body.Status == 200 && body.PayoutID > 0:
		return answerPaid, body.PayoutID
	case body.Status == 459 && body.Message == store.ErrUnavailable.Message:
		return answerNothing, 0
	case body.Status == 459 && (body.Message == store.ErrCommitUnknown.Message || body.Message == ledger.ErrOutcomeUnknown.Message):
		return answerUnknown, 0
	}
	return fmt.Sprintf("v1 %d %q", body.Status, body.Message), 0
}

// classifyV2 reads a v2 send's answer: 200 with the payout, or 503
// unavailable or outcome_unknown with Retry-After (D58).
func classifyV2(httpStatus int, retryAfter string, raw []byte) (string, int64) {
	var env struct {
		Data *struct {
			PayoutID int64 `json:"payout_id"`
		} `json:"data"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) != nil {
		return fmt.Sprintf("v2 HTTP %d, not an envelope", httpStatus), 0
	}
	code := ""
	if env.Error != nil {
		code = env.Error.Code
	}
	switch {
	case httpStatus == http.StatusOK && env.Data != nil && env.Data.PayoutID > 0:
		return answerPaid, env.Data.PayoutID
	case httpStatus == http.StatusServiceUnavailable && (code == answerNothing || code == answerUnknown):
		if retryAfter == "" {
			return "v2 503 " + code + " without Retry-After", 0
		}
		return code, 0
	}
	return fmt.Sprintf("v2 %d %s", httpStatus, code), 0
}

// waitPaid waits until n requests were answered as paid since the load
// began: the load works before any fault is injected.
func (l *sendLoad) waitPaid(t *testing.T, n int64) {
	t.Helper()
	for deadline := time.Now().Add(recoverWithin); l.paidCount() < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sends paid in %s, want %d before injecting faults: the load does not work\n%s",
				l.paidCount(), recoverWithin, n, strings.Join(l.sample(3), "\n"))
		}
	}
}

func (l *sendLoad) paidCount() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.paid
}

// paidSince reports whether a request sent after since was answered as paid.
func (l *sendLoad) paidSince(since time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last.After(since)
}

// sample is the last n sends recorded, for reports.
func (l *sendLoad) sample(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.sends[max(len(l.sends)-n, 0):] {
		out = append(out, s.String())
	}
	return out
}

// tally counts named things, remembering the order they first came in.
type tally struct {
	order []string
	n     map[string]int
}

func (c *tally) add(name string, k int) {
	if c.n == nil {
		c.n = map[string]int{}
	}
	if _, ok := c.n[name]; !ok {
		c.order = append(c.order, name)
	}
	c.n[name] += k
}

func (c *tally) String() string {
	var parts []string
	for _, name := range c.order {
		parts = append(parts, fmt.Sprintf("%s %d", name, c.n[name]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// answerCounts counts answers (requests, retries included; a batch's by
// item) per kind and API: "paid 900 (v1 300, v2 300, batch 300)".
func answerCounts(sends []*faultSend) (total int, counts map[string][3]int, line string) {
	counts = map[string][3]int{}
	for _, s := range sends {
		for _, a := range s.attempts {
			c := counts[a.answer]
			c[apiIndex(s.api)]++
			counts[a.answer] = c
			total++
		}
	}
	names := []string{answerPaid, answerNothing, answerUnknown, answerTransport}
	for name := range counts {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names[4:])
	var parts []string
	for _, name := range names {
		c := counts[name]
		part := fmt.Sprintf("%s %d", name, c[0]+c[1]+c[2])
		if c[0]+c[1]+c[2] > 0 {
			part += fmt.Sprintf(" (v1 %d, v2 %d, batch %d)", c[0], c[1], c[2])
		}
		parts = append(parts, part)
	}
	return total, counts, strings.Join(parts, ", ")
}

// allPayouts is every payout of the faucet, straight from the database.
func allPayouts(t *testing.T, st store.Store, f *drip.Faucet) []drip.Payout {
	t.Helper()
	ps, err := st.PayoutList(context.Background(), &store.PayoutListParams{FaucetID: f.ID, Limit: math.MaxInt32})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}
