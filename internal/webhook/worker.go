package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/outbox"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/store"
)

// The delivery of webhooks (D50, D52): the outbox's worker (internal/
// outbox) with the webhook kind. A delivery is sent as a signed POST
// through a client that enforces D53 at connect time; any 2xx within 15 s
// is success; failures are tried again on D52's schedule; an endpoint
// failing every attempt for 3 days is disabled in the transaction that
// records the attempt, with its owner's email queued.

// Defaults of WorkerConfig.
const (
	DefaultPoll         = outbox.DefaultPoll
	DefaultLease        = outbox.DefaultLease
	DefaultBatch        = outbox.DefaultBatch
	DefaultConcurrency  = outbox.DefaultConcurrency
	DefaultDisableAfter = 72 * time.Hour // D52: failing every attempt for 3 days
)

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
	// Poll, Lease, Batch and Concurrency are the outbox worker's
	// (outbox.Config).
	Poll, Lease        time.Duration
	Batch, Concurrency int
	// DisableAfter is how long an endpoint may fail every attempt before
	// it is disabled and its owner emailed (D52).
	DisableAfter time.Duration
}

// Worker delivers webhooks.
type Worker struct {
	st  store.Store
	run *outbox.Worker[store.WebhookDelivery]
}

// NewWorker returns a worker configured by c.
func NewWorker(c WorkerConfig) *Worker {
	if c.DisableAfter <= 0 {
		c.DisableAfter = DefaultDisableAfter
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	k := &kind{endpoints: c.Endpoints, client: c.Client, rand: c.Rand, log: c.Log, disableAfter: c.DisableAfter}
	return &Worker{st: c.Store, run: outbox.New(k, outbox.Config{Store: c.Store, Now: c.Now, Log: c.Log, Name: "webhook",
		Poll: c.Poll, Lease: c.Lease, Batch: c.Batch, Concurrency: c.Concurrency})}
}

// Backlog is the outbox as metrics show it: how many webhook deliveries
// wait and when the oldest of them was created.
func (w *Worker) Backlog(ctx context.Context) (int64, time.Time, error) {
	return w.st.OutboxBacklog(ctx, store.DeliveryWebhook)
}

// Run delivers until ctx ends (outbox.Worker.Run).
func (w *Worker) Run(ctx context.Context) { w.run.Run(ctx) }

// RunOnce claims one batch of due deliveries, attempts each and records
// the attempts; it returns how many it claimed (outbox.Worker.RunOnce).
func (w *Worker) RunOnce(ctx context.Context) (int, error) { return w.run.RunOnce(ctx) }

// kind is the webhook kind of the outbox.
type kind struct {
	endpoints    *Endpoints
	client       *http.Client
	rand         func() float64
	log          *slog.Logger
	disableAfter time.Duration
}

func (k *kind) Claim(ctx context.Context, tx store.Tx, now, until time.Time, limit int) ([]store.WebhookDelivery, error) {
	return tx.WebhookDeliveryClaim(ctx, now, until, limit)
}

func (k *kind) Row(d *store.WebhookDelivery) *store.Delivery { return &d.Delivery }

func (k *kind) Success(status int) bool { return Success(status) }

func (k *kind) Next(attempt int, now time.Time) (time.Time, bool) {
	return NextAttempt(attempt, now, k.rand)
}

// Send POSTs d's event to its endpoint, signed (D51).
func (k *kind) Send(ctx context.Context, d *store.WebhookDelivery, now time.Time) (int, []byte, error) {
	body, err := Body(d.Event)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", outbox.ErrCannot, err)
	}
	secret, err := k.endpoints.Secret(ctx, &Endpoint{ID: d.EndpointID, SecretSealed: d.SecretSealed})
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", outbox.ErrCannot, err)
	}
	// X-Service-Delivery is the event's id (D51).
	req, err := NewRequest(ctx, d.URL, secret, d.EventID, d.Event, body, now)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", outbox.ErrCannot, err)
	}
	resp, err := k.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	// The status decides (D52); a reply body cut short changes nothing,
	// so its error is not the attempt's.
	reply, _ := safehttp.ReadReply(resp, safehttp.ReplyLogBytes)
	return resp.StatusCode, reply, nil
}

// Recorded keeps the endpoints' health with their attempts: a success
// clears an endpoint's failing_since, a failure starts it; an endpoint
// failing every attempt for disableAfter is disabled here, its owner's
// email queued in the same transaction (D52). Repeated after a lost
// commit, it disables and queues nothing twice: a disabled endpoint is
// not returned as failing again.
func (k *kind) Recorded(ctx context.Context, tx store.Tx, made []outbox.Made[store.WebhookDelivery], now time.Time) (func(), error) {
	ok, bad := map[int64]bool{}, map[int64]bool{}
	for _, m := range made {
		switch {
		case m.OK:
			ok[m.D.EndpointID] = true
		case m.Record.Attempt.Status != 0 || m.Record.Attempt.Error != "":
			bad[m.D.EndpointID] = true
		}
	}
	var succeeded, failed []int64
	for id := range ok {
		succeeded = append(succeeded, id)
	}
	for id := range bad {
		if !ok[id] { // one success in the batch: not failing every attempt
			failed = append(failed, id)
		}
	}
	failing, err := tx.WebhookEndpointsHealth(ctx, succeeded, failed, now, now.Add(-k.disableAfter))
	if err != nil {
		return nil, err
	}
	for _, e := range failing {
		e.Enabled, e.DisabledReason, e.UpdatedAt = false, DisabledFailing, now
		if err := tx.WebhookEndpointSetEnabled(ctx, &e); err != nil {
			return nil, err
		}
		if _, err := tx.NotificationInsert(ctx, &drip.Notification{
			FaucetID: e.FaucetID, Kind: drip.NotifyWebhookDisabled, Detail: e.URL, CreatedAt: now,
		}); err != nil {
			return nil, err
		}
	}
	if len(failing) == 0 {
		return nil, nil
	}
	return func() {
		for _, e := range failing {
			k.log.WarnContext(ctx, "webhook: endpoint disabled after failing every attempt",
				slog.Int64("faucet", e.FaucetID), slog.Int64("endpoint", e.ID), slog.Time("failing_since", e.FailingSince))
		}
	}, nil
}
