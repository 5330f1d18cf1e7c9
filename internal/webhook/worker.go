package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
)

// The delivery worker (D50, D52): it claims due deliveries from the
// outbox, sends each as a signed POST through a client that enforces D53
// at connect time, and records every attempt. Any number of workers, on
// any number of nodes, may run against one database: a claim leases its
// rows (skipping rows another claim holds on PostgreSQL), so one attempt
// is never made twice at once. Delivery is at least once: a worker that
// dies after sending but before recording leaves its rows to be claimed
// again when their lease runs out, and receivers dedupe on the event id.

// Defaults of WorkerConfig.
const (
	DefaultPoll         = 100 * time.Millisecond
	DefaultLease        = 2 * time.Minute
	DefaultBatch        = 256
	DefaultConcurrency  = 32
	DefaultDisableAfter = 72 * time.Hour // D52: failing every attempt for 3 days
)

// maxErrorLen bounds the error kept with an attempt.
const maxErrorLen = 300

// recordTimeout bounds recording a batch's attempts. Recording runs even
// when the worker's context has ended, so that a delivery already made is
// not made again.
const recordTimeout = 15 * time.Second

// WorkerConfig configures a Worker; zero fields take the defaults.
type WorkerConfig struct {
	Store store.Store
	// Endpoints opens the endpoints' sealed signing secrets.
	Endpoints *Endpoints
	// Client sends the requests: safehttp.NewClient, which refuses
	// non-public addresses when connecting (D53).
	Client *http.Client
	Now    func() time.Time // time.Now
	// Rand gives the retries' jitter (NextAttempt); math/rand when nil.
	Rand func() float64
	Log  *slog.Logger // discards when nil
	// Poll is the wait between claims when the last found less than a
	// full batch: it bounds the delivery lag of a quiet outbox.
	Poll time.Duration
	// Lease is how long a claim holds its deliveries: past half of it the
	// worker starts no more of them, leaving the rest to the next claim.
	Lease time.Duration
	// Batch is how many deliveries one claim takes; Concurrency how many
	// of them are in flight at once.
	Batch, Concurrency int
	// DisableAfter is how long an endpoint may fail every attempt before
	// it is disabled and its owner emailed (D52).
	DisableAfter time.Duration
}

// Worker delivers webhooks.
type Worker struct{ cfg WorkerConfig }

// NewWorker returns a worker configured by c.
func NewWorker(c WorkerConfig) *Worker {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.DisableAfter <= 0 {
		c.DisableAfter = DefaultDisableAfter
	}
	return &Worker{cfg: c}
}

// Backlog is the outbox as metrics show it: how many deliveries wait and
// when the oldest of them was created.
func (w *Worker) Backlog(ctx context.Context) (int64, time.Time, error) {
	return w.cfg.Store.WebhookBacklog(ctx)
}

// Run delivers until ctx ends: a claim at once after a full batch, else
// after Poll. Errors are logged, not returned.
func (w *Worker) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		claimed, err := w.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.cfg.Log.ErrorContext(ctx, "webhook: delivering", slog.Any("error", err))
		}
		wait := w.cfg.Poll
		if claimed == w.cfg.Batch && err == nil {
			wait = 0
		}
		timer.Reset(wait)
	}
}

// RunOnce claims one batch of due deliveries, attempts each and records
// the attempts; it returns how many it claimed. Failed attempts are
// recorded for their retry, not returned; the error reports a claim or a
// record that failed, or the end of ctx.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	claimedAt := w.cfg.Now()
	var due []Delivery
	// The claim is its own short transaction: no payout waits for a
	// receiver.
	err := w.cfg.Store.Transact(ctx, func(tx store.Tx) error {
		var err error
		due, err = tx.WebhookDeliveryClaim(ctx, claimedAt, claimedAt.Add(w.cfg.Lease), w.cfg.Batch)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("webhook: claim: %w", err)
	}
	if len(due) == 0 {
		return 0, nil
	}
	records := make([]*store.WebhookAttemptRecord, len(due))
	sem := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range due {
		sem <- struct{}{}
		// Past half the lease another worker may soon claim what is left,
		// and an ended ctx sends nothing more: leave the rest leased.
		if ctx.Err() != nil || w.cfg.Now().Sub(claimedAt) > w.cfg.Lease/2 {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			records[i] = w.attempt(ctx, &due[i])
		}()
	}
	wg.Wait()
	return len(due), errors.Join(w.record(ctx, records), w.release(ctx, due, records))
}

// release hands back, due at once, the claimed deliveries that were not
// attempted (ctx ended: a node stopping; or half the lease passed), so
// that no one waits for their lease to run out.
func (w *Worker) release(ctx context.Context, due []Delivery, records []*store.WebhookAttemptRecord) error {
	var left []Delivery
	for i, r := range records {
		if r == nil {
			left = append(left, due[i])
		}
	}
	if len(left) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := w.cfg.Store.Transact(ctx, func(tx store.Tx) error {
		return tx.WebhookDeliveriesRelease(ctx, left, w.cfg.Now())
	})
	if err != nil {
		return fmt.Errorf("webhook: release %d claimed deliveries: %w", len(left), err)
	}
	return nil
}

// attempt makes one attempt of d and returns its record, or nil when the
// attempt was cut short by the end of ctx (d stays leased, to be tried
// again when the lease runs out).
func (w *Worker) attempt(ctx context.Context, d *Delivery) *store.WebhookAttemptRecord {
	start := w.cfg.Now()
	a := store.WebhookAttempt{DeliveryID: d.ID, N: d.Tries + 1, At: start}
	ok, permanent := false, false
	switch status, reply, err := w.send(ctx, d, start); {
	case errors.Is(err, ErrEvent) || errors.Is(err, ErrSecret) || errors.Is(err, errSecretOpen):
		// Sending again cannot help: fail the delivery now, and say why
		// in the log, for the operator.
		permanent = true
		a.Error = "drip could not make this delivery's request; the operator's log says why"
		w.cfg.Log.ErrorContext(ctx, "webhook: delivery cannot be made", slog.Int64("delivery", d.ID),
			slog.String("event", d.EventID), slog.String("error", errorText(err.Error())))
	case err != nil && ctx.Err() != nil:
		return nil
	case err != nil:
		a.Error = errorText(attemptError(err))
	default:
		a.Status, a.Reply = status, replyText(reply)
		ok = Success(status)
		if !ok {
			a.Error = fmt.Sprintf("HTTP %d: %s", status, statusWord(status))
		}
	}
	now := w.cfg.Now()
	a.Latency = now.Sub(start)
	nd := *d
	nd.Attempts++
	nd.Tries++
	nd.LastStatus, nd.LastError = a.Status, a.Error
	switch next, more := NextAttempt(nd.Attempts, now, w.cfg.Rand); {
	case ok:
		nd.State, nd.DoneAt = store.DeliveryDelivered, now
	case permanent || !more:
		nd.State, nd.DoneAt = store.DeliveryFailed, now
	default:
		nd.NextAttemptAt = next
	}
	return &store.WebhookAttemptRecord{Attempt: a, Delivery: &nd}
}

var errSecretOpen = errors.New("webhook: signing secret cannot be opened")

// send POSTs d's event to its endpoint and returns the reply's status and
// the first bytes of its body.
func (w *Worker) send(ctx context.Context, d *Delivery, now time.Time) (int, []byte, error) {
	body, err := Body(d.Event)
	if err != nil {
		return 0, nil, err
	}
	secret, err := w.cfg.Endpoints.Secret(ctx, &Endpoint{ID: d.EndpointID, SecretSealed: d.SecretSealed})
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", errSecretOpen, err)
	}
	// X-Service-Delivery is the event's id (D51).
	req, err := NewRequest(ctx, d.URL, secret, d.EventID, d.Event, body, now)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrEvent, err)
	}
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	// The status decides (D52); a reply body cut short changes nothing,
	// so its error is not the attempt's.
	reply, _ := safehttp.ReadReply(resp, safehttp.ReplyLogBytes)
	return resp.StatusCode, reply, nil
}

// record writes the attempts made (nil entries were not) in one
// transaction, with the endpoints' health: an endpoint failing every
// attempt for DisableAfter is disabled in that transaction, and its
// owner's email queued (a notification) with it.
func (w *Worker) record(ctx context.Context, records []*store.WebhookAttemptRecord) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	var made []store.WebhookAttemptRecord
	okEndpoints, failedEndpoints := map[int64]bool{}, map[int64]bool{}
	for _, r := range records {
		if r == nil {
			continue
		}
		made = append(made, *r)
		switch {
		case r.Delivery.State == store.DeliveryDelivered:
			okEndpoints[r.Delivery.EndpointID] = true
		case r.Attempt.Status != 0 || r.Attempt.Error != "":
			failedEndpoints[r.Delivery.EndpointID] = true
		}
	}
	if len(made) == 0 {
		return nil
	}
	var succeeded, failed []int64
	for id := range okEndpoints {
		succeeded = append(succeeded, id)
	}
	for id := range failedEndpoints {
		if !okEndpoints[id] { // one success in the batch: not failing every attempt
			failed = append(failed, id)
		}
	}
	now := w.cfg.Now()
	var disabled []store.WebhookEndpoint
	tries := 0
	err := retry(ctx, func() error {
		if tries++; tries > 1 {
			w.cfg.Log.ErrorContext(ctx, "webhook: record attempts failed; trying again", slog.Int("attempts", len(made)), slog.Int("try", tries))
		}
		return w.cfg.Store.Transact(ctx, func(tx store.Tx) error {
			disabled = nil
			if err := tx.WebhookAttemptsRecord(ctx, made); err != nil {
				return err
			}
			failing, err := tx.WebhookEndpointsHealth(ctx, succeeded, failed, now, now.Add(-w.cfg.DisableAfter))
			if err != nil {
				return err
			}
			for _, e := range failing {
				e.Enabled, e.DisabledReason, e.UpdatedAt = false, DisabledFailing, now
				if err := tx.WebhookEndpointSetEnabled(ctx, &e); err != nil {
					return err
				}
				if _, err := tx.NotificationInsert(ctx, &drip.Notification{
					FaucetID: e.FaucetID, Kind: drip.NotifyWebhookDisabled, Detail: e.URL, CreatedAt: now,
				}); err != nil {
					return err
				}
				disabled = append(disabled, e)
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("webhook: record %d attempts: %w", len(made), err)
	}
	for _, e := range disabled {
		w.cfg.Log.WarnContext(ctx, "webhook: endpoint disabled after failing every attempt",
			slog.Int64("faucet", e.FaucetID), slog.Int64("endpoint", e.ID), slog.Time("failing_since", e.FailingSince))
	}
	return nil
}

// retry runs fn until it succeeds or ctx ends, waiting a little longer
// each time. Recording attempts is safe to repeat, even after a commit
// whose answer was lost: an attempt recorded already is dropped
// (Tx.WebhookAttemptsRecord), and an endpoint disabled already is not
// returned again. Each retry spares the receivers a whole batch sent again
// when the lease ends (a database connection dropped under the record).
func retry(ctx context.Context, fn func() error) error {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		err := fn()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// attemptError is what the owner reads of an attempt that got no reply:
// the refusal of a non-public address (D53) in its own words, a timeout,
// or the transport's error, which names the owner's own URL only.
func attemptError(err error) string {
	var de *drip.Error
	switch {
	case errors.As(err, &de):
		return de.Message
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout"):
		return fmt.Sprintf("no reply within %s", Timeout)
	}
	return err.Error()
}

// statusWord is the reason phrase of status, or "unexpected status".
func statusWord(status int) string {
	if t := http.StatusText(status); t != "" {
		return t
	}
	return "unexpected status"
}

// errorText is an error as kept with an attempt: one line, bounded.
func errorText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > maxErrorLen {
		s = string(r[:maxErrorLen-1]) + "…"
	}
	return s
}

// replyText is a reply's first bytes as text both engines store: valid
// UTF-8 (a character cut at the 1 KB boundary is dropped), without NUL.
func replyText(b []byte) string {
	if len(b) >= safehttp.ReplyLogBytes {
		for i := 1; i < utf8.UTFMax && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "")
}
