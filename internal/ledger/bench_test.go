package ledger_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// BenchmarkPay measures the ledger alone, without HTTP: 64 concurrent
// callers paying from one hot faucet to 1,000 recipients, with group
// commit capped at each batch size (D5). Durable commits as in production
// (SQLite synchronous=FULL, PostgreSQL synchronous_commit=on).
//
//	go test ./internal/ledger -run '^$' -bench Pay -benchtime 5000x
func BenchmarkPay(b *testing.B) {
	for _, eng := range storetest.Engines(b) {
		for _, size := range []int{1, 10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/batch=%d", eng.Name, size), func(b *testing.B) {
				e := newEnv(b, eng.Open)
				f := e.faucet(b, map[string]int64{"BTC": 1 << 60})
				recipients := benchRecipients(b, e)
				// No busy wait: each batch takes what is queued, up to size.
				payParallel(b, e, ledger.BatchConfig{MaxSize: size, BusyWait: ledger.NoWait}, func(n int64) *ledger.Payment {
					u := recipients[n%int64(len(recipients))]
					return &ledger.Payment{Faucet: f, Recipient: u, To: u.Username, Coin: "BTC", Amount: 1}
				})
			})
		}
	}
}

// BenchmarkPayShape measures the ledger alone, as BenchmarkPay, at the
// default batching, for the shapes of drip bench's payout scenarios: one
// hot faucet; payments spread over 100 faucets (each batch then writes
// near a hundred faucets' rows and index pages, not one's); the hot
// faucet with a new v2 idempotency key a payment (D35); and the hot faucet
// under a per-recipient send limit that no payment reaches, so that each
// batch counts a window for each of its recipients (D41), as drip bench's
// over-limit does.
//
//	go test ./internal/ledger -run '^$' -bench PayShape -benchtime 20000x
func BenchmarkPayShape(b *testing.B) {
	for _, eng := range storetest.Engines(b) {
		for _, shape := range []struct {
			name       string
			faucets    int
			idempotent bool
			limits     []drip.Limit
		}{
			{name: "hot", faucets: 1},
			{name: "spread", faucets: 100},
			{name: "idempotent", faucets: 1, idempotent: true},
			{name: "limited", faucets: 1, limits: []drip.Limit{{Per: drip.PerRecipient, WindowSeconds: 7 * 86400, MaxCount: 1 << 40}}},
		} {
			b.Run(eng.Name+"/"+shape.name, func(b *testing.B) {
				e := newEnv(b, eng.Open)
				faucets := make([]*drip.Faucet, shape.faucets)
				for i := range faucets {
					faucets[i] = e.faucet(b, map[string]int64{"BTC": 1 << 50}, shape.limits...)
				}
				recipients := benchRecipients(b, e)
				payParallel(b, e, ledger.BatchConfig{}, func(n int64) *ledger.Payment {
					u, f := recipients[n%int64(len(recipients))], faucets[n%int64(len(faucets))]
					p := &ledger.Payment{Faucet: f, Recipient: u, To: u.Username, Coin: "BTC", Amount: 1}
					if shape.idempotent {
						p.Idempotency = &drip.Idempotency{Key: fmt.Sprintf("key-%d", n), RequestHash: "h"}
					}
					return p
				})
			})
		}
	}
}

// benchRecipients creates the 1,000 recipients of a benchmark.
func benchRecipients(b *testing.B, e *env) []*drip.User {
	recipients := make([]*drip.User, 1000)
	for i := range recipients {
		recipients[i] = e.user(b, fmt.Sprintf("bench%d", i))
	}
	return recipients
}

// payParallel pays payment(n), n = 1, 2, ..., b.N of them, from 64
// concurrent callers through a ledger batching as cfg, and reports
// payouts/s and the CPU a payout; the ledger must reconcile after.
func payParallel(b *testing.B, e *env, cfg ledger.BatchConfig, payment func(n int64) *ledger.Payment) {
	l := ledger.NewBatched(e.st, nil, cfg)
	defer l.Close()
	var next atomic.Int64
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0))) // 64 concurrent callers
	cpu := storetest.StartCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := l.Pay(context.Background(), payment(next.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "payouts/s")
	cpu.Report(b)
	e.reconciled(b)
}
