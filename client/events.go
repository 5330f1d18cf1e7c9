package client

import (
	"context"
	"strings"
)

// The events feed (D59): the faucet's events, each exactly the body its
// webhook delivery carries (WebhookEvent), in the order they committed,
// read on from a cursor. A receiver that was down catches up with
// CatchUp from the last cursor it kept; a client without a receiver polls
// Events. Dedupe on the event's id, as for webhooks.

// Events is one read of the feed.
type Events struct {
	Events  []WebhookEvent `json:"events"`   // oldest first
	Next    string         `json:"next"`     // the cursor to read on from
	HasMore bool           `json:"has_more"` // false: read up to what has committed; poll later from Next
}

// EventsQuery chooses a read of the feed.
type EventsQuery struct {
	After string   // the Next of an earlier read; "": from the oldest event kept
	Types []string // EventPayoutSent, EventPayoutFailed, EventLowBalance; none: all three
	Limit int      // 1 to 100; 0: the server's default, 100
}

// Events reads the faucet's events after q.After. A cursor the faucet's
// feed did not give is an *Error with code "invalid".
func (c *Client) Events(ctx context.Context, q EventsQuery) (*Events, error) {
	return read[Events](ctx, c, "/events", struct {
		After string `json:"after,omitempty"`
		Types string `json:"types,omitempty"`
		Limit int    `json:"limit,omitempty"`
	}{q.After, strings.Join(q.Types, ","), q.Limit})
}

// CatchUp reads the feed from after until it has no more, calling handle
// with each event of the given types (none: all) in order, and returns the
// cursor to keep for the next catch-up. When handle fails, CatchUp stops
// and returns the cursor before the read that event came in, with the
// error: catching up again from it hands the same events again (at least
// once), so handle must dedupe on the event's id.
func (c *Client) CatchUp(ctx context.Context, after string, types []string, handle func(WebhookEvent) error) (string, error) {
	for {
		page, err := c.Events(ctx, EventsQuery{After: after, Types: types})
		if err != nil {
			return after, err
		}
		for _, ev := range page.Events {
			if err := handle(ev); err != nil {
				return after, err
			}
		}
		after = page.Next
		if !page.HasMore {
			return after, nil
		}
	}
}
