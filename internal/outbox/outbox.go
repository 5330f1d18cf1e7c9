// Package outbox delivers what drip owes to other sites' URLs (D50): the
// rows of the outbox table, of every kind (webhooks, D51; merchant
// callbacks, D55). One Worker per kind claims due rows in a short
// transaction of its own, leasing them (on PostgreSQL a claim skips rows
// another node's claim holds), makes an attempt of each, several at once,
// and records every attempt, with the state it leaves its row in, in one
// transaction per claim. A Kind says how its rows are claimed and sent,
// what reply is a success, and when to try again.
//
// Any number of workers, on any number of nodes, may run against one
// database: one attempt is never made twice at once. Delivery is at least
// once: a worker killed after sending and before recording leaves its
// rows leased; they are sent again when the lease runs out, and receivers
// dedupe. A worker that stops hands back what it did not send.
package outbox

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

// Defaults of Config.
const (
	DefaultPoll        = 100 * time.Millisecond
	DefaultLease       = 2 * time.Minute
	DefaultBatch       = 256
	DefaultConcurrency = 32
)

// maxErrorLen bounds the error kept with an attempt.
const maxErrorLen = 300

// recordTimeout bounds recording a batch's attempts. Recording runs even
// when the worker's context has ended, so that a delivery already made is
// not made again.
const recordTimeout = 15 * time.Second

// ErrCannot is wrapped by a Kind's Send when the delivery cannot be made
// at all (its body or its secret cannot be built): sending again cannot
// help, so the delivery fails at once and the log says why.
var ErrCannot = errors.New("outbox: delivery cannot be made")

// Kind is one kind of delivery; D is its row with what sending it needs.
type Kind[D any] interface {
	// Claim leases up to limit due rows of the kind, moving their next
	// attempt to until.
	Claim(ctx context.Context, tx store.Tx, now, until time.Time, limit int) ([]D, error)
	// Row is d's place in the outbox.
	Row(d *D) *store.Delivery
	// Send makes one attempt of d at now and returns the reply's status
	// and its first bytes, or the error that kept a reply from coming.
	Send(ctx context.Context, d *D, now time.Time) (status int, reply []byte, err error)
	// Success reports whether a reply's status acknowledges the delivery.
	Success(status int) bool
	// Next is when to try again after attempt number attempt (from 1)
	// failed at now, or false when that was the last.
	Next(attempt int, now time.Time) (time.Time, bool)
	// Recorded runs in the transaction that records made, the attempts
	// of one claim; the func it returns, if any, runs once that
	// transaction committed.
	Recorded(ctx context.Context, tx store.Tx, made []Made[D], now time.Time) (after func(), err error)
}

// Made is an attempt made of a delivery, with the state it leaves it in.
type Made[D any] struct {
	D      *D
	Record store.OutboxRecord
	OK     bool // the reply acknowledged it
}

// Config configures a Worker; zero fields take the defaults.
type Config struct {
	Store store.Store
	Now   func() time.Time // time.Now
	Log   *slog.Logger     // discards when nil
	// Name is the kind's name in the log ("webhook", "callback").
	Name string
	// Poll is the wait between claims when the last found less than a
	// full batch: it bounds the delivery lag of a quiet outbox.
	Poll time.Duration
	// Lease is how long a claim holds its rows: past half of it the
	// worker starts no more of them, handing the rest back.
	Lease time.Duration
	// Batch is how many rows one claim takes; Concurrency how many of
	// them are in flight at once.
	Batch, Concurrency int
}

// Worker delivers one kind of the outbox's rows.
type Worker[D any] struct {
	cfg  Config
	kind Kind[D]
}

// New returns a worker of kind configured by c.
func New[D any](kind Kind[D], c Config) *Worker[D] {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c.Poll = or(c.Poll, DefaultPoll)
	c.Lease = or(c.Lease, DefaultLease)
	c.Batch = or(c.Batch, DefaultBatch)
	c.Concurrency = or(c.Concurrency, DefaultConcurrency)
	return &Worker[D]{cfg: c, kind: kind}
}

func or[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Run delivers until ctx ends: a claim at once after a full batch, else
// after Poll. Errors are logged, not returned.
func (w *Worker[D]) Run(ctx context.Context) {
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
			w.cfg.Log.ErrorContext(ctx, "outbox: delivering", slog.String("kind", w.cfg.Name), slog.Any("error", err))
		}
		wait := w.cfg.Poll
		if claimed == w.cfg.Batch && err == nil {
			wait = 0
		}
		timer.Reset(wait)
	}
}

// RunOnce claims one batch of due rows, attempts each and records the
// attempts; it returns how many it claimed. Failed attempts are recorded
// for their retry, not returned; the error reports a claim or a record
// that failed, or the end of ctx.
func (w *Worker[D]) RunOnce(ctx context.Context) (int, error) {
	claimedAt := w.cfg.Now()
	var due []D
	// The claim is its own short transaction: nothing waits for a
	// receiver while holding the database.
	err := w.cfg.Store.Transact(ctx, func(tx store.Tx) error {
		var err error
		due, err = w.kind.Claim(ctx, tx, claimedAt, claimedAt.Add(w.cfg.Lease), w.cfg.Batch)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("outbox: claim %s: %w", w.cfg.Name, err)
	}
	if len(due) == 0 {
		return 0, nil
	}
	made := make([]*Made[D], len(due))
	sem := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	for i := range due {
		sem <- struct{}{}
		// Past half the lease another worker may soon claim what is left,
		// and an ended ctx sends nothing more: hand the rest back.
		if ctx.Err() != nil || w.cfg.Now().Sub(claimedAt) > w.cfg.Lease/2 {
			<-sem
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			made[i] = w.attempt(ctx, &due[i])
		}()
	}
	wg.Wait()
	return len(due), errors.Join(w.record(ctx, made), w.release(ctx, due, made))
}

// attempt makes one attempt of d and returns it, or nil when the attempt
// was cut short by the end of ctx (d is handed back).
func (w *Worker[D]) attempt(ctx context.Context, d *D) *Made[D] {
	row := w.kind.Row(d)
	start := w.cfg.Now()
	a := store.OutboxAttempt{DeliveryID: row.ID, N: row.Tries + 1, At: start}
	ok, cannot := false, false
	switch status, reply, err := w.kind.Send(ctx, d, start); {
	case errors.Is(err, ErrCannot):
		// Sending again cannot help: fail the delivery now, and say why
		// in the log, for the operator; the owner reads that it could not
		// be made.
		cannot = true
		a.Error = "drip could not make this delivery's request; the operator's log says why"
		w.cfg.Log.ErrorContext(ctx, "outbox: delivery cannot be made", slog.String("kind", w.cfg.Name),
			slog.Int64("delivery", row.ID), slog.String("error", errorText(err.Error())))
	case err != nil && ctx.Err() != nil:
		return nil
	case err != nil:
		a.Error = errorText(attemptError(err))
	default:
		a.Status, a.Reply = status, replyText(reply)
		if ok = w.kind.Success(status); !ok {
			a.Error = fmt.Sprintf("HTTP %d: %s", status, statusWord(status))
		}
	}
	now := w.cfg.Now()
	a.Latency = now.Sub(start)
	next := *row
	next.Attempts++
	next.Tries++
	next.LastStatus, next.LastError = a.Status, a.Error
	switch at, more := w.kind.Next(next.Attempts, now); {
	case ok:
		next.State, next.DoneAt = store.DeliveryDelivered, now
	case cannot || !more:
		next.State, next.DoneAt = store.DeliveryFailed, now
	default:
		next.NextAttemptAt = at
	}
	return &Made[D]{D: d, Record: store.OutboxRecord{Attempt: a, Delivery: &next}, OK: ok}
}

// record writes the attempts made (nil entries were not) in one
// transaction, with what the kind records beside them.
func (w *Worker[D]) record(ctx context.Context, made []*Made[D]) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	var done []Made[D]
	var records []store.OutboxRecord
	for _, m := range made {
		if m != nil {
			done = append(done, *m)
			records = append(records, m.Record)
		}
	}
	if len(done) == 0 {
		return nil
	}
	now := w.cfg.Now()
	var after func()
	tries := 0
	err := retry(ctx, func() error {
		if tries++; tries > 1 {
			w.cfg.Log.ErrorContext(ctx, "outbox: record attempts failed; trying again", slog.String("kind", w.cfg.Name),
				slog.Int("attempts", len(done)), slog.Int("try", tries))
		}
		return w.cfg.Store.Transact(ctx, func(tx store.Tx) error {
			if err := tx.OutboxRecordAttempts(ctx, records); err != nil {
				return err
			}
			var err error
			after, err = w.kind.Recorded(ctx, tx, done, now)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("outbox: record %d %s attempts: %w", len(done), w.cfg.Name, err)
	}
	if after != nil {
		after()
	}
	return nil
}

// release hands back, due at once, the claimed rows that were not
// attempted (ctx ended: a node stopping; or half the lease passed), so
// that no one waits for their lease to run out.
func (w *Worker[D]) release(ctx context.Context, due []D, made []*Made[D]) error {
	var left []store.Delivery
	for i, m := range made {
		if m == nil {
			left = append(left, *w.kind.Row(&due[i]))
		}
	}
	if len(left) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := w.cfg.Store.Transact(ctx, func(tx store.Tx) error {
		return tx.OutboxRelease(ctx, left, w.cfg.Now())
	})
	if err != nil {
		return fmt.Errorf("outbox: release %d claimed %s deliveries: %w", len(left), w.cfg.Name, err)
	}
	return nil
}

// retry runs fn until it succeeds or ctx ends, waiting a little longer
// each time. Recording attempts is safe to repeat, even after a commit
// whose answer was lost: an attempt recorded already is dropped
// (Tx.OutboxRecordAttempts), and what a kind records beside is written so
// that it holds once. Each retry spares the receivers a whole batch sent
// again when the lease ends (a database connection dropped under the
// record).
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

// Timeout bounds one attempt, from dialling to the end of the reply's
// body: an answer later than this is a failure (D52, D55).
const Timeout = safehttp.DefaultTimeout

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
