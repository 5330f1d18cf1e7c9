package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for users and their addresses.

func testUserGetByEveryKey(t *testing.T, st store.Store) {
	ctx := context.Background()
	// A time with nanoseconds in another zone comes back in UTC, to the microsecond (D30).
	created := time.Date(2026, 3, 14, 16, 9, 26, 123456789, time.FixedZone("CET", 3600))
	var id, acct int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		if acct, err = tx.AccountCreate(ctx, "user", created); err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{
			AccountID: acct, Username: "alice", Email: "alice@example.com",
			PasswordHash: "argon2id$x", EmailVerified: true, CreatedAt: created,
		})
		if err != nil {
			return err
		}
		if err := tx.UserSetPayoutHash(ctx, id, "00112233445566778899aabbccddeeff00112233"); err != nil {
			return err
		}
		return tx.UserAddressAdd(ctx, id, "BTC", "bc1qalice", created)
	})
	want := &drip.User{
		ID: id, AccountID: acct, Username: "alice", Email: "alice@example.com", PasswordHash: "argon2id$x",
		EmailVerified: true, Status: drip.UserActive, PayoutUserHash: "00112233445566778899aabbccddeeff00112233",
		CreatedAt: created.Truncate(time.Microsecond),
	}
	lookups := map[string]func() (*drip.User, error){
		"UserGetByID":         func() (*drip.User, error) { return st.UserGetByID(ctx, id) },
		"UserGetByUsername":   func() (*drip.User, error) { return st.UserGetByUsername(ctx, "alice") },
		"UserGetByEmail":      func() (*drip.User, error) { return st.UserGetByEmail(ctx, "alice@example.com") },
		"UserGetByPayoutHash": func() (*drip.User, error) { return st.UserGetByPayoutHash(ctx, want.PayoutUserHash) },
		"UserGetByAddress":    func() (*drip.User, error) { return st.UserGetByAddress(ctx, "BTC", "bc1qalice") },
	}
	for name, get := range lookups {
		got, err := get()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("%s: CreatedAt in %v, want UTC", name, got.CreatedAt.Location())
		}
	}
	// A user without a payout hash yet reads as "" (not an error).
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		a, err := tx.AccountCreate(ctx, "user", t0)
		if err != nil {
			return err
		}
		id, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: a, Username: "nohash", Email: "nohash@example.com", CreatedAt: t0})
		return err
	})
	got, err := st.UserGetByID(ctx, id)
	if err != nil || got.PayoutUserHash != "" || got.EmailVerified || got.Status != drip.UserActive {
		t.Errorf("UserGetByID(new user without hash) = %+v, %v; want active, unverified, empty hash", got, err)
	}
}

func testUserDuplicatesAreConflicts(t *testing.T, st store.Store) {
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	create := func(username, email string) func(ctx context.Context, tx store.Tx) error {
		return func(ctx context.Context, tx store.Tx) error {
			acct, err := tx.AccountCreate(ctx, "user", t0)
			if err != nil {
				return err
			}
			_, err = tx.UserCreate(ctx, &store.UserCreateParams{AccountID: acct, Username: username, Email: email, CreatedAt: t0})
			return err
		}
	}
	cases := []struct {
		name string
		fn   func(ctx context.Context, tx store.Tx) error
	}{
		{"username taken", create("alice", "other@example.com")},
		{"email taken", create("carol", "alice@example.com")},
		{"payout hash taken", func(ctx context.Context, tx store.Tx) error {
			return tx.UserSetPayoutHash(ctx, bob.ID, alice.PayoutUserHash)
		}},
		{"account taken", func(ctx context.Context, tx store.Tx) error {
			_, err := tx.UserCreate(ctx, &store.UserCreateParams{AccountID: alice.AccountID, Username: "dave", Email: "dave@example.com", CreatedAt: t0})
			return err
		}},
	}
	for _, c := range cases {
		if err := try(st, c.fn); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: err = %v, want ErrConflict", c.name, err)
		}
	}
	// The refused writes left nothing behind.
	if _, err := st.UserGetByUsername(context.Background(), "carol"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UserGetByUsername(carol) after a refused create: err = %v, want ErrNotFound", err)
	}
	if got, _ := st.UserGetByID(context.Background(), bob.ID); got == nil || got.PayoutUserHash != bob.PayoutUserHash {
		t.Errorf("bob after a refused hash change = %+v; want hash %s kept", got, bob.PayoutUserHash)
	}
}

func testUserMissingIsNotFound(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserAddressAdd(ctx, alice.ID, "BTC", "bc1qalice", t0)
	})
	lookups := map[string]func() (*drip.User, error){
		"UserGetByID":                  func() (*drip.User, error) { return st.UserGetByID(ctx, alice.ID+1000) },
		"UserGetByUsername":            func() (*drip.User, error) { return st.UserGetByUsername(ctx, "nobody") },
		"UserGetByUsername wrong case": func() (*drip.User, error) { return st.UserGetByUsername(ctx, "ALICE") },
		"UserGetByEmail":               func() (*drip.User, error) { return st.UserGetByEmail(ctx, "nobody@example.com") },
		"UserGetByPayoutHash":          func() (*drip.User, error) { return st.UserGetByPayoutHash(ctx, fmt.Sprintf("%040x", 999999)) },
		"UserGetByPayoutHash empty":    func() (*drip.User, error) { return st.UserGetByPayoutHash(ctx, "") },
		"UserGetByAddress":             func() (*drip.User, error) { return st.UserGetByAddress(ctx, "BTC", "bc1qnobody") },
		"UserGetByAddress other coin":  func() (*drip.User, error) { return st.UserGetByAddress(ctx, "LTC", "bc1qalice") },
	}
	for name, get := range lookups {
		u, err := get()
		if !errors.Is(err, store.ErrNotFound) || u != nil {
			t.Errorf("%s: (%+v, %v), want (nil, ErrNotFound)", name, u, err)
		}
	}
	for name, fn := range map[string]func(ctx context.Context, tx store.Tx) error{
		"UserSetStatus":     func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, 999999, drip.UserSuspended) },
		"UserSetPayoutHash": func(ctx context.Context, tx store.Tx) error { return tx.UserSetPayoutHash(ctx, 999999, "x") },
	} {
		if err := try(st, fn); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s of an unknown user: err = %v, want ErrNotFound", name, err)
		}
	}
	if got, err := st.UserAddressList(ctx, 999999); err != nil || len(got) != 0 {
		t.Errorf("UserAddressList(unknown user) = %v, %v; want empty", got, err)
	}
}

func testUserSetStatus(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetStatus(ctx, alice.ID, drip.UserSuspended)
	})
	got, err := st.UserGetByID(ctx, alice.ID)
	if err != nil || got.Status != drip.UserSuspended || got.Payable() {
		t.Errorf("alice after suspension = %+v, %v; want suspended and not payable", got, err)
	}
	if got, _ := st.UserGetByID(ctx, bob.ID); got == nil || got.Status != drip.UserActive {
		t.Errorf("bob = %+v; want still active", got)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, alice.ID, drip.UserActive) })
	if got, _ := st.UserGetByID(ctx, alice.ID); got == nil || got.Status != drip.UserActive {
		t.Errorf("alice after reactivation = %+v; want active", got)
	}
	if err := try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserSetStatus(ctx, alice.ID, "banished") }); err == nil {
		t.Error(`UserSetStatus("banished") succeeded; want the CHECK to refuse it`)
	}
}

func testAddressUniquePerCoin(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice := newUser(t, st, "alice")
	bob := newUser(t, st, "bob")
	add := func(u *drip.User, coin, addr string) error {
		return try(st, func(ctx context.Context, tx store.Tx) error { return tx.UserAddressAdd(ctx, u.ID, coin, addr, t0) })
	}
	for _, a := range []struct{ coin, addr string }{{"BTC", "shared1"}, {"DOGE", "Dalice"}, {"BTC", "bc1alice"}} {
		if err := add(alice, a.coin, a.addr); err != nil {
			t.Fatalf("UserAddressAdd(alice, %s, %s): %v", a.coin, a.addr, err)
		}
	}
	if err := add(bob, "BTC", "shared1"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UserAddressAdd of alice's BTC address for bob: err = %v, want ErrConflict", err)
	}
	if err := add(alice, "BTC", "shared1"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("UserAddressAdd of the same address twice: err = %v, want ErrConflict", err)
	}
	// The same string on another coin is another address.
	if err := add(bob, "LTC", "shared1"); err != nil {
		t.Errorf("UserAddressAdd(bob, LTC, shared1): %v, want nil", err)
	}
	if err := add(bob, "NOPE", "x"); err == nil || errors.Is(err, store.ErrConflict) {
		t.Errorf("UserAddressAdd for an unknown coin: err = %v, want a foreign key error", err)
	}
	for _, c := range []struct {
		coin string
		want int64
	}{{"BTC", alice.ID}, {"LTC", bob.ID}} {
		u, err := st.UserGetByAddress(ctx, c.coin, "shared1")
		if err != nil || u.ID != c.want {
			t.Errorf("UserGetByAddress(%s, shared1) = %+v, %v; want user %d", c.coin, u, err, c.want)
		}
	}
	owners, err := st.UserAddressOwners(ctx, "shared1")
	if diff := cmp.Diff([]store.AddressOwner{{Coin: "BTC", UserID: alice.ID}, {Coin: "LTC", UserID: bob.ID}}, owners); err != nil || diff != "" {
		t.Errorf("UserAddressOwners(shared1): %v (-want +got):\n%s", err, diff)
	}
	if owners, err := st.UserAddressOwners(ctx, "nobody's"); err != nil || len(owners) != 0 {
		t.Errorf("UserAddressOwners of an address no one linked = %v, %v; want none", owners, err)
	}
	got, err := st.UserAddressList(ctx, alice.ID)
	if err != nil {
		t.Fatalf("UserAddressList: %v", err)
	}
	if diff := cmp.Diff([]string{"BTC:bc1alice", "BTC:shared1", "DOGE:Dalice"}, got); diff != "" {
		t.Errorf("UserAddressList(alice) (-want +got):\n%s", diff)
	}
	got, _ = st.UserAddressList(ctx, bob.ID)
	if diff := cmp.Diff([]string{"LTC:shared1"}, got); diff != "" {
		t.Errorf("UserAddressList(bob) (-want +got):\n%s", diff)
	}
}
