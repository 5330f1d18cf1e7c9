package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for the anti-fraud refusals.

func testRefusalCountOthers(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	u := newUser(t, st, "mallory")
	other := newUser(t, st, "other")
	var f [6]*drip.Faucet
	for i := range f {
		f[i] = newFaucet(t, st, owner, fmt.Sprintf("key%d", i))
	}
	refusals := []struct {
		user   *drip.User
		faucet *drip.Faucet
		at     time.Time
	}{
		{u, f[1], t0},
		{u, f[2], t0.Add(-48 * time.Hour)},
		{u, f[2], t0},
		{u, f[3], t0},
		{u, f[3], t0}, // the same faucet twice is still one faucet
		{u, f[4], t0.Add(-10 * 24 * time.Hour)},
		{other, f[5], t0},
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, r := range refusals {
			if err := tx.RefusalInsert(ctx, r.user.ID, r.faucet.ID, r.at); err != nil {
				return err
			}
		}
		return nil
	})
	cases := []struct {
		name   string
		user   *drip.User
		faucet *drip.Faucet
		since  time.Time
		want   int64
	}{
		{"others than f1, last week", u, f[1], t0.Add(-7 * 24 * time.Hour), 2},
		{"others than f1, last month", u, f[1], t0.Add(-30 * 24 * time.Hour), 3},
		{"others than f2, last week", u, f[2], t0.Add(-7 * 24 * time.Hour), 2},
		{"others than f0, last week", u, f[0], t0.Add(-7 * 24 * time.Hour), 3},
		{"since is inclusive", u, f[0], t0, 3},
		{"after the last refusal", u, f[0], t0.Add(time.Second), 0},
		{"another user", other, f[0], t0.Add(-time.Hour), 1},
		{"another user, the refusing faucet asks", other, f[5], t0.Add(-time.Hour), 0},
		{"owner never refused", owner, f[0], t0.Add(-30 * 24 * time.Hour), 0},
	}
	for _, c := range cases {
		got, err := st.RefusalCountOthers(ctx, c.user.ID, c.faucet.ID, c.since)
		if err != nil || got != c.want {
			t.Errorf("%s: RefusalCountOthers = %d, %v; want %d", c.name, got, err, c.want)
		}
	}
}
