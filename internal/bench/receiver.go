package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	dripclient "github.com/dripfaucet/drip/client"
)

// receiver is the webhooks scenario's endpoint: plain HTTP on loopback, in
// the bench's own process (drip serve runs with --webhook-allow-insecure).
// It checks every delivery as a real receiver would, both signatures with
// the client package, and counts only what verified: what the figures
// measure are verified deliveries. It records when each payout's
// payout.sent first arrived.
type receiver struct {
	url string
	ln  net.Listener
	srv *http.Server

	// Set by start, before drip serve runs and so before any delivery.
	secret   string
	faucetID int64 // the only faucet with an endpoint

	mu    sync.Mutex
	first map[int64]time.Time // payout id -> arrival of its first verified delivery
	n     receiverCounts
}

// receiverCounts are the receiver's counters since it started.
type receiverCounts struct {
	delivered  int64 // verified deliveries of payout.sent, duplicates included
	duplicates int64 // of them, a payout delivered before
	refused    int64 // did not verify: answered 401
	stray      int64 // verified, but not a payout.sent of the endpoint's faucet
}

func (c receiverCounts) since(mark receiverCounts) receiverCounts {
	return receiverCounts{delivered: c.delivered - mark.delivered, duplicates: c.duplicates - mark.duplicates,
		refused: c.refused - mark.refused, stray: c.stray - mark.stray}
}

// newReceiver listens on a loopback port; start serves it.
func newReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &receiver{url: "http://" + ln.Addr().String() + "/webhook", ln: ln, first: map[int64]time.Time{}}, nil
}

// start serves deliveries signed with secret, of payouts of faucetID.
func (rc *receiver) start(secret string, faucetID int64) {
	rc.secret, rc.faucetID = secret, faucetID
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = rc.srv.Serve(rc.ln) }()
}

func (rc *receiver) close() {
	if rc.srv != nil {
		_ = rc.srv.Close()
	} else {
		_ = rc.ln.Close()
	}
}

// maxBody bounds a delivery's body: a payout.sent is a few hundred bytes.
const maxBody = 64 << 10

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	id, ours, err := rc.verify(body, r.Header, at)
	rc.mu.Lock()
	switch {
	case err != nil:
		rc.n.refused++
	case !ours:
		rc.n.stray++
	default:
		rc.n.delivered++
		if _, seen := rc.first[id]; seen {
			rc.n.duplicates++
		} else {
			rc.first[id] = at
		}
	}
	rc.mu.Unlock()
	if err != nil {
		http.Error(w, "signature does not verify", http.StatusUnauthorized)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// verify checks a delivery's X-Service-Signature (ParseWebhook, before
// decoding) and its Standard Webhooks signature and timestamp, and
// returns its payout id when it is a payout.sent of the receiver's faucet
// (ours), with X-Service-Delivery and webhook-id naming its event.
func (rc *receiver) verify(body []byte, h http.Header, at time.Time) (id int64, ours bool, err error) {
	ev, err := dripclient.ParseWebhook([]byte(rc.secret), body, h.Get(dripclient.SignatureHeader))
	if err != nil {
		return 0, false, err
	}
	if err := dripclient.VerifyStandard(rc.secret, body, h, at, 0); err != nil {
		return 0, false, err
	}
	if ev.Event != dripclient.EventPayoutSent || ev.FaucetID != rc.faucetID ||
		h.Get("X-Service-Delivery") != ev.ID || h.Get(dripclient.StandardIDHeader) != ev.ID {
		return 0, false, nil
	}
	sent, err := ev.PayoutSent()
	if err != nil {
		return 0, false, nil
	}
	id, err = strconv.ParseInt(sent.PayoutID, 10, 64)
	return id, err == nil && id > 0, nil
}

func (rc *receiver) counts() receiverCounts {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.n
}

// arrivals returns when each of ids first arrived (zero: not yet).
func (rc *receiver) arrivals(ids []int64) []time.Time {
	out := make([]time.Time, len(ids))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, id := range ids {
		out[i] = rc.first[id]
	}
	return out
}

// errStalled is await's error when deliveries stopped coming.
var errStalled = errors.New("no new delivery")

// await waits until every payout of ids has arrived, or until none has
// arrived for stall; it returns how many are still missing.
func (rc *receiver) await(ctx context.Context, ids []int64, stall time.Duration) (int, error) {
	missing := ids
	progress := time.Now()
	for {
		left := missing[:0:0]
		rc.mu.Lock()
		for _, id := range missing {
			if _, ok := rc.first[id]; !ok {
				left = append(left, id)
			}
		}
		rc.mu.Unlock()
		if len(left) < len(missing) {
			progress = time.Now()
		}
		missing = left
		switch {
		case len(missing) == 0:
			return 0, nil
		case time.Since(progress) > stall:
			return len(missing), errStalled
		}
		select {
		case <-ctx.Done():
			return len(missing), ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
