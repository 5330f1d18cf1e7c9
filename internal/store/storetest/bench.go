package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// BenchPayoutBatch measures the store's side of one group commit alone:
// a transaction that opens the books of a batch of size payouts from one
// faucet to recipients taken in turn (PayoutsOpen), writes the batch with
// an event per payout (PayoutsInsert), and commits. One caller, so the
// figure is the work of a batch without the ledger, HTTP or contention;
// it reports the process's and the machine's CPU per payout (the
// machine's takes in PostgreSQL's processes). idempotent gives every
// payout a v2 idempotency key (D35), as v2 sends do.
func BenchPayoutBatch(b *testing.B, st store.Store, size int, idempotent bool) {
	owner := newUser(b, st, "benchowner")
	f := newFaucet(b, st, owner, "benchkey")
	deposit(b, st, f.AccountID, "BTC", 1<<60)
	recipients := make([]*drip.User, 1000)
	for i := range recipients {
		recipients[i] = newUser(b, st, fmt.Sprintf("bench%d", i))
	}
	payments := make([]payment, size)
	next := 0
	at := time.Now()
	b.ResetTimer()
	cpu := StartCPU()
	for range b.N {
		for i := range payments {
			payments[i] = payment{recipients[next%len(recipients)], "BTC", 1}
			next++
		}
		transact(b, st, func(ctx context.Context, tx store.Tx) error {
			batch, err := newBatch(ctx, tx, f, at, payments...)
			if err != nil {
				return err
			}
			for _, p := range batch.Payouts {
				batch.Events = append(batch.Events, drip.Event{ID: fmt.Sprintf("evt_%d", p.Payout.ID), FaucetID: f.ID,
					Type: drip.EventPayoutSent, Data: []byte(`{"payout_id":1,"amount":"0.00000001"}`), CreatedAt: at})
				if idempotent {
					batch.Idempotency = append(batch.Idempotency, drip.Idempotency{FaucetID: f.ID,
						Key: fmt.Sprintf("%x-%d", p.Payout.ID*2654435761%1000003, p.Payout.ID), RequestHash: fmt.Sprintf("%064x", p.Payout.ID),
						PayoutID: p.Payout.ID, Coin: "BTC", Balance: 1 << 50, PayoutUserHash: fmt.Sprintf("%040x", p.Payout.RecipientID),
						RateRemaining: 59.5, CreatedAt: at})
				}
			}
			return tx.PayoutsInsert(ctx, batch)
		})
	}
	b.StopTimer()
	cpu.Report(b, size)
	if got := balance(b, st, f.AccountID, "BTC"); got != 1<<60-int64(b.N*size) {
		b.Errorf("faucet balance %d after %d payouts of 1", got, b.N*size)
	}
}
