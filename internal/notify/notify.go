// Package notify delivers the emails drip owes faucet owners (D43). The
// ledger writes a notification in the transaction of the payout that caused
// it; a Worker claims due notifications, mails each to the faucet's owner
// and records every attempt, retrying failures with backoff.
//
// Any number of workers may run against one database (D31): a claim leases
// its notifications, so each is with one worker at a time. Delivery is at
// least once: an email sent by a worker that dies before recording it is
// sent again when the lease runs out.
package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"strings"
	"time"
	"unicode"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/store"
)

// Defaults of Config.
const (
	DefaultPoll        = 5 * time.Second
	DefaultLease       = 5 * time.Minute
	DefaultMaxAttempts = 8
)

// batchSize is how many notifications one claim leases. A send may take
// 30 seconds (mail's own timeout), so a batch could outlast the lease if it
// were large; RunOnce also stops early when half the lease is gone.
const batchSize = 8

// recordTimeout bounds recording an attempt. Recording runs even when the
// caller's context has ended, so that a mail already sent is not sent again.
const recordTimeout = 10 * time.Second

// maxErrorLen bounds the error kept with a notification.
const maxErrorLen = 300

// backoff is the wait after the 1st, 2nd, ... failed attempt; the last
// entry repeats if MaxAttempts allows more.
var backoff = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute,
	time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
}

// Config configures a Worker; zero fields take the defaults.
type Config struct {
	Store store.Store
	// Mail sends the emails; mail.NewLog(Log) when nil.
	Mail mail.Sender
	// Channel is recorded with each delivered notification: "smtp" or
	// "log". When empty it is "log" for a *mail.Log sender, else "smtp".
	Channel     string
	Now         func() time.Time // time.Now
	Log         *slog.Logger     // discards when nil
	Poll        time.Duration    // between claims when idle; DefaultPoll
	Lease       time.Duration    // how long a claim holds a notification; DefaultLease
	MaxAttempts int              // attempts before giving up; DefaultMaxAttempts
}

// Worker delivers notifications by email to the faucets' owners.
type Worker struct {
	store       store.Store
	mail        mail.Sender
	channel     string
	now         func() time.Time
	log         *slog.Logger
	poll, lease time.Duration
	maxAttempts int
}

// NewWorker returns a worker configured by c.
func NewWorker(c Config) *Worker {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Mail == nil {
		c.Mail = mail.NewLog(c.Log)
	}
	if c.Channel == "" {
		c.Channel = "smtp"
		if _, ok := c.Mail.(*mail.Log); ok {
			c.Channel = "log"
		}
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	return &Worker{
		store: c.Store, mail: c.Mail, channel: c.Channel, now: c.Now, log: c.Log,
		poll: c.Poll, lease: c.Lease, maxAttempts: c.MaxAttempts,
	}
}

// Backlog is the outbox as metrics show it: how many notifications wait
// for delivery (due or backing off, not given up) and when the oldest of
// them was written.
func (w *Worker) Backlog(ctx context.Context) (pending int64, oldest time.Time, err error) {
	return w.store.NotificationBacklog(ctx, w.maxAttempts)
}

// Run delivers notifications until ctx ends: a batch at once when the last
// one was full, otherwise every Poll. Errors are logged, not returned.
func (w *Worker) Run(ctx context.Context) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		_, claimed, err := w.runOnce(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.ErrorContext(ctx, "notify: delivering notifications", slog.Any("error", err))
		}
		wait := w.poll
		if claimed == batchSize && err == nil {
			wait = 0
		}
		timer.Reset(wait)
	}
}

// RunOnce claims one batch of due notifications and attempts each, and
// returns how many were delivered. Failed sends are recorded for a later
// retry, not returned; the error reports a claim or record that failed, or
// the end of ctx.
func (w *Worker) RunOnce(ctx context.Context) (delivered int, err error) {
	delivered, _, err = w.runOnce(ctx)
	return delivered, err
}

func (w *Worker) runOnce(ctx context.Context) (delivered, claimed int, err error) {
	// The claim is its own short transaction: SQLite has one writer, and
	// no payout should wait for an SMTP server.
	claimedAt := w.now()
	var due []drip.Notification
	err = w.store.Transact(ctx, func(tx store.Tx) error {
		var err error
		due, err = tx.NotificationClaim(ctx, claimedAt, w.lease, w.maxAttempts, batchSize)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("notify: claim: %w", err)
	}
	var errs []error
	for i := range due {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		// Past half the lease, another worker may soon claim what is left:
		// leave it leased, to be tried again when the lease runs out.
		if w.now().Sub(claimedAt) > w.lease/2 {
			break
		}
		ok, err := w.deliver(ctx, &due[i])
		if ok {
			delivered++
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return delivered, len(due), errors.Join(errs...)
}

// deliver attempts one notification and records the attempt.
func (w *Worker) deliver(ctx context.Context, n *drip.Notification) (bool, error) {
	msg, err := w.message(ctx, n)
	var giveUp *giveUpError
	switch {
	case errors.As(err, &giveUp):
		return false, w.giveUp(ctx, n, giveUp.reason)
	case err != nil:
		// The store failed: nothing is wrong with the notification, so no
		// attempt is counted; the lease brings it back.
		return false, fmt.Errorf("notify: notification %d: %w", n.ID, err)
	}

	err = w.mail.Send(ctx, msg)
	switch {
	case err == nil:
		return true, w.delivered(ctx, n)
	case ctx.Err() != nil:
		// Shutting down is not the message's fault: leave it leased.
		return false, fmt.Errorf("notify: notification %d: %w", n.ID, err)
	case errors.Is(err, mail.ErrInvalidMessage):
		w.log.ErrorContext(ctx, "notify: message refused before sending", slog.Int64("notification", n.ID), slog.String("error", err.Error()))
		return false, w.giveUp(ctx, n, "the owner's email address cannot be used")
	default:
		return false, w.failed(ctx, n, err)
	}
}

// giveUpError is a notification that can never be delivered.
type giveUpError struct{ reason string }

func (e *giveUpError) Error() string { return e.reason }

// message composes the email of n to the faucet's owner.
func (w *Worker) message(ctx context.Context, n *drip.Notification) (mail.Message, error) {
	if n.Kind != drip.NotifyLowBalance && n.Kind != drip.NotifyWebhookDisabled {
		return mail.Message{}, &giveUpError{fmt.Sprintf("unknown notification kind %q", n.Kind)}
	}
	f, err := w.store.FaucetGetByID(ctx, n.FaucetID)
	if errors.Is(err, store.ErrNotFound) {
		return mail.Message{}, &giveUpError{"the faucet does not exist"}
	}
	if err != nil {
		return mail.Message{}, err
	}
	owner, err := w.store.UserGetByID(ctx, f.OwnerID)
	if errors.Is(err, store.ErrNotFound) {
		return mail.Message{}, &giveUpError{"the faucet's owner does not exist"}
	}
	if err != nil {
		return mail.Message{}, err
	}
	if owner.Email == "" {
		return mail.Message{}, &giveUpError{"the faucet's owner has no email address"}
	}
	if n.Kind == drip.NotifyWebhookDisabled {
		return webhookDisabledMessage(f, owner, n), nil
	}
	return lowBalanceMessage(f, owner, n), nil
}

// webhookDisabledMessage is the email of a webhook endpoint disabled
// because every attempt to deliver to it failed for 3 days (D52).
func webhookDisabledMessage(f *drip.Faucet, owner *drip.User, n *drip.Notification) mail.Message {
	name := oneLine(f.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\n", owner.Username)
	fmt.Fprintf(&b, "A webhook endpoint of your faucet \"%s\" (id %d) failed every delivery\n", name, f.ID)
	b.WriteString("attempt for 3 days, so drip disabled it at ")
	b.WriteString(n.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC") + ":\n\n")
	fmt.Fprintf(&b, "    %s\n\n", oneLine(n.Detail))
	b.WriteString("Events are no longer sent to it. Its deliveries wait, and their attempts\n")
	b.WriteString("are listed on the faucet's Webhooks page. Once the receiver answers again,\n")
	b.WriteString("enable the endpoint there and resend the failed deliveries of the period.\n\n")
	b.WriteString("-- \ndrip\n")
	return mail.Message{
		To:      owner.Email,
		Subject: fmt.Sprintf("drip: A webhook endpoint of faucet \"%s\" was disabled", name),
		Body:    b.String(),
	}
}

// lowBalanceMessage is the email of a low-balance notification (D43).
func lowBalanceMessage(f *drip.Faucet, owner *drip.User, n *drip.Notification) mail.Message {
	name := oneLine(f.Name)
	var b strings.Builder
	fmt.Fprintf(&b, "Hello %s,\n\n", owner.Username)
	fmt.Fprintf(&b, "The %s balance of your faucet \"%s\" (id %d) fell below the alert threshold\n", n.Coin, name, f.ID)
	fmt.Fprintf(&b, "you set, after a payout at %s.\n\n", n.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "Balance:   %s %s (%d smallest units)\n", drip.FormatCoins(n.Balance), n.Coin, n.Balance)
	fmt.Fprintf(&b, "Threshold: %s %s (%d smallest units)\n\n", drip.FormatCoins(n.Threshold), n.Coin, n.Threshold)
	fmt.Fprintf(&b, "Deposit %s to the faucet to keep paying its visitors.\n\n", n.Coin)
	fmt.Fprintf(&b, "This alert will not be sent again until the faucet's %s balance rises\n", n.Coin)
	b.WriteString("back to the threshold or above and then falls below it again. You can\n")
	b.WriteString("change or turn off the alert in the faucet's low-balance settings.\n\n")
	b.WriteString("-- \ndrip\n")
	return mail.Message{
		To:      owner.Email,
		Subject: fmt.Sprintf("drip: Faucet \"%s\" is low on %s", name, n.Coin),
		Body:    b.String(),
	}
}

// oneLine replaces control characters (line breaks above all, which would
// make the subject an invalid header) with spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// delivered records that n was sent.
func (w *Worker) delivered(ctx context.Context, n *drip.Notification) error {
	sent := w.now()
	n.SentAt, n.Channel, n.LastError = &sent, w.channel, ""
	return w.record(ctx, n, 1, sent)
}

// failed records a failed attempt and when to try again.
func (w *Worker) failed(ctx context.Context, n *drip.Notification, sendErr error) error {
	now := w.now()
	next := now.Add(retryAfter(n.Attempts + 1))
	// The owner reads LastError (/api/v2/low-balance-notification): it says
	// what went wrong in general terms; the operator's relay host, account
	// and the server's words go to the log only.
	n.LastError = ownerSafe(sendErr)
	attrs := []any{slog.Int64("notification", n.ID), slog.Int64("faucet", n.FaucetID),
		slog.Int("attempt", n.Attempts+1), slog.String("error", errorText(sendErr.Error()))}
	if n.Attempts+1 < w.maxAttempts {
		attrs = append(attrs, slog.Time("retry_at", next))
		w.log.WarnContext(ctx, "notify: send failed, will retry", attrs...)
	} else {
		w.log.ErrorContext(ctx, "notify: send failed, giving up", attrs...)
	}
	return w.record(ctx, n, 1, next)
}

// giveUp records a notification that cannot be delivered with as many
// attempts as the maximum, so that no worker claims it again.
func (w *Worker) giveUp(ctx context.Context, n *drip.Notification, reason string) error {
	n.LastError = errorText(reason)
	w.log.ErrorContext(ctx, "notify: notification cannot be delivered",
		slog.Int64("notification", n.ID), slog.Int64("faucet", n.FaucetID), slog.String("error", n.LastError))
	return w.record(ctx, n, max(1, w.maxAttempts-n.Attempts), w.now())
}

// record records attempts more attempts of n in one short transaction,
// next due at next.
func (w *Worker) record(ctx context.Context, n *drip.Notification, attempts int, next time.Time) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	n.Attempts += attempts
	err := w.store.Transact(ctx, func(tx store.Tx) error { return tx.NotificationRecord(ctx, n, next) })
	if err != nil {
		return fmt.Errorf("notify: record notification %d: %w", n.ID, err)
	}
	return nil
}

// retryAfter is the wait after the attempt-th failed attempt (from 1).
func retryAfter(attempt int) time.Duration {
	return backoff[min(max(attempt, 1), len(backoff))-1]
}

// errorText is an error as kept with a notification and shown to its
// owner: one line, bounded. Mail errors never carry the SMTP password.
// ownerSafe is what the owner may read of a failed send.
func ownerSafe(err error) string {
	var reply *textproto.Error
	var netErr net.Error
	switch {
	case errors.As(err, &reply):
		return fmt.Sprintf("the mail server refused the email (SMTP %d)", reply.Code)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "the mail server did not answer in time"
	case errors.As(err, &netErr):
		return "the mail server could not be reached"
	}
	return "the email could not be delivered"
}

func errorText(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > maxErrorLen {
		s = string(r[:maxErrorLen-1]) + "…"
	}
	return s
}
