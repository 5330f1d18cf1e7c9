package sqlstore

import (
	"testing"
	"time"
)

// TestStatsFoldDue: the folder folds when fewer than statsQuiet payouts a
// second were made since it last looked, or when the statistics were read
// in the last statsReading, and waits otherwise (D73).
func TestStatsFoldDue(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		made   int64
		readAt time.Time
		want   bool
	}{
		{0, time.Time{}, true},
		{statsQuiet - 1, time.Time{}, true},
		{statsQuiet, time.Time{}, false},
		{50_000, time.Time{}, false},
		{50_000, now.Add(-statsReading + time.Second), true},
		{50_000, now.Add(-statsReading), false},
	} {
		if got := statsFoldDue(c.made, c.readAt, now); got != c.want {
			t.Errorf("statsFoldDue(%d made, read %v before) = %v, want %v", c.made, now.Sub(c.readAt), got, c.want)
		}
	}
}
