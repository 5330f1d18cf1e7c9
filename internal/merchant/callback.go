package merchant

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/outbox"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
)

// The merchant callback (spec 6.2, D55): a form-encoded POST of the
// payment's fields (spec 2.9) to the checkout's callback_url, sent by the
// outbox's worker (D50) with the callback kind: at once after the
// payment, then after gaps of 5, 15, 30, 60, 120 and 240 minutes, seven
// attempts in all; success is HTTP 200 exactly. The merchant verifying
// the token acknowledges it too (Verify), which ends the attempts.

// callbackGaps are the waits after the 1st, 2nd, ... failed attempt (D55).
var callbackGaps = [...]time.Duration{
	5 * time.Minute, 15 * time.Minute, 30 * time.Minute, 60 * time.Minute, 120 * time.Minute, 240 * time.Minute,
}

// CallbackAttempts is how many times a callback is tried (spec 6.2).
const CallbackAttempts = len(callbackGaps) + 1

// NextCallback is when to try a callback again after its attempt number
// attempt (from 1) failed at now, or false after the seventh (D55).
func NextCallback(attempt int, now time.Time) (time.Time, bool) {
	if attempt < 1 {
		return now, true
	}
	if attempt > len(callbackGaps) {
		return time.Time{}, false
	}
	return now.Add(callbackGaps[attempt-1]), true
}

// CallbackWorkerConfig configures a CallbackWorker; zero fields take the
// outbox's defaults.
type CallbackWorkerConfig struct {
	Store   store.Store
	Service *Service
	// Client sends the callbacks: safehttp.NewClient with the service's
	// rules, which refuse non-public addresses when connecting (D53).
	Client             *http.Client
	Now                func() time.Time
	Log                *slog.Logger
	Poll, Lease        time.Duration
	Batch, Concurrency int
}

// CallbackWorker delivers merchant callbacks.
type CallbackWorker struct {
	st  store.Store
	run *outbox.Worker[store.CallbackDelivery]
}

// NewCallbackWorker returns a worker configured by c.
func NewCallbackWorker(c CallbackWorkerConfig) *CallbackWorker {
	k := &callbackKind{svc: c.Service, client: c.Client}
	return &CallbackWorker{st: c.Store, run: outbox.New(k, outbox.Config{Store: c.Store, Now: c.Now, Log: c.Log, Name: "callback",
		Poll: c.Poll, Lease: c.Lease, Batch: c.Batch, Concurrency: c.Concurrency})}
}

// Backlog is the callbacks' outbox as metrics show it.
func (w *CallbackWorker) Backlog(ctx context.Context) (int64, time.Time, error) {
	return w.st.OutboxBacklog(ctx, store.DeliveryCallback)
}

// Run delivers callbacks until ctx ends.
func (w *CallbackWorker) Run(ctx context.Context) { w.run.Run(ctx) }

// RunOnce claims one batch of due callbacks and attempts each; it returns
// how many it claimed.
func (w *CallbackWorker) RunOnce(ctx context.Context) (int, error) { return w.run.RunOnce(ctx) }

// ClientOptions are the rules of the callbacks' client: those of the
// service's form check, http admitted.
func (s *Service) ClientOptions() safehttp.Options { return s.http }

type callbackKind struct {
	svc    *Service
	client *http.Client
}

func (k *callbackKind) Claim(ctx context.Context, tx store.Tx, now, until time.Time, limit int) ([]store.CallbackDelivery, error) {
	return tx.CallbackClaim(ctx, now, until, limit)
}

func (k *callbackKind) Row(d *store.CallbackDelivery) *store.Delivery { return &d.Delivery }

// Success is HTTP 200 exactly (spec 6.2 rule 2).
func (k *callbackKind) Success(status int) bool { return status == http.StatusOK }

func (k *callbackKind) Next(attempt int, now time.Time) (time.Time, bool) {
	return NextCallback(attempt, now)
}

func (k *callbackKind) Recorded(context.Context, store.Tx, []outbox.Made[store.CallbackDelivery], time.Time) (func(), error) {
	return nil, nil
}

// Send POSTs the payment's fields to the checkout's callback URL.
func (k *callbackKind) Send(ctx context.Context, d *store.CallbackDelivery, _ time.Time) (int, []byte, error) {
	c := &d.Checkout
	if c.ID == 0 || c.State != store.CheckoutPaid || c.CallbackURL == "" {
		return 0, nil, fmt.Errorf("%w: callback %d has no paid checkout with a callback URL", outbox.ErrCannot, d.ID)
	}
	form, err := k.svc.CallbackForm(ctx, c)
	switch {
	case err != nil && isOutage(err):
		// The merchant reads this: no word of the database's whereabouts.
		return 0, nil, errors.New("drip's database did not answer in time; the callback will be tried again")
	case err != nil:
		return 0, nil, fmt.Errorf("%w: %w", outbox.ErrCannot, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.CallbackURL, strings.NewReader(form.Encode()))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", outbox.ErrCannot, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", "drip-callback (+https://github.com/dripfaucet/drip)")
	resp, err := k.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	reply, _ := safehttp.ReadReply(resp, safehttp.ReplyLogBytes)
	return resp.StatusCode, reply, nil
}

// isOutage reports whether err is the database failing, which a later
// attempt may not meet, rather than something wrong with the callback
// (a sealed token that does not open, a user gone).
func isOutage(err error) bool {
	code := drip.ErrorCode(err)
	return errors.Is(err, store.ErrUnavailable) || code == drip.CodeUnavailable || code == drip.CodeOutcomeUnknown
}

// Callback is the paid checkout publicID of merchantID, its callback and
// every attempt made of it, oldest first; a nil delivery when the
// checkout has no callback URL.
func (s *Service) Callback(ctx context.Context, merchantID int64, publicID string) (*Checkout, *store.Delivery, []store.OutboxAttempt, error) {
	c, err := s.Get(ctx, publicID)
	if err != nil {
		return nil, nil, nil, err
	}
	if c.MerchantID != merchantID || c.State != store.CheckoutPaid {
		return nil, nil, nil, errNoCheckout
	}
	d, err := s.st.CallbackGet(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return c, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	attempts, err := s.st.OutboxAttemptList(ctx, d.ID)
	return c, d, attempts, err
}

// ResendCallback starts the callback of merchantID's paid checkout
// publicID again, its first attempt due at once (D55). A callback still
// pending is on its schedule already: CodeConflict.
func (s *Service) ResendCallback(ctx context.Context, merchantID int64, publicID string) error {
	c, d, _, err := s.Callback(ctx, merchantID, publicID)
	if err != nil {
		return err
	}
	if d == nil {
		return drip.Errorf(drip.CodeConflict, "This payment has no callback URL.")
	}
	var ok bool
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		ok, err = tx.CallbackResend(ctx, c.ID, s.now())
		return err
	})
	if err == nil && !ok {
		return drip.Errorf(drip.CodeConflict, "This callback is waiting for its next attempt already.")
	}
	return err
}
