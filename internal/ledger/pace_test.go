package ledger

import (
	"testing"
	"time"
)

// D5: when a writer counts as busy for a wait of 500 µs. Each case runs
// batches of the sizes given, a cycle apart, and checks what the last
// batch's begin reports.
func TestPaceBusy(t *testing.T) {
	const w = 500 * time.Microsecond
	t0 := time.Unix(1e9, 0)
	cases := []struct {
		name  string
		sizes []int         // the batches, repeated to fill n
		cycle time.Duration // from a batch's start to the next's
		n     int
		want  bool
	}{
		// A lone caller: however quick its round trips, one a batch.
		{"lone caller", []int{1}, 100 * time.Microsecond, 100, false},
		// Two callers, taking turns: one or two a batch.
		{"two callers", []int{1, 2}, 600 * time.Microsecond, 100, false},
		// c=64 on SQLite: batches of 20 every 2 ms.
		{"many callers", []int{20}, 2 * time.Millisecond, 100, true},
		// and an odd batch of one among them does not stop the wait.
		{"many callers, one alone", []int{20, 20, 20, 1}, 2 * time.Millisecond, 100, true},
		// The boundary: four a batch, two more within 500 µs at a cycle of
		// 1 ms or less.
		{"four every 0.9 ms", []int{4}, 900 * time.Microsecond, 100, true},
		{"four every 1.1 ms", []int{4}, 1100 * time.Microsecond, 100, false},
		// Batches of three every 10 ms: 300 a second, a wait of 500 µs
		// would gather 0.15 more.
		{"slow batches", []int{3}, 10 * time.Millisecond, 100, false},
		// The first batch has nothing to go by.
		{"first batch", nil, 0, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p pace
			now := t0
			for i := range c.n {
				p.begin(now, w)
				p.taken = c.sizes[i%len(c.sizes)]
				now = now.Add(c.cycle)
			}
			if got := p.begin(now, w); got != c.want {
				t.Fatalf("busy %v, want %v (size %.2f, cycle %.6fs)", got, c.want, p.size, p.cycle)
			}
		})
	}
}

// D5: when the load falls to one caller, each batch one payment a
// millisecond and a half (the wait's 500 µs in it), the writer stops
// waiting within a few batches.
func TestPaceWhenTheLoadFalls(t *testing.T) {
	const w = 500 * time.Microsecond
	var p pace
	now := underLoad(&p, w)
	held := 0
	for p.begin(now, w) {
		if held++; held > 8 {
			t.Fatalf("still busy after %d batches of one", held)
		}
		p.taken = 1
		now = now.Add(1500 * time.Microsecond)
	}
	t.Logf("busy for %d batches of one", held)
}

// D5: a busy writer that pauses does not wait at its next batch: the
// pause counts as one long cycle. Its batches must come quickly again
// for a while before it waits again.
func TestPaceAfterAPause(t *testing.T) {
	const w = 500 * time.Microsecond
	var p pace
	now := underLoad(&p, w)
	if !p.begin(now, w) {
		t.Fatal("not busy under load")
	}
	p.taken = 20
	now = now.Add(time.Second)
	if p.begin(now, w) {
		t.Fatal("busy after a pause of a second")
	}
	busyAgain := 0
	for i := 1; i <= 50 && busyAgain == 0; i++ {
		p.taken = 20
		now = now.Add(2 * time.Millisecond)
		if p.begin(now, w) {
			busyAgain = i
		}
	}
	if busyAgain == 0 {
		t.Fatal("not busy again after 50 quick batches")
	}
	t.Logf("busy again after %d quick batches", busyAgain)
}

// underLoad runs p through 50 batches of 20 payments 2 ms apart, as at
// c=64, and returns the time the next batch begins.
func underLoad(p *pace, w time.Duration) time.Time {
	now := time.Unix(1e9, 0)
	for range 50 {
		p.begin(now, w)
		p.taken = 20
		now = now.Add(2 * time.Millisecond)
	}
	return now
}
