package console

import (
	"context"
	"sync"
	"time"

	"github.com/dripfaucet/drip/internal/ledger"
)

// reconcileTimeout bounds one check of the ledger (D3) run for the
// operator overview. It is not the request's deadline (D6): reconcile
// reads the whole ledger, about 7 µs a payout on SQLite, so a ledger of
// 700,000 payouts took longer than a request may, and the overview failed
// for every operator of a busy service.
const reconcileTimeout = 30 * time.Minute

// reconcileWait is how long the overview waits for the check it asked for
// before it shows the last finished one: a small ledger's page shows its
// own check, as before; a large one's shows the check running.
const reconcileWait = 3 * time.Second

// reconcileRun is one finished check.
type reconcileRun struct {
	Report *ledger.Report // nil when Err is set
	Err    error
	At     time.Time // when it started
	Took   time.Duration
}

// reconciler runs the overview's checks of the ledger in the background,
// one at a time: a view asks for a check, which starts one unless one is
// running, and waits for it a little (reconcileWait).
type reconciler struct {
	reconcile func(context.Context) (*ledger.Report, error) // Ledger.Reconcile
	now       func() time.Time

	mu      sync.Mutex
	last    *reconcileRun
	running chan struct{} // closed when the running check ends; nil when none runs
}

// check starts a check unless one is running, waits for the running one
// until it ends, wait passes or ctx ends, and returns the last finished
// check (nil if none has finished yet) and whether one is still running.
func (c *reconciler) check(ctx context.Context, wait time.Duration) (*reconcileRun, bool) {
	c.mu.Lock()
	if c.running == nil {
		done := make(chan struct{})
		c.running = done
		go c.run(done)
	}
	done := c.running
	c.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last, c.running != nil
}

func (c *reconciler) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), reconcileTimeout)
	defer cancel()
	at, start := c.now(), time.Now()
	report, err := c.reconcile(ctx)
	c.mu.Lock()
	c.last = &reconcileRun{Report: report, Err: err, At: at, Took: time.Since(start)}
	c.running = nil
	c.mu.Unlock()
	close(done)
}
