package operation

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/payout"
	"github.com/dripfaucet/drip/internal/reply"
	"github.com/dripfaucet/drip/internal/webhook"
)

// The events feed (issue 17, D59): /events reads the faucet's events, each
// as its webhook body, in the order they committed, from a cursor; a
// receiver that was down catches up with it. v2's alone: no tool reads it
// (spec 4.3 lists the tools), as no tool reads the audit log.

// EventsParams choose where a read of the feed starts, which events it
// answers and how many.
type EventsParams struct {
	After string `json:"after,omitempty" jsonschema:"the next of an earlier reply; absent: from the oldest event kept (events are kept at least 30 days)"`
	Types string `json:"types,omitempty" jsonschema:"only these event types, comma-separated (payout.sent, payout.failed, faucet.low_balance); absent: all three"`
	Limit *int   `json:"limit,omitempty" jsonschema:"most events to answer, 1 to 100"`
}

// eventTypePattern is one type of webhook.Events, typesPattern a list of
// them (what EventsParams.types takes), cursorPattern the characters of a
// cursor (base64url).
const (
	eventTypePattern = `(payout\.sent|payout\.failed|faucet\.low_balance)`
	typesPattern     = `^(` + eventTypePattern + `(,` + eventTypePattern + `)*)?$`
	cursorPattern    = `^[A-Za-z0-9_-]*$`
)

func (p EventsParams) validate() error {
	if p.Limit != nil && (*p.Limit < 1 || *p.Limit > webhook.MaxFeedLimit) {
		return drip.Errorf(drip.CodeInvalid, "Invalid limit: 1 to %d.", webhook.MaxFeedLimit)
	}
	_, err := p.types()
	return err
}

func (EventsParams) refine(s *jsonschema.Schema) {
	after := s.Properties["after"]
	after.Pattern, after.MaxLength = cursorPattern, new(webhook.MaxCursor)
	types := s.Properties["types"]
	types.Pattern, types.Examples = typesPattern, []any{"payout.sent,payout.failed", "faucet.low_balance"}
	limit := s.Properties["limit"]
	limit.Minimum, limit.Maximum = new(1.0), new(float64(webhook.MaxFeedLimit))
	limit.Default = json.RawMessage("100")
}

// types are the event types asked for, none for every type; an unknown or
// empty one is CodeInvalid.
func (p EventsParams) types() ([]string, error) {
	if p.Types == "" {
		return nil, nil
	}
	list := strings.Split(p.Types, ",")
	for _, t := range list {
		if !slices.Contains(webhook.Events, t) {
			return nil, drip.Errorf(drip.CodeInvalid, "Invalid types: %q is not an event type; give a comma-separated list of %s.",
				t, strings.Join(webhook.Events, ", "))
		}
	}
	return list, nil
}

// events reads the faucet's events feed.
func (r *runner) events(ctx context.Context, c *payout.Caller, p EventsParams) (reply.Events, string, error) {
	types, _ := p.types() // validated
	limit := webhook.MaxFeedLimit
	if p.Limit != nil {
		limit = *p.Limit
	}
	page, err := r.Events.Read(ctx, c.Faucet.ID, p.After, types, limit)
	if err != nil {
		return reply.Events{}, "", err
	}
	rec := reply.Events{Events: make([]reply.EventBody, len(page.Bodies)), Next: page.Next, HasMore: page.HasMore}
	for i, b := range page.Bodies {
		rec.Events[i] = b
	}
	return rec, ok, nil
}

// An event body's schema: spec 2.8's members, event one of the feed's
// types, and data that type's data (D51).
func init() {
	type body struct {
		ID        string `json:"id" jsonschema:"the event's id, evt_...: the same in every delivery and read of it"`
		Event     string `json:"event" jsonschema:"the event's type"`
		FaucetID  int64  `json:"faucet_id" jsonschema:"the faucet"`
		CreatedAt int64  `json:"created_at" jsonschema:"when it happened, Unix seconds"`
		Data      any    `json:"data" jsonschema:"the event's data: that of payout.sent, payout.failed or faucet.low_balance"`
	}
	s := schemaOf(reflect.TypeFor[body](), false)
	s.Description = "an event, exactly the body of its webhook delivery (spec 2.8, D51)"
	s.Properties["event"].Enum = enum(webhook.Events)
	data := s.Properties["data"]
	data.Types, data.Type = nil, ""
	for _, t := range []reflect.Type{reflect.TypeFor[drip.SentData](), reflect.TypeFor[drip.FailedData](), reflect.TypeFor[drip.LowBalanceData]()} {
		data.OneOf = append(data.OneOf, schemaOf(t, false))
	}
	typeSchemas[reflect.TypeFor[reply.EventBody]()] = s
}
