package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// What the owner sees of an endpoint's deliveries (D50, D52), and what
// the owner may do with them: resend one, resend the failed ones of a
// time range, send a test event. Like the endpoints' own methods, these
// are for the console only (D54); every one names the faucet, so another
// faucet's delivery is not found.

// Delivery is one event to one endpoint; Attempt one try of it.
type (
	Delivery = store.WebhookDelivery
	Attempt  = store.OutboxAttempt
)

// MaxResendRange is the longest time range one "resend failed" covers:
// long enough for any outage the schedule gives up on (D52's 42 hours of
// retries, and the 3 days before an endpoint is disabled), short enough
// that one click cannot requeue a year of history.
const MaxResendRange = 31 * 24 * time.Hour

var errNoDelivery = drip.Errorf(drip.CodeNotFound, "This faucet has no such webhook delivery.")

// Deliveries is a page of the faucet's deliveries to its endpoint
// endpointID (0: to every endpoint), newest first, in state ("" for all),
// older than the delivery beforeID (0: from the newest).
func (s *Endpoints) Deliveries(ctx context.Context, faucetID, endpointID int64, state string, beforeID int64, limit int) ([]Delivery, error) {
	switch state {
	case "", store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed:
	default:
		return nil, drip.Errorf(drip.CodeInvalid, "A delivery's state is %s, %s or %s.", store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed)
	}
	return s.st.WebhookDeliveryList(ctx, &store.WebhookDeliveryListParams{
		FaucetID: faucetID, EndpointID: endpointID, State: state, BeforeID: beforeID, Limit: max(1, min(limit, 200)),
	})
}

// Delivery is the faucet's delivery id with every attempt made of it,
// oldest first.
func (s *Endpoints) Delivery(ctx context.Context, faucetID, id int64) (*Delivery, []Attempt, error) {
	d, err := s.st.WebhookDeliveryGet(ctx, faucetID, id)
	if err != nil {
		return nil, nil, notFound(err, errNoDelivery)
	}
	attempts, err := s.st.OutboxAttemptList(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return d, attempts, nil
}

// Resend starts the schedule of the faucet's delivery id again, its first
// attempt due at once (D52). A delivery still pending is on its schedule
// already: CodeConflict.
func (s *Endpoints) Resend(ctx context.Context, faucetID, id int64) error {
	d, err := s.st.WebhookDeliveryGet(ctx, faucetID, id)
	if err != nil {
		return notFound(err, errNoDelivery)
	}
	if d.State == store.DeliveryPending {
		return drip.Errorf(drip.CodeConflict, "This delivery is waiting for its next attempt already.")
	}
	n, err := s.resend(ctx, &store.WebhookResendParams{FaucetID: faucetID, ID: id})
	if err == nil && n == 0 {
		// Its state changed between the read and the write: a worker
		// just took it up again.
		return drip.Errorf(drip.CodeConflict, "This delivery is waiting for its next attempt already.")
	}
	return err
}

// ResendFailed starts again the schedule of every failed delivery to the
// faucet's endpoint endpointID whose event happened in [from, to), and
// returns how many there were.
func (s *Endpoints) ResendFailed(ctx context.Context, faucetID, endpointID int64, from, to time.Time) (int64, error) {
	switch {
	case from.IsZero() || to.IsZero() || !from.Before(to):
		return 0, drip.Errorf(drip.CodeInvalid, "The time range must start before it ends.")
	case to.Sub(from) > MaxResendRange:
		return 0, drip.Errorf(drip.CodeInvalid, "The time range may cover at most %d days.", int(MaxResendRange/(24*time.Hour)))
	}
	if _, err := s.Get(ctx, faucetID, endpointID); err != nil {
		return 0, err
	}
	return s.resend(ctx, &store.WebhookResendParams{FaucetID: faucetID, EndpointID: endpointID, From: from, To: to})
}

func (s *Endpoints) resend(ctx context.Context, p *store.WebhookResendParams) (int64, error) {
	var n int64
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.WebhookDeliveriesResend(ctx, p, s.now())
		return err
	})
	return n, err
}

// SendTest records a webhook.test event of the faucet and its delivery to
// the endpoint endpointID alone, due at once, in one transaction, and
// returns the delivery's id. The endpoint must be enabled: a disabled one
// receives nothing.
func (s *Endpoints) SendTest(ctx context.Context, faucetID, endpointID int64) (int64, error) {
	e, err := s.Get(ctx, faucetID, endpointID)
	if err != nil {
		return 0, err
	}
	if !e.Enabled {
		return 0, drip.Errorf(drip.CodeConflict, "This webhook endpoint is disabled; enable it to send it a test event.")
	}
	data, err := json.Marshal(drip.TestData{Message: "A test event sent from the drip console. Acknowledge it with a 2xx; there is nothing to do."})
	if err != nil {
		return 0, err
	}
	now := s.now()
	ev := &drip.Event{ID: drip.NewEventID(), FaucetID: faucetID, Type: drip.EventWebhookTest, Data: data, CreatedAt: now}
	var id int64
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.EventInsert(ctx, ev); err != nil {
			return err
		}
		var err error
		id, err = tx.WebhookDeliveryInsert(ctx, faucetID, endpointID, ev.ID, now)
		if errors.Is(err, store.ErrNotFound) {
			return errNoEndpoint // deleted meanwhile
		}
		return err
	})
	return id, err
}
