package ledger_test

import (
	"context"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faultproxy"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/postgres"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// proxiedPostgres is a fresh PostgreSQL schema, reached two ways: directly
// (for fixtures and for checking what the database holds) and through a
// fault proxy (for the ledger under test).
func proxiedPostgres(t *testing.T) (direct, proxied store.Store, px *faultproxy.Proxy) {
	t.Helper()
	direct, raw := storetest.OpenPostgresURL(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	px, err = faultproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	u.Host = px.Addr()
	proxied, err = postgres.Open(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxied.Close() })
	warm(t, proxied, 4)
	return direct, proxied, px
}

// warm opens n connections in st's pool and leaves them idle, as a busy
// service's pool is: a reset then breaks connections the pool still
// believes in, and the next query on one of them fails.
func warm(t *testing.T, st store.Store, n int) {
	t.Helper()
	var held, release sync.WaitGroup
	held.Add(n)
	release.Add(1)
	errs := make(chan error, n)
	for range n {
		go func() {
			errs <- st.Transact(context.Background(), func(tx store.Tx) error {
				_, err := tx.CoinList(context.Background())
				held.Done()
				release.Wait() // every transaction holds its connection at once
				return err
			})
		}()
	}
	held.Wait()
	release.Done()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 9, item 1: PostgreSQL commits a batch, and every connection is
// reset before the COMMIT's answer arrives, so the ledger cannot tell, and
// its first questions fail on the broken pool. Before the fix (commit
// 8268223, "committedAnyway") a failed question read as "not committed" and
// the batch was applied again payment by payment: every recipient was paid
// twice and every caller told of the second payout. Now the batch is
// settled by asking the database until it answers: each is paid once, and
// the answers are the payouts that committed. A batch of one, which used
// to answer "Internal error." although it had committed, is paid once and
// answered as paid.
func TestLostCommitAnswerPaysOnce(t *testing.T) {
	t.Parallel()
	for _, n := range []int{8, 1} {
		t.Run(map[int]string{8: "batch of 8", 1: "batch of 1"}[n], func(t *testing.T) {
			t.Parallel()
			direct, proxied, px := proxiedPostgres(t)
			e := newEnv(t, func(testing.TB) store.Store { return direct })
			f := e.faucet(t, map[string]int64{"BTC": 10_000})
			recipients := e.users8(t)[:n]
			l := ledger.NewBatched(proxied, e.clock.Now, ledger.BatchConfig{MaxSize: n, MaxWait: 30 * time.Second, Writers: 1})
			defer l.Close()

			fired := px.ResetWhenServerSends([]byte("COMMIT\x00"))
			receipts, errs := payAll(l, payments(f, recipients, 100))
			select {
			case <-fired:
			case <-time.After(5 * time.Second): // it closes once the resets are done
				t.Fatalf("the proxy never saw a COMMIT answered: the fault was not injected (outcomes %v)", errs)
			}
			for i := range receipts {
				if errs[i] != nil || receipts[i] == nil {
					t.Errorf("payment %d: %v, want paid (it committed)", i, errs[i])
				}
			}
			for _, u := range recipients {
				if got := e.balance(t, u.AccountID, "BTC"); got != 100 {
					t.Errorf("%s holds %d, want 100 (paid exactly once)", u.Username, got)
				}
			}
			payouts := e.payouts(t, f)
			if len(payouts) != n {
				t.Errorf("%d payouts, want %d (none twice)", len(payouts), n)
			}
			committed := map[int64]bool{}
			for _, p := range payouts {
				committed[p.ID] = true
			}
			for i, r := range receipts {
				if r != nil && !committed[r.PayoutID] {
					t.Errorf("payment %d answered payout %d, which is not in the database", i, r.PayoutID)
				}
			}
			e.reconciled(t)
		})
	}
}

// Issue 9, item 2: the network stalls with a batch's COMMIT in it, and
// stays stalled past the payments' deadline. The callers are answered by
// their deadline (the outcome unknown: the ledger could not ask), and the
// COMMIT, delivered when the network heals, no longer commits: PostgreSQL
// ended the idle transaction (idle_in_transaction_session_timeout) within
// the ledger's settle margin. Before the fix the callers waited as long as
// the stall lasted and the payouts committed afterwards.
func TestStalledCommitIsAnsweredByTheDeadline(t *testing.T) {
	t.Parallel()
	direct, proxied, px := proxiedPostgres(t)
	e := newEnv(t, func(testing.TB) store.Store { return direct })
	f := e.faucet(t, map[string]int64{"BTC": 10_000})
	recipients := e.users8(t)
	l := ledger.NewBatched(proxied, e.clock.Now, ledger.BatchConfig{MaxSize: 8, MaxWait: 30 * time.Second, Writers: 1})
	defer l.Close()

	stalled := px.StallWhenClientSends([]byte("commit\x00"))
	timeout := ledger.SettleMargin + 2*time.Second
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	receipts, errs := payAllCtx(ctx, l, payments(f, recipients, 100))
	took := time.Since(start)
	select {
	case <-stalled:
	case <-time.After(5 * time.Second):
		t.Fatal("the COMMIT never reached the proxy: the fault was not injected")
	}
	for i := range receipts {
		if drip.ErrorCode(errs[i]) != drip.CodeOutcomeUnknown {
			t.Errorf("payment %d: %v, want the outcome unknown", i, errs[i])
		}
	}
	if took > timeout+time.Second {
		t.Errorf("answered after %s, want by the deadline (%s)", took, timeout)
	}

	// The network heals: the held COMMIT reaches a session PostgreSQL has ended.
	time.Sleep(ledger.SettleMargin)
	px.Stall(false)
	time.Sleep(500 * time.Millisecond)
	if got := len(e.payouts(t, f)); got != 0 {
		t.Errorf("%d payouts committed after their callers were answered, want 0", got)
	}
	if got := e.balance(t, f.AccountID, "BTC"); got != 10_000 {
		t.Errorf("faucet balance %d, want 10000 untouched", got)
	}
	e.reconciled(t)
}
