package webhook

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"slices"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The events feed (issue 17, D59): GET /api/v2/events reads a faucet's
// events, each as the body its webhook delivery carries (Body, one
// function for both), in the order they committed, and a cursor to read
// on from. A receiver that was down catches up with it; a client without
// a receiver polls it.
//
// The order is the store's feed order, (txid, seq): on PostgreSQL the
// feed reads only events of transactions that have ended below its
// snapshot's horizon, so no event can commit later at a position before
// one the feed has handed out, and a reader that always reads on from
// its last cursor reads every event exactly once.

// MaxFeedLimit is the most events one read of the feed answers, and its
// default (the payouts list's bound, spec 8).
const MaxFeedLimit = 100

// feedScan is how many events past the cursor one read looks at when it
// asks for some types only: a client that wants a rare type still moves
// its cursor on through the others, rather than every poll reading the
// faucet's whole history past it.
const feedScan = 1000

// FeedPage is one read of the feed.
type FeedPage struct {
	// Bodies are the events' webhook bodies (spec 2.8, D51), oldest first.
	Bodies [][]byte
	// Next is the cursor to read on from: after the last event read,
	// those of types not asked for included.
	Next string
	// HasMore tells that more events may be read at once from Next;
	// false: the feed is read up to what has committed, poll later.
	HasMore bool
}

// Feed reads faucets' events feeds. It keeps no state: any number of
// nodes may serve it.
type Feed struct{ st store.Reader }

// NewFeed returns the feed over st.
func NewFeed(st store.Reader) *Feed { return &Feed{st: st} }

// Read reads up to limit (1 to MaxFeedLimit) of the faucet's events of
// the given types (none: every type of Events) after the cursor after
// ("": from the oldest event kept). A cursor that is not one this
// faucet's feed gave is CodeInvalid. An event that cannot make a body is
// passed over, as the delivery worker fails it rather than send it.
func (f *Feed) Read(ctx context.Context, faucetID int64, after string, types []string, limit int) (*FeedPage, error) {
	pos, err := parseCursor(faucetID, after)
	if err != nil {
		return nil, err
	}
	if len(types) == 0 {
		types = Events
	}
	limit = max(1, min(limit, MaxFeedLimit))
	// One event more than asked for tells whether more follow; with some
	// types only, a longer stretch (feedScan).
	scan := limit + 1
	if slices.ContainsFunc(Events, func(t string) bool { return !slices.Contains(types, t) }) {
		scan = max(scan, feedScan)
	}
	rows, err := f.st.EventFeed(ctx, &store.EventFeedParams{FaucetID: faucetID, After: pos, Types: types, Limit: scan})
	if err != nil {
		return nil, err
	}
	page := &FeedPage{Bodies: [][]byte{}}
	read := 0
	for ; read < len(rows) && len(page.Bodies) < limit; read++ {
		ev := rows[read]
		pos = ev.Position
		if !slices.Contains(types, ev.Event.Type) {
			continue
		}
		body, err := Body(ev.Event)
		if err != nil {
			continue
		}
		page.Bodies = append(page.Bodies, body)
	}
	page.HasMore = read < len(rows) || len(rows) == scan
	page.Next = cursor(faucetID, pos)
	return page, nil
}

// A cursor is a position of one faucet's feed, written as base64url
// (unpadded) of a version byte and three unsigned varints: the faucet's
// id, the position's txid and its seq. Clients treat it as opaque; it
// names the faucet so that a cursor of another faucet's feed is refused
// rather than read as a position of this one.
const cursorVersion = 1

func cursor(faucetID int64, pos store.EventPosition) string {
	b := []byte{cursorVersion}
	b = binary.AppendUvarint(b, uint64(faucetID))
	b = binary.AppendUvarint(b, pos.TxID)
	b = binary.AppendUvarint(b, uint64(pos.Seq))
	return base64.RawURLEncoding.EncodeToString(b)
}

// MaxCursor is the length of the longest cursor: a version byte and
// three varints of at most 10 bytes, in base64.
const MaxCursor = (1 + 3*binary.MaxVarintLen64 + 2) / 3 * 4

var errCursor = drip.Errorf(drip.CodeInvalid,
	"Invalid after: not a cursor of this faucet's events feed. Pass the next of an earlier reply, or leave after out to read from the oldest event.")

// parseCursor is the position s names in the faucet's feed; "" is the
// start. Only the exact text cursor writes is taken.
func parseCursor(faucetID int64, s string) (store.EventPosition, error) {
	if s == "" {
		return store.EventPosition{}, nil
	}
	if len(s) > MaxCursor {
		return store.EventPosition{}, errCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || b[0] != cursorVersion {
		return store.EventPosition{}, errCursor
	}
	r := bytes.NewReader(b[1:])
	var v [3]uint64
	for i := range v {
		if v[i], err = binary.ReadUvarint(r); err != nil {
			return store.EventPosition{}, errCursor
		}
	}
	pos := store.EventPosition{TxID: v[1], Seq: int64(v[2])}
	if r.Len() != 0 || v[0] != uint64(faucetID) || v[2] > math.MaxInt64 || cursor(faucetID, pos) != s {
		return store.EventPosition{}, errCursor
	}
	return pos, nil
}
