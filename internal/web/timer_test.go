package web

import "testing"

func TestTimerText(t *testing.T) {
	t.Parallel()
	for minutes, want := range map[int]string{
		0: "not stated", 1: "every minute", 5: "every 5 minutes", 59: "every 59 minutes", 60: "every hour",
		90: "every 1 h 30 min", 120: "every 2 hours", 1440: "every 24 hours",
	} {
		if got := timerText(minutes); got != want {
			t.Errorf("timerText(%d) = %q, want %q", minutes, got, want)
		}
	}
}
