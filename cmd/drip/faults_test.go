// The fault-injection suite (issue 9, item 7): drip serve, the real binary,
// pays a closed loop of v1 and v2 sends and v2 batches (D61) while
// PostgreSQL's network is reset, blackholed or refused, Redis's likewise,
// or the process is killed; then the database is read directly for what
// every answer promised, each batch item's as each send's.
//
// The default run is short: a few faults of each kind, about a minute on
// two cores. The long run injects at least 100 resets, 20 blackholes and 20
// kills per engine, with 48 clients (about ten minutes):
//
//	DRIP_FAULTS=long \
//	DRIP_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable' \
//	DRIP_TEST_REDIS_URL=redis://127.0.0.1:6379/0 \
//	go test -run TestFaults -count=1 -timeout 60m -v ./cmd/drip/
//
// (-run TestFaults/sqlite or TestFaults/postgres for one engine). Each run
// logs one summary line: the faults injected, the answers by kind, and the
// promises checked.
package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/app"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faultproxy"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestFaults injects each kind of fault into its own run: a fresh
// database, drip serve over it, and the load. It is not parallel with the
// package's other tests: it loads the machine on purpose, and its latency
// ceilings are about drip, not about a busy neighbour. The two engines
// run side by side; a run's faults one after the other.
func TestFaults(t *testing.T) {
	p := faultProfileFromEnv(t)
	t.Logf("profile %s: %d clients, each sending v1, v2 and a v2 batch of %d to %d items in turn; every answer within %s (request timeout %s)",
		p.name, p.clients, batchMin, batchMax, latencyCeiling, faultRequestTimeout)

	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()

		// drip serve is killed (SIGKILL) at random moments under load and
		// started again on the same database and address. Promise (D4, D6):
		// a payout commits whole before it is answered, or not at all, so a
		// crash loses only requests it never answered: every paid answer
		// is stored, no tag is paid twice (v2 and batch retries included),
		// and the ledger reconciles.
		t.Run("kill", func(t *testing.T) {
			r := startFaultRun(t, "sqlite/kill", sqliteDB(t), p, runExpect{killed: true})
			r.killRestart(p.kills)
			r.finish()
		})

		// Redis, which holds the shared request-rate limits, has its
		// connections reset and goes silent while the load runs. Promise
		// (D40, D58): sends do not depend on Redis: the limiter falls back
		// to this node's buckets, so every send is paid, within the
		// deadline, and /readyz reports Redis down without making the node
		// unready.
		t.Run("redis", func(t *testing.T) {
			redisURL := os.Getenv("DRIP_TEST_REDIS_URL")
			if redisURL == "" {
				t.Skip("DRIP_TEST_REDIS_URL is not set: skipping the Redis faults")
			}
			r := startFaultRun(t, "sqlite/redis", sqliteDB(t), p, runExpect{redisURL: redisURL, onlyPaid: true})
			for _, fault := range shuffled(map[string]int{"reset": p.redisResets, "blackhole": p.redisStalls}) {
				switch fault {
				case "reset":
					time.Sleep(jitter(300*time.Millisecond, 1400*time.Millisecond))
					r.redis.ResetAll()
					r.faults.add("Redis reset", 1)
				case "blackhole":
					time.Sleep(jitter(time.Second, 3*time.Second))
					r.blackholeRedis(jitter(2*time.Second, 4*time.Second))
				}
			}
			r.finish()
		})
	})

	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		if os.Getenv(storetest.PostgresEnv) == "" {
			t.Skipf("%s is not set: skipping the PostgreSQL faults", storetest.PostgresEnv)
		}

		// PostgreSQL's connections are reset (RST) at random moments under
		// load, and now and then at the worst one: PostgreSQL has committed
		// and the answer is lost on its way (issue 9, item 1). Promise (D6):
		// a payment is applied once whatever happens to its connection; a
		// lost commit is settled by asking the database; every payout
		// answered as paid is committed.
		t.Run("resets", func(t *testing.T) {
			r := startFaultRun(t, "postgres/resets", postgresDB(t), p, runExpect{})
			for _, fault := range shuffled(map[string]int{"reset": p.resets, "lost commit": p.lostCommits}) {
				time.Sleep(jitter(300*time.Millisecond, 1400*time.Millisecond))
				switch fault {
				case "reset":
					r.db.proxy.ResetAll()
					r.faults.add("reset", 1)
				case "lost commit":
					r.loseCommit()
				}
			}
			r.finish()
		})

		// PostgreSQL's network goes silent (a blackhole: nothing is lost,
		// everything is held until it heals) for longer than a request's
		// deadline, and now and then just as a COMMIT is sent (issue 9,
		// item 2). Promise (D6, D58): every request is answered by its
		// deadline, none waits for the network to heal, as unavailable or
		// outcome_unknown when it could not be paid; a COMMIT held past the
		// answer commits nothing when the network heals.
		t.Run("stalls", func(t *testing.T) {
			r := startFaultRun(t, "postgres/stalls", postgresDB(t), p, runExpect{outage: true})
			for _, fault := range shuffled(map[string]int{"blackhole": p.stalls, "blackholed commit": p.stalledCommits}) {
				time.Sleep(jitter(time.Second, 3*time.Second))
				switch fault {
				case "blackhole":
					r.blackholeDB(jitter(p.stallFor[0], p.stallFor[1]))
				case "blackholed commit":
					// Past the request's deadline, so the COMMIT arrives after the answer.
					r.blackholeCommit(faultRequestTimeout + jitter(time.Second, 3*time.Second))
				}
			}
			r.finish()
		})

		// PostgreSQL refuses new connections, and the open ones are reset,
		// for a few seconds (issue 9, item 3), and now and then it does so
		// just after committing, before its answer arrives, as a database
		// that restarts after a commit does, for longer than a request's
		// deadline. Promise (D58): v1 answers in its envelope, HTTP 200 and
		// status 459, never an HTTP 500; v2 answers 503 unavailable or
		// outcome_unknown with Retry-After; a try answered unavailable did
		// nothing (a commit the database may have made is outcome_unknown);
		// /readyz says the database is down during the outage and ready
		// after it.
		t.Run("refused", func(t *testing.T) {
			r := startFaultRun(t, "postgres/refused", postgresDB(t), p, runExpect{outage: true})
			for _, fault := range shuffled(map[string]int{"refusal": p.refusals, "refusal at a lost commit": p.refusedCommits}) {
				time.Sleep(jitter(time.Second, 3*time.Second))
				switch fault {
				case "refusal":
					r.refuseDB(jitter(3*time.Second, 5*time.Second))
				case "refusal at a lost commit":
					r.refuseAtLostCommit(faultRequestTimeout + jitter(time.Second, 3*time.Second))
				}
			}
			r.finish()
		})

		// As on SQLite: drip serve is killed under load and restarted; on
		// PostgreSQL the killed process's transactions are rolled back by
		// the server when its connections drop.
		t.Run("kill", func(t *testing.T) {
			r := startFaultRun(t, "postgres/kill", postgresDB(t), p, runExpect{killed: true})
			r.killRestart(p.kills)
			r.finish()
		})
	})
}

// shuffled lists each fault as often as counts says, in random order.
func shuffled(counts map[string]int) []string {
	var faults []string
	for fault, n := range counts {
		for range n {
			faults = append(faults, fault)
		}
	}
	rand.Shuffle(len(faults), func(i, j int) { faults[i], faults[j] = faults[j], faults[i] })
	return faults
}

// runExpect is what a run's faults may do to the answers, beyond paid,
// unavailable and outcome_unknown, and what they must do, lest the run
// test nothing.
type runExpect struct {
	redisURL string // serve with this Redis, reached through a fault proxy
	killed   bool   // requests may lose their connection, and some must
	outage   bool   // some requests must be answered unavailable or outcome_unknown
	onlyPaid bool   // every request must be paid
}

// faultRun is one run of the suite: a database and its fixture, drip
// serve over it, the load, and the faults injected so far.
type faultRun struct {
	t      *testing.T
	name   string
	expect runExpect
	db     *faultDB
	fx     *faultFixture
	redis  *faultproxy.Proxy // nil unless the run has Redis
	node   *faultNode
	load   *sendLoad
	faults tally
}

// startFaultRun makes the fixture, starts drip serve and the load, and
// returns once the load is being paid.
func startFaultRun(t *testing.T, name string, db *faultDB, p faultProfile, expect runExpect) *faultRun {
	t.Helper()
	r := &faultRun{t: t, name: name, expect: expect, db: db, fx: newFaultFixture(t, db)}
	// The rate limits must refuse nothing: refusals are not what is tested.
	args := append([]string{"--rate-per-minute", "1000000", "--rate-burst", "1000000", "--ip-rate-per-minute", "0",
		"--request-timeout", faultRequestTimeout.String()}, db.serveArgs...)
	if expect.redisURL != "" {
		u, err := url.Parse(expect.redisURL)
		if err != nil {
			t.Fatal(err)
		}
		r.redis = startFaultProxy(t, u.Host)
		u.Host = r.redis.Addr()
		// Key ids restart at 1 in every database: a namespace of the run's own.
		args = append(args, "--redis-url", u.String(), "--redis-prefix", fmt.Sprintf("drip:faults:%d:", time.Now().UnixNano()))
	}
	r.node = startFaultNode(t, args...)
	r.load = startSendLoad(t, r.node.base, db, r.fx, p.clients)
	r.load.waitPaid(t, int64(p.clients))
	return r
}

// loseCommit resets every connection as PostgreSQL answers a COMMIT: the
// transaction is committed and drip cannot know it.
func (r *faultRun) loseCommit() {
	fired := r.db.proxy.ResetWhenServerSends([]byte("COMMIT\x00"))
	select {
	case <-fired:
		r.faults.add("lost commit", 1)
	case <-time.After(10 * time.Second):
		r.t.Errorf("no COMMIT answered within 10 s under load: the lost-commit fault was not injected")
	}
}

// blackholeDB holds PostgreSQL's traffic for d, then delivers it.
func (r *faultRun) blackholeDB(d time.Duration) {
	r.db.proxy.Stall(true)
	r.faults.add("blackhole", 1)
	time.Sleep(d)
	r.db.proxy.Stall(false)
}

// blackholeCommit holds PostgreSQL's traffic for d from the moment a
// COMMIT is sent, the COMMIT with it.
func (r *faultRun) blackholeCommit(d time.Duration) {
	stalled := r.db.proxy.StallWhenClientSends([]byte("commit\x00"))
	select {
	case <-stalled:
		r.faults.add("blackholed commit", 1)
		time.Sleep(d)
	case <-time.After(10 * time.Second):
		r.t.Errorf("no COMMIT sent within 10 s under load: the blackholed-commit fault was not injected")
	}
	r.db.proxy.Stall(false)
}

// refuseDB refuses PostgreSQL's connections for d, resetting the open
// ones, and checks /readyz during the outage and after it.
func (r *faultRun) refuseDB(d time.Duration) {
	began := time.Now()
	r.db.proxy.Refuse(true)
	r.db.proxy.ResetAll()
	r.faults.add("refusal", 1)
	r.wantDatabaseDown()
	time.Sleep(d - time.Since(began))
	r.db.proxy.Refuse(false)
	r.waitReady()
}

// refuseAtLostCommit refuses new connections to PostgreSQL and, at the
// next COMMIT PostgreSQL answers, resets every open one, so for d nothing
// can learn whether that commit was made.
func (r *faultRun) refuseAtLostCommit(d time.Duration) {
	r.db.proxy.Refuse(true)
	select {
	case <-r.db.proxy.ResetWhenServerSends([]byte("COMMIT\x00")):
		r.faults.add("refusal at a lost commit", 1)
		r.wantDatabaseDown()
		time.Sleep(d)
	case <-time.After(10 * time.Second):
		r.t.Errorf("no COMMIT answered within 10 s under load: the refusal at a lost commit was not injected")
	}
	r.db.proxy.Refuse(false)
	r.waitReady()
}

// wantDatabaseDown checks /readyz while PostgreSQL refuses connections
// (D58): not ready, the database down.
func (r *faultRun) wantDatabaseDown() {
	status, checks, err := readyz(r.node.base)
	if err != nil || status != http.StatusServiceUnavailable || checks["database"] != "down" {
		r.t.Errorf("/readyz while PostgreSQL refuses: %d %v %v, want 503 and the database down", status, checks, err)
	}
}

// waitReady waits for /readyz to answer 200 once an outage is over.
func (r *faultRun) waitReady() {
	lifted := time.Now()
	for {
		status, _, err := readyz(r.node.base)
		if err == nil && status == http.StatusOK {
			return
		}
		if time.Since(lifted) > recoverWithin {
			r.t.Errorf("/readyz still %d (%v) %s after the outage ended", status, err, recoverWithin)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// blackholeRedis holds Redis's traffic for d, checking that /readyz
// reports Redis down and the node still ready.
func (r *faultRun) blackholeRedis(d time.Duration) {
	began := time.Now()
	r.redis.Stall(true)
	r.faults.add("Redis blackhole", 1)
	status, checks, err := readyz(r.node.base)
	if err != nil || status != http.StatusOK || checks["redis"] != "down" || checks["database"] != "ok" {
		r.t.Errorf("/readyz while Redis is silent: %d %v %v, want 200 with redis down and the database ok", status, checks, err)
	}
	time.Sleep(d - time.Since(began))
	r.redis.Stall(false)
}

// killRestart kills drip serve n times at random moments, each time
// starting it again on the same address.
func (r *faultRun) killRestart(n int) {
	for range n {
		time.Sleep(jitter(500*time.Millisecond, 2500*time.Millisecond))
		r.node.kill()
		r.faults.add("kill -9", 1)
		r.node.start(r.t)
	}
}

// finish lifts every fault, waits for sends to be paid again, stops the
// load and drip serve, checks the answers and the database, and logs the
// run's summary line.
func (r *faultRun) finish() {
	t := r.t
	t.Helper()
	for _, px := range []*faultproxy.Proxy{r.db.proxy, r.redis} {
		if px != nil {
			px.Stall(false)
			px.Refuse(false)
		}
	}
	lifted := time.Now()
	for !r.load.paidSince(lifted) {
		if time.Since(lifted) > recoverWithin {
			t.Errorf("no send paid within %s of the last fault ending: drip did not recover; the last sends:\n%s",
				recoverWithin, strings.Join(r.load.sample(3), "\n"))
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	sends := r.load.stop()
	r.node.stop(t)

	answers := r.checkAnswers(sends, r.load.doneBatches())
	promises := r.checkPromises(sends)
	if t.Failed() {
		if lines := r.node.errorLines(40); len(lines) > 0 {
			t.Logf("drip serve's error log lines (the first %d):\n%s", len(lines), strings.Join(lines, "\n"))
		}
	}
	faults := r.faults.String()
	for i, px := range []*faultproxy.Proxy{r.db.proxy, r.redis} {
		if px != nil {
			st := px.Stats()
			faults += fmt.Sprintf("; %s connections: %d made, %d reset, %d refused",
				[]string{"PostgreSQL", "Redis"}[i], st.Accepted, st.Resets, st.Refused)
		}
	}
	// Failed requests are logged through errlog: one line per cause per
	// 10 s, so an outage writes a few lines, not one per request (D58).
	errorLines := len(r.node.errorLines(math.MaxInt))
	t.Logf("SUMMARY %s | faults: %s | %s | %s | error log: %d lines", r.name, faults, answers, promises, errorLines)
}

// checkAnswers holds every answer to what the run's faults allow, and
// returns the load's and the answers' part of the summary.
func (r *faultRun) checkAnswers(sends []*faultSend, batches []*faultBatch) string {
	t := r.t
	allowed := []string{answerPaid, answerNothing, answerUnknown}
	if r.expect.killed {
		allowed = append(allowed, answerTransport)
	}
	if r.expect.onlyPaid {
		allowed = []string{answerPaid}
	}
	// A batch item meant to be refused is allowed that refusal in place of paid.
	allowedFor := func(a attempt) []string {
		if a.want == "" {
			return allowed
		}
		return slices.Replace(slices.Clone(allowed), 0, 1, a.want)
	}
	var unexpected, slow []string
	var n [3]int
	var retries, batchRetries, requests, replays, dupReplays int
	var longest time.Duration
	for _, s := range sends {
		n[apiIndex(s.api)]++
		if s.api != "batch" {
			requests += len(s.attempts)
			retries += len(s.attempts) - 1
		}
		for _, a := range s.attempts {
			longest = max(longest, a.latency)
			if a.replayed {
				replays++
				if a.item == "duplicate" {
					dupReplays++
				}
			}
			if !slices.Contains(allowedFor(a), a.answer) {
				unexpected = append(unexpected, s.String())
			}
			if a.latency > latencyCeiling {
				slow = append(slow, s.String())
			}
		}
	}
	report := func(what string, bad []string) {
		if len(bad) > 0 {
			t.Errorf("%s %d times; the first:\n  %s", what, len(bad), strings.Join(bad[:min(len(bad), 5)], "\n  "))
		}
	}
	report(fmt.Sprintf("an answer other than %s (a batch item meant to be refused: that refusal in place of paid)", strings.Join(allowed, ", ")), unexpected)
	report(fmt.Sprintf("an answer after the ceiling of %s (a hang)", latencyCeiling), slow)
	var problems []string
	for _, b := range batches {
		requests += b.tries
		batchRetries += b.tries - 1
		for _, p := range b.problems {
			problems = append(problems, p+": "+b.String())
		}
	}
	report("a batch's counts of paid, replayed and failed not its items'", problems)

	_, counts, line := answerCounts(sends)
	sum := func(api int, answers ...string) (n int) {
		for _, a := range answers {
			for i, c := range counts[a] {
				if api < 0 || api == i {
					n += c
				}
			}
		}
		return n
	}
	if r.expect.outage && sum(-1, answerNothing, answerUnknown) == 0 {
		t.Errorf("no request was answered unavailable or outcome_unknown: the faults never reached one")
	}
	if r.expect.killed && sum(-1, answerTransport) == 0 {
		t.Errorf("no request lost its connection: the kills never reached one")
	}
	// Batches are in flight when the faults strike, or they test nothing.
	if r.expect.outage && sum(apiIndex("batch"), answerNothing, answerUnknown) == 0 {
		t.Errorf("no batch item was answered unavailable or outcome_unknown: the faults never reached a batch")
	}
	if r.expect.killed && sum(apiIndex("batch"), answerTransport) == 0 {
		t.Errorf("no batch lost its connection: the kills never reached one")
	}
	return fmt.Sprintf("load: %d clients, %d sends (v1 %d, v2 %d, batch items %d in %d batches) in %s; %d requests, %d of them v2 retries and %d batch retries; %d answers by a replay (%d of them a duplicate in its batch) | answers (a batch's by item): %s | latency max %s (ceiling %s)",
		r.load.clients, len(sends), n[0], n[1], n[2], len(batches), r.load.took.Round(time.Second), requests, retries, batchRetries,
		replays, dupReplays, line, longest.Round(time.Millisecond), latencyCeiling)
}

// checkPromises reads the database directly and checks what the answers
// promised; it returns the promises' part of the summary.
func (r *faultRun) checkPromises(sends []*faultSend) string {
	t := r.t
	var kept, broken []string
	check := func(promise string, violations []string) {
		if len(violations) == 0 {
			kept = append(kept, promise)
			return
		}
		broken = append(broken, fmt.Sprintf("%s: %d times", promise, len(violations)))
		t.Errorf("promise broken, %s: %d times; the first:\n  %s", promise, len(violations), strings.Join(violations[:min(len(violations), 5)], "\n  "))
	}
	sendOf := map[string]*faultSend{}
	for _, s := range sends {
		sendOf[s.tag] = s
	}
	var unacked string

	r.db.use(t, func(st store.Store) {
		ctx := context.Background()
		payouts := allPayouts(t, st, r.fx.faucet)
		byTag := map[string][]drip.Payout{}
		byID := map[int64]drip.Payout{}
		paidTo := map[int64]int64{} // recipient -> the sum of their payouts
		var paidOut int64
		for _, p := range payouts {
			byTag[p.Referral] = append(byTag[p.Referral], p)
			byID[p.ID] = p
			paidTo[p.RecipientID] += p.Amount
			paidOut += p.Amount
		}

		// D6: no payment is applied twice, and none is made but by a request.
		var twice, stray []string
		for tag, ps := range byTag {
			switch {
			case sendOf[tag] == nil:
				stray = append(stray, fmt.Sprintf("payouts %v carry the tag %q, which no request had", payoutIDs(ps), tag))
			case len(ps) > 1:
				twice = append(twice, fmt.Sprintf("payouts %v carry one tag: %s", payoutIDs(ps), sendOf[tag]))
			}
		}
		check(fmt.Sprintf("each tag paid once at most (%d payouts)", len(payouts)), twice)
		check("each payout a request's", stray)

		// D4: an acknowledged payout is committed, as it was asked for.
		var lost []string
		acked := 0
		for _, s := range sends {
			for _, id := range s.paidIDs() {
				acked++
				p, ok := byID[id]
				switch {
				case !ok:
					lost = append(lost, fmt.Sprintf("payout %d is not in the database: %s", id, s))
				case p.Referral != s.tag || p.Amount != sendAmount || p.Coin != "BTC" || p.RecipientID != s.to.ID || p.To != s.to.Username:
					lost = append(lost, fmt.Sprintf("payout %d is %+v, not what was asked: %s", id, p, s))
				}
			}
		}
		check(fmt.Sprintf("each paid answer a stored payout with its tag, amount and recipient (%d)", acked), lost)

		// D35: a v2 key (a batch item's too, D61) binds at most one
		// payout, and every answer for it names that payout.
		var keys []string
		var v2, inBatches int
		for _, s := range sends {
			switch s.api {
			case "v1":
				continue
			case "batch":
				inBatches++
			}
			v2++
			answered := slices.Compact(slices.Sorted(slices.Values(s.paidIDs())))
			stored := payoutIDs(byTag[s.tag])
			bound, err := st.IdempotencyGet(ctx, r.fx.faucet.ID, s.tag)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				t.Fatal(err)
			}
			switch {
			case len(answered) > 1:
				keys = append(keys, fmt.Sprintf("answered with payouts %v: %s", answered, s))
			case err == nil && (len(stored) != 1 || bound.PayoutID != stored[0]):
				keys = append(keys, fmt.Sprintf("key bound to payout %d, payouts with its tag %v: %s", bound.PayoutID, stored, s))
			case err != nil && len(stored) > 0:
				keys = append(keys, fmt.Sprintf("payouts %v stored, the key bound to none: %s", stored, s))
			}
		}
		check(fmt.Sprintf("each v2 key bound to one payout at most, the one its answers name (%d keys, %d of them batch items')", v2, inBatches), keys)

		// D61: a duplicate in a batch is answered as its key's first
		// occurrence; an item refused as meant pays nothing.
		dups, refusedPaid, nDups, nRefused := checkBatchItems(sends, byTag)
		check(fmt.Sprintf("each duplicate in a batch answered as its first, a payout as its replay (%d)", nDups), dups)
		check(fmt.Sprintf("no batch item refused as meant paid: no payout for its key, none for a reused key's other request (%d refused answers)", nRefused), refusedPaid)

		// D58: a try answered unavailable did nothing, so a payout was
		// made by a try that could have made it: one answered paid (not
		// as a replay), outcome_unknown, or not at all.
		var unmade []string
		unavailable := 0
		for _, s := range sends {
			for _, a := range s.attempts {
				if a.answer == answerNothing {
					unavailable++
				}
			}
			if len(byTag[s.tag]) > 0 && !slices.ContainsFunc(s.attempts, mayHavePaid) {
				unmade = append(unmade, fmt.Sprintf("payouts %v stored, which no try could have made: %s", payoutIDs(byTag[s.tag]), s))
			}
		}
		check(fmt.Sprintf("nothing paid by a try answered unavailable (%d tries)", unavailable), unmade)

		// D6: nothing commits after its caller was answered. A payout not
		// committed when its request was answered outcome_unknown is never
		// committed afterwards, unless a later try (v2) made it.
		var late []string
		pending := 0
		for _, s := range sends {
			for i, a := range s.attempts {
				if !a.probed || a.committed {
					continue
				}
				pending++
				if len(byTag[s.tag]) > 0 && !slices.ContainsFunc(s.attempts[i+1:], mayHavePaid) {
					late = append(late, fmt.Sprintf("payouts %v committed after try %d was answered: %s", payoutIDs(byTag[s.tag]), i+1, s))
				}
			}
		}
		if r.db.committed != nil {
			check(fmt.Sprintf("nothing committed after an outcome_unknown answer (%d not committed when answered)", pending), late)
		}

		// D2, D3: no negative balance; the faucet holds its deposit less
		// its payouts, each recipient the sum of theirs.
		var balances []string
		balance := func(accountID int64) int64 {
			b, err := st.BalanceGet(ctx, accountID, "BTC")
			if errors.Is(err, store.ErrNotFound) {
				return 0
			}
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		if b := balance(r.fx.faucet.AccountID); b < 0 || b != r.fx.deposit-paidOut {
			balances = append(balances, fmt.Sprintf("the faucet holds %d, want its deposit %d less its payouts %d = %d", b, r.fx.deposit, paidOut, r.fx.deposit-paidOut))
		}
		for _, u := range r.fx.recipients {
			if b := balance(u.AccountID); b < 0 || b != paidTo[u.ID] {
				balances = append(balances, fmt.Sprintf("%s holds %d, want the sum of their payouts, %d", u.Username, b, paidTo[u.ID]))
			}
		}
		check("no negative balance; the faucet's = deposit - payouts; each recipient's = their payouts", balances)

		// D73: the statistics say what the payouts say, however much of
		// them the folder had added to its sums when the faults struck.
		paidCount := map[int64]int64{}
		for _, p := range payouts {
			paidCount[p.RecipientID]++
		}
		stats, total, err := st.StatsUsers(ctx, &store.PageParams{ID: r.fx.faucet.ID, Coin: "BTC", Limit: len(r.fx.recipients) + 1})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range stats {
			got[s.PayoutUserHash] = fmt.Sprintf("%d payouts of %d in all", s.Payouts, s.Amount)
		}
		var statsWrong []string
		for _, u := range r.fx.recipients {
			want := fmt.Sprintf("%d payouts of %d in all", paidCount[u.ID], paidTo[u.ID])
			if paidCount[u.ID] == 0 {
				want = ""
			}
			if got[u.PayoutUserHash] != want {
				statsWrong = append(statsWrong, fmt.Sprintf("%s's statistics: %q, want %q", u.Username, got[u.PayoutUserHash], want))
			}
		}
		if total != int64(len(paidCount)) {
			statsWrong = append(statsWrong, fmt.Sprintf("%d recipients in the statistics, want %d", total, len(paidCount)))
		}
		check("the statistics = the payouts, by recipient", statsWrong)
		r.load.mu.Lock()
		check(fmt.Sprintf("each read of the statistics during the load answered 200 or 503, or lost with its connection (%s)", r.load.statsReads.String()), r.load.statsWrong)
		r.load.mu.Unlock()

		// D3, through the ledger.
		a, err := app.New(ctx, st, app.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		rep, err := a.Ledger.Reconcile(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var mismatch []string
		if !rep.OK() {
			mismatch = append(mismatch, fmt.Sprintf("%+v", rep))
		}
		check("Ledger.Reconcile ok", mismatch)

		unacked = unacknowledged(sends, byTag)
	})

	// D3, through the operator's command: it exits non-zero on a mismatch.
	var mismatch []string
	if rep := runAdmin(t, r.db.directArgs, "reconcile"); rep["ok"] != true {
		mismatch = append(mismatch, fmt.Sprint(rep))
	}
	check("drip admin reconcile exit 0", mismatch)

	verdict := fmt.Sprintf("promises kept %d of %d: %s", len(kept), len(kept)+len(broken), strings.Join(kept, "; "))
	if len(broken) > 0 {
		verdict += " | BROKEN: " + strings.Join(broken, "; ")
	}
	return unacked + " | " + verdict
}

// unacknowledged counts the sends never answered paid nor unavailable
// (their outcome unknown to the client, or their connection lost), nor
// refused (a batch item meant to be), and those of them committed all the
// same: what a v1 client that retried them would have paid twice, and
// what v2's and batches' retries could not settle.
func unacknowledged(sends []*faultSend, byTag map[string][]drip.Payout) string {
	var n, landed [3]int
	for _, s := range sends {
		if s.settled() {
			continue
		}
		i := apiIndex(s.api)
		n[i]++
		if len(byTag[s.tag]) > 0 {
			landed[i]++
		}
	}
	probed, already := 0, 0
	for _, s := range sends {
		for _, a := range s.attempts {
			if a.probed {
				probed++
				if a.committed {
					already++
				}
			}
		}
	}
	line := fmt.Sprintf("outcome never learnt: v1 %d (%d committed), v2 after retries %d (%d committed), batch items after retries %d (%d committed)",
		n[0], landed[0], n[1], landed[1], n[2], landed[2])
	if probed > 0 {
		line += fmt.Sprintf("; outcome_unknown answers already committed when answered: %d of %d", already, probed)
	}
	return line
}

// mayHavePaid reports whether a try may be the one that made its send's
// payout: paid and not a replay, or its outcome not known (outcome_unknown,
// unless the database said at once it was not committed, or no answer).
func mayHavePaid(a attempt) bool {
	switch a.answer {
	case answerPaid:
		return !a.replayed
	case answerUnknown:
		return !a.probed || a.committed
	}
	return a.answer == answerTransport
}

func payoutIDs(ps []drip.Payout) []int64 {
	ids := make([]int64, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	return ids
}
