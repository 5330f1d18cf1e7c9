package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/dripfaucet/drip/internal/store"
)

// growthChunk is how many payouts one bulk-load transaction stores.
const growthChunk = 100_000

// runGrowth measures hot sends at the largest concurrency and /payouts
// count=100 reads, one at a time, from a faucet with each number of payouts
// already stored, bulk-loading the difference before each step. Each step
// measures both once a round (Config.Rounds), in turn, so that a step's
// figures can be summed up as medians: one 10 s run a step read a 10M
// step anywhere from 0.88 to 1.08 of the empty one (BENCHMARKS.md, round
// forty). The sends of a step's earlier rounds add to what its later ones
// find stored: about 150,000 payouts a round at 15,000 a second, small
// beside a 10M step.
func (b *bench) runGrowth(ctx context.Context, f *faucetFix) error {
	sizes := slices.Clone(b.cfg.GrowthSizes)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	var stored int64
	for _, size := range sizes {
		if size > stored {
			if err := b.bulkLoad(ctx, f, stored, size); err != nil {
				return err
			}
			stored = size
		}
		for round := 1; round <= b.cfg.Rounds; round++ {
			b.round = round
			if err := b.growthStep(ctx, f, size); err != nil {
				return err
			}
		}
	}
	return nil
}

// growthStep is one round of a growth step: the sends, then the reads.
func (b *bench) growthStep(ctx context.Context, f *faucetFix, size int64) error {
	conc := slices.Max(b.cfg.Concurrency)
	send := &scenario{name: "send", sendStatuses: []int{200}}
	run, err := b.run(ctx, send, hotWorkload(b, f), runSpec{scenario: "send", mode: "closed", concurrency: conc})
	if err != nil {
		return err
	}
	run.Stored, run.CeilingRatio = &size, b.ratio(run, runSpec{mode: "closed", concurrency: conc})
	b.report.Growth = append(b.report.Growth, run)

	list := f.payouts()
	reads := &workload{next: func(uint64, bool) request { return list }}
	run, err = b.run(ctx, &scenario{name: "payouts"}, reads, runSpec{scenario: "payouts", mode: "closed", concurrency: 1})
	if err != nil {
		return err
	}
	run.Stored, run.CeilingRatio = &size, b.ratio(run, runSpec{mode: "closed", concurrency: 1})
	b.report.Growth = append(b.report.Growth, run)
	return nil
}

// bulkLoad stores payouts from f until it has to more than it had, in
// transactions of growthChunk, dated two days back so no run's window
// counts them.
func (b *bench) bulkLoad(ctx context.Context, f *faucetFix, from, to int64) error {
	start := time.Now()
	at := start.Add(-48 * time.Hour)
	for done := from; done < to; {
		n := min(growthChunk, to-done)
		err := b.app.Store.Transact(ctx, func(tx store.Tx) error {
			// Not a product path: the store offers it to the bench only.
			bl, ok := tx.(store.BulkLoader)
			if !ok {
				return fmt.Errorf("the %s store cannot load payouts in bulk", b.app.Store.Engine())
			}
			return bl.PayoutBulkLoad(ctx, &store.PayoutBulkLoadParams{
				FaucetID: f.f.ID, FirstRecipientID: b.fix.firstID, LastRecipientID: b.fix.lastID,
				Coin: coin, Amount: amount, Count: n, CreatedAt: at,
			})
		})
		if err != nil {
			return fmt.Errorf("bulk load: %w", err)
		}
		done += n
		if done == to || done%(10*growthChunk) == 0 {
			b.logf("growth: %d of %d payouts stored (%s)", done, to, time.Since(start).Round(time.Second))
		}
	}
	b.recipientBalances = nil // the load paid them
	return nil
}
