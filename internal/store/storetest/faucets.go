package storetest

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for faucets: creation, key rotation (D13), settings
// (D38, D43) and locks.

func testFaucetCreateAndGet(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	rules := drip.Rules{AntiFraud: true, TrustRank: 20, NegativeRank: 50, Blacklist: []string{"mallory"}}
	var id, acct int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		if acct, err = tx.AccountCreate(ctx, "faucet", t0); err != nil {
			return err
		}
		id, err = tx.FaucetCreate(ctx, &store.FaucetCreateParams{
			OwnerID: owner.ID, AccountID: acct, Name: "Drops", Domain: "drops.example.com",
			URL: "https://drops.example.com/claim", APIKeyHash: "key1", Rules: rules, CreatedAt: t0,
		})
		return err
	})
	want := &drip.Faucet{ID: id, OwnerID: owner.ID, OwnerStatus: drip.UserActive, AccountID: acct, Name: "Drops",
		Domain: "drops.example.com", URL: "https://drops.example.com/claim", CreatedAt: t0, Rules: rules,
		Settings: drip.DefaultSettings}
	got, err := st.FaucetGetByID(ctx, id)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	if diff := cmp.Diff(want, got, faucetOpts); diff != "" {
		t.Errorf("FaucetGetByID (-want +got):\n%s", diff)
	}
	if got, err := st.FaucetGetByKeyHash(ctx, "key1"); err != nil || got.ID != id {
		t.Errorf("FaucetGetByKeyHash(key1) = %+v, %v; want faucet %d", got, err, id)
	}
	// The owner's status is read with the faucet, as it is now: a key of a
	// suspended owner is refused from the moment of the suspension (D21).
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetStatus(ctx, owner.ID, drip.UserSuspended)
	})
	if got, err := st.FaucetGetByKeyHash(ctx, "key1"); err != nil || got.OwnerStatus != drip.UserSuspended {
		t.Errorf("after suspending the owner: FaucetGetByKeyHash = %+v, %v; want OwnerStatus suspended", got, err)
	}
	if f, err := st.FaucetGetByID(ctx, id+1000); !errors.Is(err, store.ErrNotFound) || f != nil {
		t.Errorf("FaucetGetByID(unknown) = %+v, %v; want nil, ErrNotFound", f, err)
	}
	if f, err := st.FaucetGetByKeyHash(ctx, "nokey"); !errors.Is(err, store.ErrNotFound) || f != nil {
		t.Errorf("FaucetGetByKeyHash(unknown) = %+v, %v; want nil, ErrNotFound", f, err)
	}
	// Key hashes and accounts are one per faucet.
	for name, p := range map[string]store.FaucetCreateParams{
		"same key":     {OwnerID: owner.ID, Name: "B", Domain: "b.example.com", URL: "https://b.example.com/", APIKeyHash: "key1", CreatedAt: t0},
		"same account": {OwnerID: owner.ID, AccountID: acct, Name: "C", Domain: "c.example.com", URL: "https://c.example.com/", APIKeyHash: "key3", CreatedAt: t0},
	} {
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			if p.AccountID == 0 {
				a, err := tx.AccountCreate(ctx, "faucet", t0)
				if err != nil {
					return err
				}
				p.AccountID = a
			}
			_, err := tx.FaucetCreate(ctx, &p)
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("FaucetCreate with the %s: err = %v, want ErrConflict", name, err)
		}
	}
}

func testFaucetKeyRotation(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "old")
	other := newFaucet(t, st, owner, "otherkey")
	findsFaucet := func(hash string, want int64) {
		t.Helper()
		got, err := st.FaucetGetByKeyHash(ctx, hash)
		switch {
		case want == 0 && !errors.Is(err, store.ErrNotFound):
			t.Errorf("FaucetGetByKeyHash(%s) = %+v, %v; want ErrNotFound", hash, got, err)
		case want != 0 && (err != nil || got.ID != want):
			t.Errorf("FaucetGetByKeyHash(%s) = %+v, %v; want faucet %d", hash, got, err, want)
		}
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetConfirmKey with nothing pending: err = %v, want ErrNotFound", err)
	}
	findsFaucet("old", f.ID)

	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "new") })
	// D13: both keys work until the rotation is confirmed.
	findsFaucet("old", f.ID)
	findsFaucet("new", f.ID)
	findsFaucet("otherkey", other.ID)

	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) })
	findsFaucet("old", 0) // dead the moment the rotation is confirmed
	findsFaucet("new", f.ID)
	findsFaucet("otherkey", other.ID)

	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, f.ID) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetConfirmKey a second time: err = %v, want ErrNotFound", err)
	}
	findsFaucet("new", f.ID)

	// Rotating again before confirming replaces the pending key.
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "next1") })
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "next2") })
	findsFaucet("next1", 0)
	findsFaucet("next2", f.ID)
	findsFaucet("new", f.ID)

	for name, fn := range map[string]func(ctx context.Context, tx store.Tx) error{
		"FaucetSetPendingKey": func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, 999999, "x") },
		"FaucetConfirmKey":    func(ctx context.Context, tx store.Tx) error { return tx.FaucetConfirmKey(ctx, 999999) },
	} {
		if err := try(st, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of an unknown faucet: err = %v, want ErrNotFound", name, err)
		}
	}
	// A pending key cannot be another faucet's key.
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, other.ID, "next2") }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("FaucetSetPendingKey to another faucet's pending key: err = %v, want ErrConflict", err)
	}
}

func testFaucetUpdateSettingsRoundTrips(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	bystander := newFaucet(t, st, owner, "key2")
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetSetPendingKey(ctx, f.ID, "pending") })

	want := *f
	want.Name, want.Domain, want.URL = "Renamed", "renamed.example.com", "https://renamed.example.com/x"
	want.IPWhitelist = []netip.Prefix{
		netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("198.51.100.7/32"), netip.MustParsePrefix("2001:db8::/32"),
	}
	want.Limits = []drip.Limit{
		{Coin: "BTC", Per: drip.PerIP, WindowSeconds: 60, MaxCount: 3},
		{Per: drip.PerFaucet, WindowSeconds: 3600, MaxAmount: 5000},
		{Coin: "DOGE", Per: drip.PerRecipient, WindowSeconds: 86400, MaxCount: 2, MaxAmount: 9000},
	}
	want.Rules = drip.Rules{AntiFraud: false, TrustRank: 40, NegativeRank: 10,
		Whitelist: []string{"alice"}, Blacklist: []string{"10.0.0.0/8", "bob@example.com"}}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &want) })

	got, err := st.FaucetGetByID(ctx, f.ID)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	if diff := cmp.Diff(&want, got, faucetOpts); diff != "" {
		t.Errorf("faucet after FaucetUpdateSettings (-want +got):\n%s", diff)
	}
	if got, err := st.FaucetGetByKeyHash(ctx, "key"); err != nil || got.ID != f.ID {
		t.Errorf("FaucetGetByKeyHash after a settings update = %+v, %v; want the key kept", got, err)
	}
	if got, err := st.FaucetGetByKeyHash(ctx, "pending"); err != nil || got.ID != f.ID {
		t.Errorf("FaucetGetByKeyHash(pending) after a settings update = %+v, %v; want the pending key kept", got, err)
	}
	if got, _ := st.FaucetGetByID(ctx, bystander.ID); got == nil || got.Name != bystander.Name || len(got.Limits) != 0 {
		t.Errorf("another faucet after the update = %+v; want it untouched", got)
	}

	// Clearing the lists clears them.
	cleared := want
	cleared.IPWhitelist, cleared.Limits, cleared.Rules = nil, nil, drip.DefaultRules
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &cleared) })
	got, _ = st.FaucetGetByID(ctx, f.ID)
	if diff := cmp.Diff(&cleared, got, faucetOpts); diff != "" {
		t.Errorf("faucet after clearing its lists (-want +got):\n%s", diff)
	}

	missing := want
	missing.ID = 999999
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &missing) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetUpdateSettings of an unknown faucet: err = %v, want ErrNotFound", err)
	}
}

func testFaucetSettingsAndLowBalanceRoundTrip(t *testing.T, st store.Store) {
	ctx := context.Background()
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	bystander := newFaucet(t, st, owner, "key2")

	// A new faucet has the default settings and the alert off; its lists
	// come back empty, not nil, so that v2 replies hold [] and {} (D38).
	wantDefault := drip.LowBalance{Thresholds: map[string]int64{}}
	if diff := cmp.Diff(drip.DefaultSettings, f.Settings); diff != "" {
		t.Errorf("settings of a new faucet (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDefault, f.LowBalance); diff != "" {
		t.Errorf("low-balance alert of a new faucet (-want +got):\n%s", diff)
	}

	want := *f
	want.Settings = drip.Settings{
		Description:  "Gouttes gratuites — 每小时一次 💧 <b>\"free\" & fair</b>\n\ttabbed",
		TimerMinutes: 1440,
		Currencies:   []string{"DOGE", "BTC"},
		Categories:   []string{"games", "bitcoin"},
	}
	want.LowBalance = drip.LowBalance{Enabled: true, Thresholds: map[string]int64{"BTC": 5000, "DOGE": 1}}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &want) })
	for name, get := range map[string]func() (*drip.Faucet, error){
		"FaucetGetByID":      func() (*drip.Faucet, error) { return st.FaucetGetByID(ctx, f.ID) },
		"FaucetGetByKeyHash": func() (*drip.Faucet, error) { return st.FaucetGetByKeyHash(ctx, "key") },
	} {
		got, err := get()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(&want, got, faucetOpts); diff != "" {
			t.Errorf("%s after FaucetUpdateSettings (-want +got):\n%s", name, diff)
		}
	}
	if got, err := st.FaucetGetByID(ctx, bystander.ID); err != nil ||
		!cmp.Equal(drip.DefaultSettings, got.Settings) || !cmp.Equal(wantDefault, got.LowBalance) {
		t.Errorf("another faucet after the update = %+v, %v; want its defaults kept", got, err)
	}

	// Nil lists and maps are stored as empty ones and read back so.
	cleared := want
	cleared.Settings = drip.Settings{TimerMinutes: 1}
	cleared.LowBalance = drip.LowBalance{}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetUpdateSettings(ctx, &cleared) })
	got, err := st.FaucetGetByID(ctx, f.ID)
	if err != nil {
		t.Fatalf("FaucetGetByID: %v", err)
	}
	wantSettings := drip.Settings{TimerMinutes: 1, Currencies: []string{}, Categories: []string{}}
	if diff := cmp.Diff(wantSettings, got.Settings); diff != "" {
		t.Errorf("settings after clearing them (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDefault, got.LowBalance); diff != "" {
		t.Errorf("low-balance alert after clearing it (-want +got):\n%s", diff)
	}
}

func testFaucetListByOwner(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	nobody := newUser(t, st, "nobody")
	a1 := newFaucet(t, st, alice, "a1")
	b1 := newFaucet(t, st, bob, "b1")
	a2 := newFaucet(t, st, alice, "a2")

	for _, c := range []struct {
		owner *drip.User
		want  []drip.Faucet
	}{{alice, []drip.Faucet{*a1, *a2}}, {bob, []drip.Faucet{*b1}}, {nobody, nil}} {
		got, err := st.FaucetListByOwner(ctx, c.owner.ID)
		if err != nil {
			t.Fatalf("FaucetListByOwner(%s): %v", c.owner.Username, err)
		}
		if diff := cmp.Diff(c.want, got, faucetOpts); diff != "" {
			t.Errorf("FaucetListByOwner(%s) (-want +got):\n%s", c.owner.Username, diff)
		}
	}
}

func testFaucetLock(t *testing.T, st store.Store) {
	owner := newUser(t, st, "owner")
	f := newFaucet(t, st, owner, "key")
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetLock(ctx, f.ID) })
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.FaucetLock(ctx, 999999) }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("FaucetLock of an unknown faucet: err = %v, want ErrNotFound", err)
	}
}
