package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/safehttp"
	"github.com/dripfaucet/drip/internal/seal"
	"github.com/dripfaucet/drip/internal/store"
)

// The endpoints of a faucet (D53, D54): where its events are delivered.
// Endpoints is what the console's webhook page (issue 12) calls, in a
// session that passed two-factor authentication; no v2 path or tool
// reaches it. The delivery worker reads endpoints from the store and
// opens their secrets with Secret to sign.

// MaxEndpoints is the most endpoints one faucet may have (D54).
const MaxEndpoints = 10

// URLName is what messages about an endpoint's URL call it.
const URLName = "Webhook URL"

// Why an endpoint is disabled (Endpoint.DisabledReason).
const (
	DisabledByOwner = "owner"   // its owner disabled it
	DisabledFailing = "failing" // every attempt failed for 3 days (D52)
)

// Events are the event types an endpoint may receive, in the order an
// endpoint's events are stored and shown.
var Events = []string{drip.EventPayoutSent, drip.EventPayoutFailed, drip.EventLowBalance}

// Endpoint is one of a faucet's endpoints as stored: its signing secret
// only sealed (open it with Endpoints.Secret).
type Endpoint = store.WebhookEndpoint

// EndpointOptions configure Endpoints.
type EndpointOptions struct {
	// HTTP are the rules URLs are checked with when saved; its Name is
	// always URLName. Tests set a Resolver, and AllowInsecure for a local
	// receiver (development only, D53).
	HTTP safehttp.Options
	// Now is the clock of created_at and updated_at; time.Now when nil.
	Now func() time.Time
}

// Endpoints registers and changes faucets' webhook endpoints. It keeps
// no state but the sealing key, so any number of nodes may run it.
type Endpoints struct {
	st   store.Store
	key  *seal.Key
	http safehttp.Options
	now  func() time.Time
}

// NewEndpoints loads (creating on first use) the key that seals signing
// secrets (internal/seal, purpose seal.Webhook).
func NewEndpoints(ctx context.Context, st store.Store, opts EndpointOptions) (*Endpoints, error) {
	if st == nil {
		return nil, errors.New("webhook: a store is required")
	}
	key, err := seal.Load(ctx, st, seal.Webhook)
	if err != nil {
		return nil, err
	}
	opts.HTTP.Name = URLName
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Endpoints{st: st, key: key, http: opts.HTTP, now: opts.Now}, nil
}

// binding ties a sealed secret to its endpoint's row: a sealed value
// copied to another endpoint does not open there.
func binding(id int64) string { return "endpoint:" + strconv.FormatInt(id, 10) }

var (
	errNoEndpoint = drip.Errorf(drip.CodeNotFound, "There is no such webhook endpoint among this faucet's.")
	errNoFaucet   = drip.Errorf(drip.CodeNotFound, "There is no such faucet.")
)

// notFound turns the store's ErrNotFound into want; other errors (an
// outage is a *drip.Error already) pass as they are.
func notFound(err, want error) error {
	if errors.Is(err, store.ErrNotFound) {
		return want
	}
	return err
}

// checkEvents returns events in the order of Events, refusing an empty
// list, an unknown event and a duplicate.
func checkEvents(events []string) ([]string, error) {
	if len(events) == 0 {
		return nil, drip.Errorf(drip.CodeInvalid, "Choose at least one event: %s.", strings.Join(Events, ", "))
	}
	seen := map[string]bool{}
	for _, ev := range events {
		if !slices.Contains(Events, ev) {
			return nil, drip.Errorf(drip.CodeInvalid, "Unknown event %q: choose among %s.", ev, strings.Join(Events, ", "))
		}
		if seen[ev] {
			return nil, drip.Errorf(drip.CodeInvalid, "Event %s is chosen twice.", ev)
		}
		seen[ev] = true
	}
	var out []string
	for _, ev := range Events {
		if seen[ev] {
			out = append(out, ev)
		}
	}
	return out, nil
}

// Create adds an endpoint to the faucet, enabled, and returns it with its
// signing secret, which is shown to the owner this once and never again.
//
// The URL must pass safehttp.CheckURL (https, a public address: D53),
// checked before the transaction since it may look the host up. events
// are some of Events, each once. The faucet's endpoints are counted in
// the transaction that inserts, under the faucet's lock (Tx.FaucetLock),
// so two creates at once cannot take a faucet past MaxEndpoints.
//
// The secret is sealed bound to the endpoint's id, which only the insert
// makes known: the row is inserted with no secret and given its sealed
// secret in the same transaction, so no reader ever sees it without one.
func (s *Endpoints) Create(ctx context.Context, faucetID int64, url string, events []string) (*Endpoint, string, error) {
	if err := safehttp.CheckURL(ctx, url, s.http); err != nil {
		return nil, "", err
	}
	events, err := checkEvents(events)
	if err != nil {
		return nil, "", err
	}
	secret := NewSecret()
	now := s.now()
	var e *Endpoint
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.FaucetLock(ctx, faucetID); err != nil {
			return notFound(err, errNoFaucet)
		}
		n, err := tx.WebhookEndpointCount(ctx, faucetID)
		if err != nil {
			return err
		}
		if n >= MaxEndpoints {
			return drip.Errorf(drip.CodeConflict, "This faucet has %d webhook endpoints, the most it may have; delete one to add another.", n)
		}
		e = &Endpoint{FaucetID: faucetID, URL: url, Events: events, Enabled: true, CreatedAt: now, UpdatedAt: now}
		if e.ID, err = tx.WebhookEndpointCreate(ctx, e); err != nil {
			return err
		}
		if e.SecretSealed, err = s.key.Seal([]byte(secret), binding(e.ID)); err != nil {
			return err
		}
		return tx.WebhookEndpointSetSecret(ctx, faucetID, e.ID, e.SecretSealed, now)
	})
	if err != nil {
		return nil, "", err
	}
	return e, secret, nil
}

// List is the faucet's endpoints, oldest first.
func (s *Endpoints) List(ctx context.Context, faucetID int64) ([]Endpoint, error) {
	return s.st.WebhookEndpointList(ctx, faucetID)
}

// Get is the faucet's endpoint id; CodeNotFound when the faucet has no
// such endpoint.
func (s *Endpoints) Get(ctx context.Context, faucetID, id int64) (*Endpoint, error) {
	e, err := s.st.WebhookEndpointGet(ctx, faucetID, id)
	return e, notFound(err, errNoEndpoint)
}

// RotateSecret gives the faucet's endpoint id a new signing secret and
// returns it, to be shown this once; the old one signs nothing more.
func (s *Endpoints) RotateSecret(ctx context.Context, faucetID, id int64) (string, error) {
	secret := NewSecret()
	sealed, err := s.key.Seal([]byte(secret), binding(id))
	if err != nil {
		return "", err
	}
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		return notFound(tx.WebhookEndpointSetSecret(ctx, faucetID, id, sealed, s.now()), errNoEndpoint)
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// SetEnabled enables the faucet's endpoint id (reason "") or disables it
// for reason: DisabledByOwner, or DisabledFailing (the delivery worker,
// D52).
func (s *Endpoints) SetEnabled(ctx context.Context, faucetID, id int64, enabled bool, reason string) error {
	switch {
	case enabled && reason != "":
		return drip.Errorf(drip.CodeInvalid, "An enabled webhook endpoint has no reason to be disabled.")
	case !enabled && reason != DisabledByOwner && reason != DisabledFailing:
		return drip.Errorf(drip.CodeInvalid, "A webhook endpoint is disabled by its owner (%s) or for failing (%s).", DisabledByOwner, DisabledFailing)
	}
	e := &Endpoint{ID: id, FaucetID: faucetID, Enabled: enabled, DisabledReason: reason, UpdatedAt: s.now()}
	return s.st.Transact(ctx, func(tx store.Tx) error {
		return notFound(tx.WebhookEndpointSetEnabled(ctx, e), errNoEndpoint)
	})
}

// Delete deletes the faucet's endpoint id.
func (s *Endpoints) Delete(ctx context.Context, faucetID, id int64) error {
	return s.st.Transact(ctx, func(tx store.Tx) error {
		return notFound(tx.WebhookEndpointDelete(ctx, faucetID, id), errNoEndpoint)
	})
}

// Secret opens e's sealed signing secret, to sign a delivery. It fails
// (wrapping seal.ErrOpen, never showing the value) when the sealed value
// is not e's own.
func (s *Endpoints) Secret(_ context.Context, e *Endpoint) (string, error) {
	plain, err := s.key.Open(e.SecretSealed, binding(e.ID))
	if err != nil {
		return "", fmt.Errorf("webhook: the signing secret of endpoint %d: %w", e.ID, err)
	}
	return string(plain), nil
}
