package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// op is the kind of a request.
type op uint8

const (
	opSend op = iota
	opPayouts
	opBalance
	opNoop
	opBatch // a v2 /send/batch: many sends in one request
)

var opNames = [...]string{opSend: "send", opPayouts: "payouts", opBalance: "getbalance", opNoop: "noop", opBatch: "batch"}

func (o op) String() string { return opNames[o] }

// request is one call: a form-encoded v1 POST, or a JSON v2 POST when
// authorization is set.
type request struct {
	op   op
	path string
	body string
	// authorization is a v2 request's Authorization header, "Bearer <key>".
	authorization string
	// idem numbers the idempotency key of a v2 send within its run, from 1;
	// 0 for a request without one.
	idem uint64
	// overlap marks a copy of an idempotency key sent before the key's
	// first copy answered.
	overlap bool
	// answered, when set, is called with the request's outcome.
	answered func(sample)
	// items is how many sends a batch carries.
	items int
}

// Reply statuses that are not HTTP statuses.
const (
	statusTransport = -1 // no reply: connection or timeout error
	statusGarbled   = -2 // a reply without a readable status
)

// client is the bench's HTTP client: keep-alive connections, as many idle
// ones kept as requests may be in flight, so no request pays for a dial.
type client struct {
	http *http.Client
	base string
}

func newClient(base string, inFlight int) *client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        inFlight,
		MaxIdleConnsPerHost: inFlight,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &client{http: &http.Client{Transport: tr, Timeout: 60 * time.Second}, base: base}
}

func (c *client) close() { c.http.CloseIdleConnections() }

// reply is what the bench reads of a reply.
type reply struct {
	status   int   // v1 status, or the v2 envelope's (the HTTP status)
	payoutID int64 // of a paid send
	replayed bool  // v2: Idempotent-Replayed: true (D35)
	batch    *batchReply
}

// do sends r and reads its reply.
func (c *client) do(ctx context.Context, r request) reply {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+r.path, strings.NewReader(r.body))
	if err != nil {
		return reply{status: statusTransport}
	}
	if r.authorization != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", r.authorization)
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{status: statusTransport}
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return reply{status: statusTransport}
	}
	if r.op == opBatch {
		return parseBatchReply(body, r.items)
	}
	rep := parseReply(body)
	rep.replayed = resp.Header.Get("Idempotent-Replayed") == "true"
	return rep
}

var (
	statusKey   = []byte(`"status":`)
	payoutIDKey = []byte(`"payout_id":`)
)

// statusWithin is how far into a reply its status is looked for: v1 writes
// status first, the v2 envelope (D32) right after "success", so the common
// case is read without decoding the whole body. A key inside a JSON string
// is escaped (\"status\":) and cannot match.
const statusWithin = 32

// parseReply reads a reply's status and payout_id: v1's, or the v2
// envelope's status and data.payout_id.
func parseReply(body []byte) reply {
	if i := bytes.Index(body[:min(len(body), statusWithin)], statusKey); i >= 0 {
		rest := body[i+len(statusKey):]
		if n, ok := leadingInt(rest); ok {
			r := reply{status: int(n)}
			if i := bytes.Index(rest, payoutIDKey); i >= 0 {
				r.payoutID, _ = leadingInt(rest[i+len(payoutIDKey):])
			}
			return r
		}
	}
	var v struct {
		Status   *int  `json:"status"`
		PayoutID int64 `json:"payout_id"`
		Data     struct {
			PayoutID int64 `json:"payout_id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &v) != nil || v.Status == nil {
		return reply{status: statusGarbled}
	}
	return reply{status: *v.Status, payoutID: max(v.PayoutID, v.Data.PayoutID)}
}

func leadingInt(b []byte) (int64, bool) {
	end := 0
	for end < len(b) && b[end] >= '0' && b[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(string(b[:end]), 10, 64)
	return n, err == nil
}

// sample is one request's outcome.
type sample struct {
	seq      uint64
	op       op
	warm     bool   // sent during the warm-up
	idem     uint64 // the request's idempotency key number; 0: none
	overlap  bool   // the request's overlap
	status   int
	payoutID int64
	replayed bool
	latency  time.Duration
	done     time.Time // when the reply was read
	// batch is what a batch's items were answered; nil for other requests.
	batch *batchReply
}

// outcome is what a driver saw in one run.
type outcome struct {
	samples []sample
	// measured is the time from the start of the measurement to the last
	// measured reply: the denominator of the rates.
	measured time.Duration
	// dropped counts requests an open loop scheduled but never sent,
	// because the server fell more than a whole duration behind.
	dropped int64
}

// generator returns the request of sequence number seq; warm tells whether
// it is sent during the warm-up. It must be safe for concurrent use.
type generator func(seq uint64, warm bool) request

// phases are a run's warm-up and measurement.
type phases struct {
	warmup, duration time.Duration
	// atMeasure runs when the measurement starts (the CPU reading); the
	// driver returns only after it has run.
	atMeasure func()
}

// measureAt runs p.atMeasure at t and returns a channel closed once it has.
func (p phases) measureAt(t time.Time) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(time.Until(t))
		p.atMeasure()
	}()
	return done
}

// recorder gathers the samples of one worker.
type recorder struct {
	samples  []sample
	lastDone time.Time // of the measured requests
}

func merge(recs []*recorder, measureStart time.Time) *outcome {
	o := &outcome{}
	var last time.Time
	for _, r := range recs {
		o.samples = append(o.samples, r.samples...)
		if r.lastDone.After(last) {
			last = r.lastDone
		}
	}
	if last.After(measureStart) {
		o.measured = last.Sub(measureStart)
	}
	return o
}

// closedLoop runs conc workers that each send their next request as soon
// as the previous reply arrives. Latency is from send to reply.
func closedLoop(ctx context.Context, c *client, next generator, conc int, p phases) *outcome {
	var seq atomic.Uint64
	start := time.Now()
	measureStart, end := start.Add(p.warmup), start.Add(p.warmup+p.duration)
	measuring := p.measureAt(measureStart)
	defer func() { <-measuring }()
	recs := runWorkers(conc, func(rec *recorder) {
		for ctx.Err() == nil {
			sent := time.Now()
			if !sent.Before(end) {
				return
			}
			i := seq.Add(1) - 1
			warm := sent.Before(measureStart)
			rec.send(ctx, c, next(i, warm), sample{seq: i, warm: warm}, sent)
		}
	})
	return merge(recs, measureStart)
}

// runWorkers runs n workers, each with its own recorder, and returns the
// recorders once all have returned.
func runWorkers(n int, work func(rec *recorder)) []*recorder {
	recs := make([]*recorder, n)
	var wg sync.WaitGroup
	for w := range recs {
		recs[w] = &recorder{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(recs[w])
		}()
	}
	wg.Wait()
	return recs
}

// send makes request r and records its sample, with latency counted from
// from: when it was sent (closed loop) or scheduled (open loop).
func (rec *recorder) send(ctx context.Context, c *client, r request, s sample, from time.Time) {
	s.op, s.idem, s.overlap = r.op, r.idem, r.overlap
	rep := c.do(ctx, r)
	done := time.Now()
	s.status, s.payoutID, s.replayed, s.batch = rep.status, rep.payoutID, rep.replayed, rep.batch
	s.latency, s.done = done.Sub(from), done
	if !s.warm {
		rec.lastDone = done
	}
	rec.samples = append(rec.samples, s)
	if r.answered != nil {
		r.answered(s)
	}
}

// openLoop sends requests at a fixed arrival rate (requests per second),
// whatever the server's pace, from up to workers requests in flight.
// Latency is from each request's scheduled time, so a server that falls
// behind shows it in the latency instead of slowing the schedule
// (no coordinated omission).
func openLoop(ctx context.Context, c *client, next generator, rate float64, workers int, p phases) *outcome {
	interval := time.Duration(float64(time.Second) / rate)
	if interval <= 0 {
		interval = 1
	}
	total := uint64((p.warmup + p.duration) / interval)
	start := time.Now().Add(time.Millisecond)
	measureStart := start.Add(p.warmup)
	giveUp := measureStart.Add(2 * p.duration)
	measuring := p.measureAt(measureStart)
	defer func() { <-measuring }()
	var idx, sent atomic.Uint64
	recs := runWorkers(workers, func(rec *recorder) {
		for ctx.Err() == nil {
			i := idx.Add(1) - 1
			if i >= total {
				return
			}
			at := start.Add(time.Duration(i) * interval)
			if d := time.Until(at); d > 0 {
				time.Sleep(d)
			} else if time.Now().After(giveUp) {
				return
			}
			sent.Add(1)
			warm := at.Before(measureStart)
			rec.send(ctx, c, next(i, warm), sample{seq: i, warm: warm}, at)
		}
	})
	o := merge(recs, measureStart)
	o.dropped = int64(total - sent.Load())
	return o
}
