// Package webhook makes the signed HTTP request of one webhook delivery
// (spec 2.8 and 6.1, D51) from an event the ledger recorded, and decides
// when a failed delivery is tried again (D52). It also makes the signing
// secrets of endpoints, which are stored sealed (internal/seal, purpose
// seal.Webhook) because signing needs them in the clear.
//
// It does no I/O of its own and holds no state: issue 12's delivery worker
// claims outbox rows, builds each request here and sends it through a
// client that enforces the URL rules of D53 at connect time; issue 13's
// merchant callbacks share the worker. The console shows a new secret
// (NewSecret) once. Feed (feed.go) answers v2's events feed with the same
// bodies, Body making both (D59). Nothing here logs, and no error carries
// a secret.
//
// Every request carries two signatures over the same exact body bytes:
//
//   - X-Service-Signature: sha256=<hex HMAC-SHA256 of the body>, keyed with
//     the secret string as shown to the owner ("whsec_..."), as spec 6.1
//     rule 2 says;
//   - the Standard Webhooks headers webhook-id (the event id),
//     webhook-timestamp (Unix seconds) and webhook-signature
//     (v1,<base64 HMAC-SHA256 of "id.timestamp.body">, keyed with the bytes
//     the secret's base64 part decodes to), so that the standard's
//     reference libraries verify deliveries and refuse replays.
//
// Receivers verify with the Go client package (client.VerifySignature,
// client.VerifyStandard) and dedupe on the event id: delivery is at least
// once.
package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/dripfaucet/drip/internal/drip"
)

// The data of each event's body, defined once with the ledger that
// stores them (internal/drip).
type (
	SentData       = drip.SentData
	FailedData     = drip.FailedData
	LowBalanceData = drip.LowBalanceData
	TestData       = drip.TestData
)

// envelope is a delivery body (spec 2.8, D51), its members in the
// specification's order.
type envelope struct {
	ID        string `json:"id"` // the event's id, evt_...
	Event     string `json:"event"`
	FaucetID  int64  `json:"faucet_id"`
	CreatedAt int64  `json:"created_at"` // Unix seconds
	Data      any    `json:"data"`
}

// ErrEvent is wrapped by Body when a stored event cannot make a body:
// sending it again will not help, so the worker marks the delivery failed.
var ErrEvent = errors.New("webhook: event cannot be delivered")

// Body is the delivery body of ev, exactly spec 2.8: id (ev.ID, evt_...),
// event, faucet_id, created_at (Unix seconds) and data. ev.Data is the
// data the ledger stored with the event; it must have exactly the members
// of the event's data type (SentData, FailedData, LowBalanceData), of
// their JSON types, or Body refuses it (ErrEvent) rather than send a body
// that differs from the documented one. The same event always gives the
// same bytes, so every attempt signs what the first one did.
func Body(ev drip.Event) ([]byte, error) {
	if !strings.HasPrefix(ev.ID, "evt_") || len(ev.ID) == len("evt_") {
		return nil, fmt.Errorf("%w: id %q is not evt_ and a suffix", ErrEvent, ev.ID)
	}
	if ev.FaucetID <= 0 {
		return nil, fmt.Errorf("%w: event %s has no faucet", ErrEvent, ev.ID)
	}
	if ev.CreatedAt.IsZero() {
		return nil, fmt.Errorf("%w: event %s has no time", ErrEvent, ev.ID)
	}
	var (
		data any
		err  error
	)
	switch ev.Type {
	case drip.EventPayoutSent:
		data, err = exactly[SentData](ev.Data)
	case drip.EventPayoutFailed:
		data, err = exactly[FailedData](ev.Data)
	case drip.EventLowBalance:
		data, err = exactly[LowBalanceData](ev.Data)
	case drip.EventWebhookTest:
		data, err = exactly[TestData](ev.Data)
	default:
		return nil, fmt.Errorf("%w: event %s has unknown type %q", ErrEvent, ev.ID, ev.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s data of event %s: %v", ErrEvent, ev.Type, ev.ID, err)
	}
	return json.Marshal(envelope{ID: ev.ID, Event: ev.Type, FaucetID: ev.FaucetID, CreatedAt: ev.CreatedAt.Unix(), Data: data})
}

// exactly decodes raw, a JSON object with exactly the members of T, each
// of its type.
func exactly[T any](raw []byte) (*T, error) {
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	// Every member T writes must have been there: none taken as zero.
	var have map[string]json.RawMessage
	if err := json.Unmarshal(raw, &have); err != nil {
		return nil, err
	}
	for _, name := range members[T]() {
		if _, ok := have[name]; !ok {
			return nil, fmt.Errorf("member %q missing", name)
		}
	}
	return &v, nil
}

// memberNames caches members' answers, by type: each delivery's body
// checks its data against them (a worker sends thousands a second).
var memberNames sync.Map // reflect.Type -> []string

// members are the JSON member names T is written with.
func members[T any]() []string {
	t := reflect.TypeFor[T]()
	if names, ok := memberNames.Load(t); ok {
		return names.([]string)
	}
	var zero T
	out, _ := json.Marshal(&zero) // the data types marshal without error
	var want map[string]json.RawMessage
	_ = json.Unmarshal(out, &want)
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	memberNames.Store(t, names)
	return names
}
