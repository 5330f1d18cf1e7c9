package drip_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
)

// An event id is unique without coordination and sorts by the time it was
// made, so the index holding payments' identities (D6) grows at its end.
func TestNewEventIDSortsByTime(t *testing.T) {
	form := regexp.MustCompile(`^evt_[0-9a-f]{36}$`)
	seen := map[string]bool{}
	prev := drip.NewEventID()
	for range 5 {
		time.Sleep(2 * time.Millisecond)
		id := drip.NewEventID()
		if !form.MatchString(id) {
			t.Fatalf("NewEventID() = %q, want evt_ and 36 hex digits", id)
		}
		if id <= prev {
			t.Fatalf("an id made later sorts first: %q after %q", id, prev)
		}
		prev = id
	}
	for range 10000 {
		id := drip.NewEventID()
		if seen[id] {
			t.Fatalf("NewEventID() returned %q twice", id)
		}
		seen[id] = true
	}
}
