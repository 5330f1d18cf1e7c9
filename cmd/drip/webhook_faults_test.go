// Webhook delivery under faults (issue 12): drip serve, the real binary,
// delivers the events of a load of v1 and v2 sends to a receiver on this
// machine (--webhook-allow-insecure) while the server is killed, while a
// second node delivers from the same PostgreSQL, and while PostgreSQL's
// connections drop. The receiver verifies both signatures of every
// delivery and counts the deliveries of each event. Delivery is at least
// once (D52): a duplicate is counted and logged, a lost event fails the
// test.
//
// A delivery claimed by a server that dies before recording it comes back
// when its claim's lease runs out: webhook.DefaultLease (2 minutes) in
// production, which would make a run wait minutes for the clock alone. The
// kill and drop tests therefore give drip serve the hidden --webhook-lease
// flag (tests only) at webhookTestLease; nothing else changes. The
// two-node test keeps the default lease, as production runs it.
//
// TestWebhookKill kills the server 10 times on each engine (about half a
// minute each); DRIP_WEBHOOK_KILLS sets another number:
//
//	DRIP_WEBHOOK_KILLS=10 \
//	DRIP_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' \
//	go test -run TestWebhook -count=1 -v ./cmd/drip/
//
// Each test logs a WEBHOOK line: the events, the deliveries the receiver
// counted, the duplicates among them, and the attempts drip recorded.
package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/client"
	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/webhook"
)

const (
	// webhookTestLease is drip serve's --webhook-lease in the kill and
	// drop tests: longer than a batch to this receiver takes, short
	// enough that a killed server's claims come back within the test.
	webhookTestLease = 3 * time.Second
	// receiverDelay is how long the receiver takes to answer, so that
	// deliveries are in flight when a fault strikes.
	receiverDelay = 5 * time.Millisecond
	// webhookClients is the load's clients: fewer than TestFaults', as
	// the receiver shares the machine.
	webhookClients = 8
	// drainWithin bounds the wait for the outbox to empty once the load
	// has stopped: a few leases, and D52's first retry (5 s).
	drainWithin = 60 * time.Second
)

// envCount is the positive number the environment variable name holds,
// or def when it is unset: how many kills a crash test makes.
func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// checkKillsCaught fails the test unless some kill caught deliveries
// (what: "deliveries", "callbacks") in flight, inFlight holding how many
// each kill caught, and some came twice: the receiver had counted one
// drip had not recorded, which the restarted server must make again.
func checkKillsCaught(t *testing.T, what string, inFlight []int64, duplicates int) {
	t.Helper()
	caught := 0
	for _, n := range inFlight {
		if n > 0 {
			caught++
		}
	}
	if caught == 0 {
		t.Errorf("no kill caught %s in flight (%v): the kills tested nothing", what, inFlight)
	} else if duplicates == 0 {
		t.Errorf("%d kills caught %s in flight, yet none came twice: were they recorded before the kill?", caught, what)
	}
}

// faultEngine is an engine the crash tests run on, and how they open a
// database of it.
type faultEngine struct {
	name string
	open func(*testing.T) *faultDB
}

// onEachEngine runs fn in parallel on each engine, PostgreSQL only when
// it is set.
func onEachEngine(t *testing.T, fn func(t *testing.T, engine faultEngine)) {
	for _, engine := range []faultEngine{{"sqlite", sqliteDB}, {"postgres", postgresDB}} {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			if engine.name == "postgres" && os.Getenv(storetest.PostgresEnv) == "" {
				t.Skipf("%s is not set: skipping the PostgreSQL run", storetest.PostgresEnv)
			}
			fn(t, engine)
		})
	}
}

// TestWebhookKill kills drip serve (SIGKILL) while deliveries are in
// flight, on each engine, and starts it again; after the last restart the
// outbox drains. Promise (D50, D52): an event is committed with its
// deliveries, and a delivery is recorded only after it was made, so a
// crash loses none: every event is delivered at least once, every payout
// acknowledged to its client among them; a delivery the crash cut before
// its record is made again (a duplicate, counted). The payouts' own
// promises and the ledger's reconciliation are checked as in TestFaults.
func TestWebhookKill(t *testing.T) {
	kills := envCount(t, "DRIP_WEBHOOK_KILLS", 10) // issue 12
	onEachEngine(t, func(t *testing.T, engine faultEngine) {
		r := startWebhookRun(t, engine.name+"/webhook kill", engine.open(t), runExpect{killed: true},
			"--webhook-lease", webhookTestLease.String())
		var inFlight []int64 // deliveries the receiver held at each kill
		for range kills {
			time.Sleep(jitter(300*time.Millisecond, 1200*time.Millisecond))
			n := r.rc.waitInFlight(5 * time.Second)
			r.node.kill()
			r.faults.add("kill -9", 1)
			inFlight = append(inFlight, n)
			r.node.start(t)
		}
		r.finish() // the load stops; answers, payouts and reconciliation checked
		sends := r.load.stop()

		r.node.start(t) // the final restart
		drained := waitOutboxDrained(t, r.node.base, "webhooks", drainWithin)
		r.node.stop(t)
		c := checkDeliveries(t, r.db, r.fx, r.rc, ackedPayouts(sends), false)
		checkSecretNotLogged(t, r.rc, r.node)

		checkKillsCaught(t, "deliveries", inFlight, c.duplicates)
		t.Logf("WEBHOOK %s | kills %d, deliveries in flight at each %v | %s | drained %s after the final restart",
			r.name, kills, inFlight, c, drained.Round(100*time.Millisecond))
	})
}

// TestWebhookTwoNodesExactlyOnce runs two drip serve processes, each with
// its delivery worker, on one PostgreSQL database, with the default lease,
// and pays through both. Promise (D50, D31): a claim skips the rows
// another node's claim holds, and a claimed row is not due again until its
// lease ends, so with a healthy receiver each event is delivered exactly
// once, whichever node claimed it.
func TestWebhookTwoNodesExactlyOnce(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("%s is not set: the nodes share one PostgreSQL", storetest.PostgresEnv)
	}
	db := postgresDB(t)
	fx, rc := newWebhookFixture(t, db)
	args := webhookServeArgs(db.directArgs)
	nodes := []*faultNode{startFaultNode(t, args...), startFaultNode(t, args...)}
	rc.attributeTo(nodes)

	// Sends in turn to each node, v1 and v2 on both; every one must be paid.
	const sends = 600
	hc := &http.Client{Timeout: clientTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * webhookClients}}
	var (
		mu     sync.Mutex
		acked  []int64
		failed []string
		next   atomic.Int64
		wg     sync.WaitGroup
	)
	for range webhookClients {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < sends; i = next.Add(1) - 1 {
				s := &faultSend{tag: fmt.Sprintf("two-%04d", i), api: []string{"v1", "v2"}[i/2%2], to: fx.recipients[i%recipients]}
				a := (&sendLoad{base: nodes[i%2].base, fx: fx, client: hc}).request(s)
				s.attempts = append(s.attempts, a)
				mu.Lock()
				if a.answer == answerPaid {
					acked = append(acked, a.payoutID)
				} else {
					failed = append(failed, s.String())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of %d sends not paid without any fault; the first:\n  %s", len(failed), sends, strings.Join(failed[:min(len(failed), 5)], "\n  "))
	}

	drained := waitOutboxDrained(t, nodes[0].base, "webhooks", drainWithin)
	perNode := rc.perNode(len(nodes))
	for _, n := range nodes {
		n.stop(t)
	}
	c := checkDeliveries(t, db, fx, rc, acked, true)
	checkSecretNotLogged(t, rc, nodes...)
	if rep := runAdmin(t, db.directArgs, "reconcile"); rep["ok"] != true {
		t.Errorf("drip admin reconcile: %v", rep)
	}
	// Which node made each delivery, from the receiver's side of its
	// connection (Linux's /proc): both workers must have delivered, or the
	// test did not test two.
	if perNode != nil {
		for i, n := range perNode[:len(nodes)] {
			if n == 0 {
				t.Errorf("node %d made none of the deliveries (per node %v, unattributed %d): one worker did all the work", i+1, perNode[:len(nodes)], perNode[len(nodes)])
			}
		}
	}
	t.Logf("WEBHOOK postgres/two nodes | %d sends through 2 nodes | %s | deliveries per node %v (unattributed last) | drained %s after the last send",
		sends, c, perNode, drained.Round(100*time.Millisecond))
}

// TestWebhookDatabaseDrops drops PostgreSQL's connections while drip serve
// delivers: resets with deliveries in flight; refusals that begin while the
// receiver holds a batch's deliveries, so the record of attempts already
// made fails; and COMMIT answers lost on their way. Promise (D50, D52): a
// record that failed is tried again, and an attempt whose record never
// made it is made again when its lease ends, so after recovery every
// event is delivered (duplicates counted, none lost).
func TestWebhookDatabaseDrops(t *testing.T) {
	if os.Getenv(storetest.PostgresEnv) == "" {
		t.Skipf("%s is not set: the faults are PostgreSQL's network", storetest.PostgresEnv)
	}
	r := startWebhookRun(t, "postgres/webhook drops", postgresDB(t), runExpect{outage: true},
		"--webhook-lease", webhookTestLease.String())
	for range 4 {
		time.Sleep(jitter(300*time.Millisecond, 1000*time.Millisecond))
		r.rc.waitInFlight(5 * time.Second)
		r.db.proxy.ResetAll()
		r.faults.add("reset with deliveries in flight", 1)
	}
	for range 3 {
		time.Sleep(jitter(500*time.Millisecond, 1500*time.Millisecond))
		r.refuseWhileDelivering(2 * time.Second)
	}
	for range 3 {
		time.Sleep(jitter(300*time.Millisecond, 1000*time.Millisecond))
		r.loseCommit()
	}
	r.finish()
	sends := r.load.stop()

	r.node.start(t)
	drained := waitOutboxDrained(t, r.node.base, "webhooks", drainWithin)
	r.node.stop(t)
	c := checkDeliveries(t, r.db, r.fx, r.rc, ackedPayouts(sends), false)
	checkSecretNotLogged(t, r.rc, r.node)

	recordFailed := 0
	for _, line := range r.node.errorLines(math.MaxInt) {
		if strings.Contains(line, "outbox: record") {
			recordFailed++
		}
	}
	// A record that fails is tried again within its budget (the worker's
	// retry), so it need not cost a batch sent twice; past the budget,
	// the lease brings the batch back. Either way nothing is lost, which
	// checkDeliveries holds the run to.
	if recordFailed == 0 {
		t.Errorf("no record of attempts failed: the refusals never came between a batch's sends and its record")
	}
	t.Logf("WEBHOOK %s | faults: %s | failed records logged: %d | %s | drained %s after the restart",
		r.name, r.faults.String(), recordFailed, c, drained.Round(100*time.Millisecond))
}

// webhookRun is a faultRun whose faucet has a webhook endpoint at rc.
type webhookRun struct {
	*faultRun
	rc *webhookReceiver
}

// startWebhookRun makes the fixture and its endpoint, starts drip serve
// with args and the load, and returns once the load is being paid.
func startWebhookRun(t *testing.T, name string, db *faultDB, expect runExpect, args ...string) *webhookRun {
	t.Helper()
	fx, rc := newWebhookFixture(t, db)
	r := &faultRun{t: t, name: name, expect: expect, db: db, fx: fx}
	r.node = startFaultNode(t, webhookServeArgs(db.serveArgs, args...)...)
	r.load = startSendLoad(t, r.node.base, db, fx, webhookClients)
	r.load.waitPaid(t, webhookClients)
	return &webhookRun{faultRun: r, rc: rc}
}

// webhookServeArgs are drip serve's flags for these tests: no rate limit
// refuses anything, the receiver's http and loopback URL is admitted, no
// access log (the load would fill it), then args and the database's.
func webhookServeArgs(dbArgs []string, args ...string) []string {
	out := []string{"--rate-per-minute", "1000000", "--rate-burst", "1000000", "--ip-rate-per-minute", "0",
		"--request-timeout", faultRequestTimeout.String(), "--webhook-allow-insecure", "--access-log=false"}
	return append(append(out, args...), dbArgs...)
}

// newWebhookFixture is newFaultFixture's faucet with one endpoint,
// subscribed to every event, at a new receiver, created through the
// service the console uses, directly in the database, before any drip
// serve runs on it.
func newWebhookFixture(t *testing.T, db *faultDB) (*faultFixture, *webhookReceiver) {
	t.Helper()
	fx := newFaultFixture(t, db)
	rc := startReceiver(t, receiverDelay)
	db.use(t, func(st store.Store) {
		ctx := context.Background()
		a, err := app.New(ctx, st, app.Options{Webhooks: safehttp.Options{AllowInsecure: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		_, secret, err := a.Endpoints.Create(ctx, fx.faucet.ID, rc.srv.URL+"/drip-webhook", webhook.Events)
		if err != nil {
			t.Fatal(err)
		}
		rc.mu.Lock()
		rc.secret = secret
		rc.mu.Unlock()
	})
	return fx, rc
}

// refuseWhileDelivering refuses PostgreSQL's connections, resetting the
// open ones, from inside the receiver as it holds a delivery, before it
// answers: the worker's batch is sent and its record cannot be written.
// The refusal lasts d.
func (r *webhookRun) refuseWhileDelivering(d time.Duration) {
	fired := make(chan struct{})
	var once sync.Once
	hook := func() {
		once.Do(func() {
			r.db.proxy.Refuse(true)
			r.db.proxy.ResetAll()
			close(fired)
		})
	}
	r.rc.hook.Store(&hook)
	select {
	case <-fired:
		r.faults.add("refusal between sends and their record", 1)
		r.wantDatabaseDown()
		time.Sleep(d)
	case <-time.After(10 * time.Second):
		r.t.Errorf("no delivery within 10 s under load: the refusal between sends and their record was not injected")
	}
	r.rc.hook.Store(nil)
	r.db.proxy.Refuse(false)
	r.waitReady()
}

// webhookReceiver is a faucet's webhook receiver. It verifies both
// signatures of every delivery (client.VerifySignature,
// client.VerifyStandard) and the body against its headers, counts the
// deliveries of each event, and answers 204 after its delay.
type webhookReceiver struct {
	srv   *httptest.Server
	delay time.Duration
	// hook, when set, runs for each verified delivery before it is
	// answered: a fault injected while a delivery is in flight.
	hook     atomic.Pointer[func()]
	inFlight atomic.Int64 // deliveries counted and not yet answered
	// nodes, when set, are the drip serve processes whose deliveries
	// perNode tells apart.
	nodes atomic.Pointer[[]*faultNode]

	mu     sync.Mutex
	secret string
	got    map[string]*receipt // by event id
	total  int                 // deliveries counted
	bad    []string            // deliveries that did not verify or did not match
	owner  map[string]int      // a connection's node (1-based; 0 unknown), by its remote address
	byNode map[int]int         // deliveries by the node that made them
}

// receipt is what the receiver got of one event.
type receipt struct {
	event    string   // its type
	payoutID string   // a payout.sent's data.payout_id
	body     [32]byte // the SHA-256 of the first body: every delivery of an event carries the same bytes
	n        int      // deliveries
}

func startReceiver(t *testing.T, delay time.Duration) *webhookReceiver {
	rc := &webhookReceiver{delay: delay, got: map[string]*receipt{}, owner: map[string]int{}, byNode: map[int]int{}}
	rc.srv = httptest.NewUnstartedServer(rc)
	rc.srv.Config.ConnState = rc.connState
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *webhookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the sender went away before the body was whole: nothing was delivered
	}
	rc.mu.Lock()
	secret := rc.secret
	rc.mu.Unlock()
	var env struct {
		ID    string `json:"id"`
		Event string `json:"event"`
		Data  struct {
			PayoutID json.RawMessage `json:"payout_id"`
		} `json:"data"`
	}
	var problem string
	switch {
	case client.VerifySignature(secret, body, r.Header.Get(client.SignatureHeader)) != nil:
		problem = client.SignatureHeader + " does not verify"
	case client.VerifyStandard(secret, body, r.Header, time.Now(), 0) != nil:
		problem = "the Standard Webhooks signature does not verify"
	case json.Unmarshal(body, &env) != nil || !strings.HasPrefix(env.ID, "evt_"):
		problem = "the body is not an event"
	case r.Header.Get(webhook.HeaderDelivery) != env.ID || r.Header.Get(webhook.HeaderEvent) != env.Event:
		problem = fmt.Sprintf("headers %s %q and %s %q do not name the body's event", webhook.HeaderDelivery,
			r.Header.Get(webhook.HeaderDelivery), webhook.HeaderEvent, r.Header.Get(webhook.HeaderEvent))
	}
	var payoutID string
	if problem == "" && env.Event == drip.EventPayoutSent && json.Unmarshal(env.Data.PayoutID, &payoutID) != nil {
		problem = "a payout.sent whose payout_id is not a string (spec 2.8)"
	}
	sum := sha256.Sum256(body)
	rc.mu.Lock()
	if problem == "" {
		rcpt := rc.got[env.ID]
		if rcpt == nil {
			rcpt = &receipt{event: env.Event, payoutID: payoutID, body: sum}
			rc.got[env.ID] = rcpt
		}
		if rcpt.body != sum {
			problem = "a delivery of an event delivered before, with other bytes"
		}
		rcpt.n++
		rc.total++
		rc.byNode[rc.owner[r.RemoteAddr]]++
	}
	if problem != "" {
		rc.bad = append(rc.bad, fmt.Sprintf("%s: %.300s", problem, body))
	}
	rc.mu.Unlock()
	if problem != "" {
		http.Error(w, problem, http.StatusUnauthorized)
		return
	}
	rc.inFlight.Add(1)
	defer rc.inFlight.Add(-1)
	if hook := rc.hook.Load(); hook != nil {
		(*hook)()
	}
	time.Sleep(rc.delay)
	w.WriteHeader(http.StatusNoContent)
}

// waitInFlight waits, up to within, until the receiver holds a delivery,
// and returns how many it holds.
func (rc *webhookReceiver) waitInFlight(within time.Duration) int64 {
	for deadline := time.Now().Add(within); ; time.Sleep(time.Millisecond) {
		if n := rc.inFlight.Load(); n > 0 || time.Now().After(deadline) {
			return n
		}
	}
}

// attributeTo makes the receiver tell apart the deliveries of nodes.
func (rc *webhookReceiver) attributeTo(nodes []*faultNode) { rc.nodes.Store(&nodes) }

// connState finds, when a connection opens, which node opened it.
func (rc *webhookReceiver) connState(c net.Conn, state http.ConnState) {
	nodes := rc.nodes.Load()
	if state != http.StateNew || nodes == nil {
		return
	}
	pids := make([]int, len(*nodes))
	for i, n := range *nodes {
		if n.proc != nil {
			pids[i] = n.proc.cmd.Process.Pid
		}
	}
	owner := 0
	if i := socketOwner(pids, c.RemoteAddr(), c.LocalAddr()); i >= 0 {
		owner = i + 1
	}
	rc.mu.Lock()
	rc.owner[c.RemoteAddr().String()] = owner
	rc.mu.Unlock()
}

// perNode is how many deliveries each of n nodes made, then how many no
// node could be found for; nil when none could be told apart (no /proc).
func (rc *webhookReceiver) perNode(n int) []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make([]int, n+1)
	found := false
	for node, k := range rc.byNode {
		if node == 0 {
			out[n] += k
			continue
		}
		out[node-1] += k
		found = true
	}
	if !found {
		return nil
	}
	return out
}

// procTCP is a line of /proc/net/tcp or tcp6: local and remote address,
// state, then the socket's inode as the tenth field.
var procTCP = regexp.MustCompile(`^\s*\d+: [0-9A-F]+:([0-9A-F]{4}) [0-9A-F]+:([0-9A-F]{4}) (?:\S+\s+){6}(\d+)`)

// socketOwner is the index of the process among pids that holds the
// client end of the TCP connection from remote to local (the receiver's
// view), found through Linux's /proc; -1 when none is found.
func socketOwner(pids []int, remote, local net.Addr) int {
	from, ok := remote.(*net.TCPAddr)
	to, ok2 := local.(*net.TCPAddr)
	if !ok || !ok2 {
		return -1
	}
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() && inode == "" {
			m := procTCP.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			lport, _ := strconv.ParseUint(m[1], 16, 16)
			rport, _ := strconv.ParseUint(m[2], 16, 16)
			if int(lport) == from.Port && int(rport) == to.Port {
				inode = m[3]
			}
		}
		f.Close()
	}
	if inode == "" {
		return -1
	}
	target := "socket:[" + inode + "]"
	for i, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if pid == 0 || err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == target {
				return i
			}
		}
	}
	return -1
}

// checkSecretNotLogged checks that the endpoint's signing secret is in no
// log line of the nodes' processes, every one of which has ended: the
// worker's errors under faults included.
func checkSecretNotLogged(t *testing.T, rc *webhookReceiver, nodes ...*faultNode) {
	t.Helper()
	rc.mu.Lock()
	secret := strings.TrimPrefix(rc.secret, webhook.SecretPrefix)
	rc.mu.Unlock()
	for _, n := range nodes {
		for _, b := range n.logs {
			if strings.Contains(b.String(), secret) {
				t.Errorf("the endpoint's signing secret is in drip serve's log")
				return
			}
		}
	}
}

// waitOutboxDrained waits until drip serve at base reports nothing of the
// outbox named outbox ("webhooks", "callbacks") pending in its metrics,
// and returns how long that took.
func waitOutboxDrained(t *testing.T, base, outbox string, within time.Duration) time.Duration {
	t.Helper()
	pending := regexp.MustCompile(`(?m)^drip_outbox_pending\{outbox="` + regexp.QuoteMeta(outbox) + `"\} (\d+)`)
	began := time.Now()
	hc := &http.Client{Timeout: clientTimeout}
	last := "no answer"
	for time.Since(began) < within {
		resp, err := hc.Get(base + "/metrics")
		if err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if m := pending.FindSubmatch(raw); m != nil {
				if string(m[1]) == "0" {
					return time.Since(began)
				}
				last = string(m[1]) + " pending"
			} else {
				last = "no drip_outbox_pending{outbox=\"" + outbox + "\"} in /metrics"
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the %s outbox did not drain within %s: %s", outbox, within, last)
	return 0
}

// ackedPayouts are the payout ids the sends' answers acknowledged.
func ackedPayouts(sends []*faultSend) []int64 {
	var ids []int64
	for _, s := range sends {
		ids = append(ids, s.paidIDs()...)
	}
	return ids
}

// deliveryCounts is what checkDeliveries found.
type deliveryCounts struct {
	events, payouts, acked int
	received               int // deliveries the receiver counted
	duplicates, dupEvents  int // deliveries past each event's first, and the events they were of
	most                   int // the most deliveries of one event
	attempts, recordedOK   int // attempts drip recorded, and the successful ones among them
	// outageRefusals are payout.failed events whose error is an outage
	// (unavailable, outcome_unknown): a send answered "retry later" that
	// its owner's receiver would be told had failed. There must be none.
	outageRefusals int
}

func (c deliveryCounts) String() string {
	return fmt.Sprintf("events %d (payouts %d, %d acknowledged) | deliveries received %d, duplicates %d on %d events (at most %d of one) | attempts recorded %d, successful %d; made but never recorded %d",
		c.events, c.payouts, c.acked, c.received, c.duplicates, c.dupEvents, c.most, c.attempts, c.recordedOK, c.received-c.recordedOK) +
		fmt.Sprintf(" | payout.failed events for an outage: %d", c.outageRefusals)
}

// checkDeliveries reads the database directly, no drip serve running on
// it, and holds the receiver's counts to it: each of the faucet's events
// has one delivery, delivered; the receiver got every event, at least once
// (exactly once with exactlyOnce), and nothing else; every payout stored
// and every one acknowledged came as a payout.sent naming it; every
// delivery verified.
func checkDeliveries(t *testing.T, db *faultDB, fx *faultFixture, rc *webhookReceiver, acked []int64, exactlyOnce bool) deliveryCounts {
	t.Helper()
	rc.mu.Lock()
	got := make(map[string]receipt, len(rc.got))
	for id, r := range rc.got {
		got[id] = *r
	}
	total, bad := rc.total, rc.bad
	rc.mu.Unlock()
	report := func(what string, problems []string) {
		t.Helper()
		if len(problems) > 0 {
			t.Errorf("%s %d times; the first:\n  %s", what, len(problems), strings.Join(problems[:min(len(problems), 5)], "\n  "))
		}
	}
	report("a delivery that did not verify", bad)

	c := deliveryCounts{received: total, acked: len(acked)}
	db.use(t, func(st store.Store) {
		ctx := context.Background()
		events, err := st.EventList(ctx, fx.faucet.ID, math.MaxInt32)
		if err != nil {
			t.Fatal(err)
		}
		deliveries, err := st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{FaucetID: fx.faucet.ID, Limit: math.MaxInt32})
		if err != nil {
			t.Fatal(err)
		}
		payouts := allPayouts(t, st, fx.faucet)
		c.events, c.payouts = len(events), len(payouts)
		for _, e := range events {
			var d drip.FailedData
			if e.Type == drip.EventPayoutFailed && json.Unmarshal(e.Data, &d) == nil &&
				(d.Error == string(drip.CodeUnavailable) || d.Error == string(drip.CodeOutcomeUnknown)) {
				c.outageRefusals++
			}
		}
		// An outage answered "retry later" is no refusal: the client
		// retries and may be paid, so a payout.failed would tell the
		// owner's receiver a falsehood (payout.send's refuse).
		if c.outageRefusals > 0 {
			t.Errorf("%d payout.failed events record an outage", c.outageRefusals)
		}

		// The outbox: one delivery per event (one endpoint), delivered.
		byEvent := map[string][]store.WebhookDelivery{}
		for _, d := range deliveries {
			byEvent[d.EventID] = append(byEvent[d.EventID], d)
		}
		var outbox []string
		for _, e := range events {
			if ds := byEvent[e.ID]; len(ds) != 1 || ds[0].State != store.DeliveryDelivered {
				outbox = append(outbox, fmt.Sprintf("event %s (%s) has deliveries %+v, want one, delivered", e.ID, e.Type, ds))
			}
		}
		if len(deliveries) != len(events) {
			outbox = append(outbox, fmt.Sprintf("%d deliveries for %d events", len(deliveries), len(events)))
		}
		report("an event whose delivery is not one and delivered", outbox)

		// The receiver: every event, at least once (exactly once when the
		// run has no fault), none but the faucet's.
		var lost, twice, stray []string
		known := map[string]bool{}
		for _, e := range events {
			known[e.ID] = true
			r, ok := got[e.ID]
			switch {
			case !ok:
				lost = append(lost, fmt.Sprintf("event %s (%s, %s) never reached the receiver; its delivery: %+v", e.ID, e.Type, e.Data, byEvent[e.ID]))
			case exactlyOnce && r.n != 1:
				twice = append(twice, fmt.Sprintf("event %s (%s) delivered %d times", e.ID, e.Type, r.n))
			}
		}
		for id, r := range got {
			if !known[id] {
				stray = append(stray, fmt.Sprintf("event %s (%s), %d deliveries", id, r.event, r.n))
			}
			c.duplicates += r.n - 1
			if r.n > 1 {
				c.dupEvents++
			}
			c.most = max(c.most, r.n)
		}
		report("an event lost: committed and never delivered", lost)
		report("an event delivered more than once by healthy nodes", twice)
		report("a delivery of an event the faucet does not have", stray)

		// Every payout stored, and every one acknowledged, is told of.
		told := map[string]bool{}
		for _, r := range got {
			if r.event == drip.EventPayoutSent {
				told[r.payoutID] = true
			}
		}
		var untold []string
		for _, p := range payouts {
			if !told[strconv.FormatInt(p.ID, 10)] {
				untold = append(untold, fmt.Sprintf("stored payout %d (%s)", p.ID, p.Referral))
			}
		}
		for _, id := range acked {
			if !told[strconv.FormatInt(id, 10)] {
				untold = append(untold, fmt.Sprintf("acknowledged payout %d", id))
			}
		}
		report("a payout without a payout.sent delivered", untold)

		// What drip recorded: an attempt per delivery, more where one was
		// retried; successful ones are read where there was more than one.
		for _, d := range deliveries {
			c.attempts += d.Tries
			if d.Tries == 1 && d.State == store.DeliveryDelivered {
				c.recordedOK++
				continue
			}
			as, err := st.OutboxAttemptList(ctx, d.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range as {
				if webhook.Success(a.Status) {
					c.recordedOK++
				}
			}
		}
	})
	if c.received < c.recordedOK && len(bad) == 0 {
		t.Errorf("drip recorded %d successful attempts, the receiver counted %d deliveries: a success recorded for a delivery not made", c.recordedOK, c.received)
	}
	return c
}
