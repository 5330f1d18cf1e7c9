package console

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
)

// The overview's checks of the ledger (D3) run one at a time in the
// background: a view waits a little for the check it asked for, and when
// the check outlasts the wait, the view has the last finished check and
// knows one is running; the check goes on without the view, and the next
// view has its result.
func TestReconcilerRunsInTheBackground(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	broken := &ledger.Report{CoinSums: nil, Payouts: []int64{7}}
	c := &reconciler{now: time.Now, reconcile: func(ctx context.Context) (*ledger.Report, error) {
		if calls.Add(1) == 1 {
			<-release
			return &ledger.Report{}, nil
		}
		return broken, nil
	}}

	// The first check outlasts the wait, and a view that gives up at once
	// (its request ended) does not stop it.
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if last, running := c.check(ended, time.Hour); last != nil || !running {
		t.Fatalf("a view whose request ended: %+v, running %v; want no check finished, one running", last, running)
	}
	if last, running := c.check(context.Background(), 10*time.Millisecond); last != nil || !running {
		t.Fatalf("a view during the first check: %+v, running %v; want no check finished, one running", last, running)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d checks started; want 1: a view waits for the running one rather than start another", n)
	}

	close(release)
	last, running := c.check(context.Background(), time.Minute) // waits for the running one
	if last == nil || running || last.Err != nil || !last.Report.OK() || calls.Load() != 1 {
		t.Fatalf("once the first check ends: %+v, running %v, %d checks; want the first's clean report", last, running, calls.Load())
	}
	// The next view starts a new check, and has its result.
	last, running = c.check(context.Background(), time.Minute)
	if last == nil || running || last.Report != broken || calls.Load() != 2 {
		t.Fatalf("the next view: %+v, running %v, %d checks; want the second check's report", last, running, calls.Load())
	}

	// A check that fails is kept with its error.
	failed := errors.New("database is locked")
	c.reconcile = func(context.Context) (*ledger.Report, error) { return nil, failed }
	if last, _ := c.check(context.Background(), time.Minute); last == nil || !errors.Is(last.Err, failed) {
		t.Fatalf("a failed check: %+v; want its error", last)
	}
}

// The overview says a check is running, rather than show a result, while
// the first check of a large ledger runs; and when a newer one runs, it
// says so beside the last result.
func TestOverviewShowsACheckRunning(t *testing.T) {
	h, err := New(Deps{Accounts: &account.Service{}, BaseURL: "http://localhost:8080"})
	if err != nil {
		t.Fatal(err)
	}
	render := func(d opOverview) string {
		t.Helper()
		var b strings.Builder
		if err := h.pages["operator"].Execute(&b, &page{Title: "Operator", User: &drip.User{Username: "olga"}, Form: map[string]string{}, Data: d}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	first := render(opOverview{Tabs: operatorTabs("overview"), Checking: true})
	if !strings.Contains(first, "A check of the ledger is running") || strings.Contains(first, "Checked ") || strings.Contains(first, `badge on">OK`) {
		t.Errorf("the overview during the first check:\n%s\nwant it running, no result", first)
	}
	newer := render(opOverview{Tabs: operatorTabs("overview"), Report: &ledger.Report{}, CheckedAt: "2026-11-29 21:00:00", Took: "41s", Checking: true})
	for _, want := range []string{"Checked 2026-11-29 21:00:00 UTC, in 41s. A newer check is running: reload to see it.", `badge on">OK`} {
		if !strings.Contains(newer, want) {
			t.Errorf("the overview during a newer check:\n%s\nwant %q", newer, want)
		}
	}
}
