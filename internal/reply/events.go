package reply

import "encoding/json"

// EventBody is one event as the body of its webhook delivery (spec 2.8,
// D51): the very bytes webhook.Body made of it, so that the events feed
// and the webhooks cannot tell an event differently (D59).
type EventBody json.RawMessage

// MarshalJSON writes the body as it is.
func (b EventBody) MarshalJSON() ([]byte, error) { return b, nil }

// Events are one read of the events feed: /events (D59).
type Events struct {
	Events  []EventBody `json:"events" jsonschema:"the faucet's events in the order they committed, oldest first, each the body its webhook delivery carries (dedupe on id)"`
	Next    string      `json:"next" jsonschema:"the cursor to read on from: send it as after; kept by the client, it never expires"`
	HasMore bool        `json:"has_more" jsonschema:"true: more events can be read now from next; false: nothing more to read now, poll again later from next"`
}
