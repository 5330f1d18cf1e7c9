package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
)

// The suite's part for accounts: passwords, emails, the operator role, the
// second factor, sessions, emailed tokens, recovery codes and the security
// log (D10, D15).

func testUserAccountSettersRoundTrip(t *testing.T, st store.Store) {
	ctx := context.Background()
	u := newUser(t, st, "alice")
	if u.Operator || u.TOTPEnabled || u.TOTPSecret != "" || u.TOTPLastStep != 0 {
		t.Fatalf("new user = %+v; want no operator role and no second factor", u)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if err := tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: u.ID, PasswordHash: "argon2id$new"}); err != nil {
			return err
		}
		if err := tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: u.ID, Email: "alice2@example.com", Verified: false}); err != nil {
			return err
		}
		if err := tx.UserSetOperator(ctx, &store.UserSetOperatorParams{ID: u.ID, Operator: true}); err != nil {
			return err
		}
		return tx.UserSetTOTP(ctx, &store.UserSetTOTPParams{ID: u.ID, Secret: "sealed", Enabled: true})
	})
	got, err := st.UserGetByID(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *u
	want.PasswordHash, want.Email, want.EmailVerified = "argon2id$new", "alice2@example.com", false
	want.Operator, want.TOTPSecret, want.TOTPEnabled = true, "sealed", true
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("user after the setters (-want +got):\n%s", diff)
	}
	// The old email is free again, the new one is taken.
	other := newUser(t, st, "bob")
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: other.ID, Email: "alice2@example.com", Verified: true})
	})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("UserSetEmail to a taken email: err = %v, want ErrConflict", err)
	}
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: 999999, PasswordHash: "x"})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UserSetPassword of an unknown user: err = %v, want ErrNotFound", err)
	}
}

func testUserAcceptTOTPStepOnlyForward(t *testing.T, st store.Store) {
	ctx := context.Background()
	u := newUser(t, st, "alice")
	accept := func(step int64) error {
		return try(st, func(ctx context.Context, tx store.Tx) error {
			return tx.UserAcceptTOTPStep(ctx, &store.UserAcceptTOTPStepParams{ID: u.ID, Step: step})
		})
	}
	if err := accept(100); err != nil {
		t.Fatalf("first step: %v", err)
	}
	for _, step := range []int64{100, 99} {
		if err := accept(step); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("step %d after 100: err = %v, want ErrNotFound", step, err)
		}
	}
	if err := accept(101); err != nil {
		t.Errorf("step 101 after 100: %v", err)
	}
	if got, _ := st.UserGetByID(ctx, u.ID); got.TOTPLastStep != 101 {
		t.Errorf("TOTPLastStep = %d, want 101", got.TOTPLastStep)
	}
	// Two nodes given the same code at once: exactly one accepts it.
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = accept(200) })
	}
	wg.Wait()
	accepted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			accepted++
		case !errors.Is(err, store.ErrNotFound):
			t.Errorf("concurrent accept: %v", err)
		}
	}
	if accepted != 1 {
		t.Errorf("%d concurrent accepts of one step succeeded, want 1", accepted)
	}
}

func testSessions(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice, bob := newUser(t, st, "alice"), newUser(t, st, "bob")
	create := func(u *drip.User, hash string, verified time.Time) int64 {
		var id int64
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			var err error
			id, err = tx.SessionCreate(ctx, &store.SessionCreateParams{
				TokenHash: hash, UserID: u.ID, CreatedAt: t0, ExpiresAt: t0.Add(7 * 24 * time.Hour),
				VerifiedAt: verified, IP: "203.0.113.7", UserAgent: "Firefox",
			})
			return err
		})
		return id
	}
	a1 := create(alice, "hash-a1", time.Time{})
	a2 := create(alice, "hash-a2", t0)
	a3 := create(alice, "hash-a3", t0)
	b1 := create(bob, "hash-b1", t0)

	got, err := st.SessionGet(ctx, "hash-a1")
	if err != nil {
		t.Fatal(err)
	}
	want := &drip.Session{ID: a1, UserID: alice.ID, CreatedAt: t0, LastSeenAt: t0, ExpiresAt: t0.Add(7 * 24 * time.Hour),
		IP: "203.0.113.7", UserAgent: "Firefox"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SessionGet (-want +got):\n%s", diff)
	}
	if _, err := st.SessionGet(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("SessionGet(unknown): err = %v, want ErrNotFound", err)
	}
	// Touch moves last seen forward only; renew replaces the token.
	t1 := t0.Add(time.Minute)
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		if err := tx.SessionTouch(ctx, &store.SessionTouchParams{ID: a1, At: t1}); err != nil {
			return err
		}
		if err := tx.SessionTouch(ctx, &store.SessionTouchParams{ID: a1, At: t0}); err != nil {
			return err
		}
		return tx.SessionRenew(ctx, &store.SessionRenewParams{ID: a1, NewTokenHash: "hash-a1-new", VerifiedAt: t1})
	})
	if _, err := st.SessionGet(ctx, "hash-a1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("old token after renew: err = %v, want ErrNotFound", err)
	}
	got, err = st.SessionGet(ctx, "hash-a1-new")
	if err != nil || got.ID != a1 || !got.LastSeenAt.Equal(t1) || !got.VerifiedAt.Equal(t1) {
		t.Errorf("renewed session = %+v, %v; want id %d, last seen and verified at %v", got, err, a1, t1)
	}
	// Revoking: only one's own live sessions.
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.SessionRevoke(ctx, &store.SessionRevokeParams{UserID: bob.ID, ID: a2, At: t1})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("bob revoking alice's session: err = %v, want ErrNotFound", err)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		return tx.SessionRevoke(ctx, &store.SessionRevokeParams{UserID: alice.ID, ID: a2, At: t1})
	})
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.SessionRevoke(ctx, &store.SessionRevokeParams{UserID: alice.ID, ID: a2, At: t1})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking a revoked session: err = %v, want ErrNotFound", err)
	}
	err = try(st, func(ctx context.Context, tx store.Tx) error {
		return tx.SessionRenew(ctx, &store.SessionRenewParams{ID: a2, NewTokenHash: "hash-a2-new", VerifiedAt: t1})
	})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("renewing a revoked session: err = %v, want ErrNotFound", err)
	}
	if got, _ := st.SessionGet(ctx, "hash-a2"); got == nil || !got.RevokedAt.Equal(t1) {
		t.Errorf("revoked session = %+v; want RevokedAt %v", got, t1)
	}
	ids := func(u *drip.User, at time.Time) []int64 {
		list, err := st.SessionListByUser(ctx, &store.SessionListByUserParams{UserID: u.ID, At: at})
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	if diff := cmp.Diff([]int64{a3, a1}, ids(alice, t1)); diff != "" {
		t.Errorf("alice's live sessions, newest first (-want +got):\n%s", diff)
	}
	if got := ids(alice, t0.Add(8*24*time.Hour)); len(got) != 0 {
		t.Errorf("sessions past their absolute expiry listed: %v", got)
	}
	var n int64
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		var err error
		n, err = tx.SessionRevokeByUser(ctx, &store.SessionRevokeByUserParams{UserID: alice.ID, ExceptID: a1, At: t1})
		return err
	})
	if n != 1 {
		t.Errorf("SessionRevokeByUser ended %d sessions, want 1 (a3)", n)
	}
	if diff := cmp.Diff([]int64{a1}, ids(alice, t1)); diff != "" {
		t.Errorf("alice's sessions after signing out elsewhere (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int64{b1}, ids(bob, t1)); diff != "" {
		t.Errorf("bob's sessions, untouched (-want +got):\n%s", diff)
	}
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		n, err = tx.SessionRevokeByUser(ctx, &store.SessionRevokeByUserParams{UserID: alice.ID, At: t1})
		return err
	})
	if n != 1 || len(ids(alice, t1)) != 0 {
		t.Errorf("SessionRevokeByUser without exception ended %d, left %v; want 1 and none", n, ids(alice, t1))
	}
}

func testAccountTokenUseOnce(t *testing.T, st store.Store) {
	u := newUser(t, st, "alice")
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for _, p := range []store.AccountTokenCreateParams{
			{TokenHash: "verify", Kind: drip.TokenVerifyEmail},
			{TokenHash: "change", Kind: drip.TokenChangeEmail, NewEmail: "new@example.com"},
			{TokenHash: "old", Kind: drip.TokenResetPassword},
		} {
			p.UserID, p.CreatedAt, p.ExpiresAt = u.ID, t0, t0.Add(time.Hour)
			if err := tx.AccountTokenCreate(ctx, &p); err != nil {
				return err
			}
		}
		return nil
	})
	use := func(hash string, kind drip.AccountTokenKind, at time.Time) (*drip.AccountToken, error) {
		var tok *drip.AccountToken
		err := try(st, func(ctx context.Context, tx store.Tx) error {
			var err error
			tok, err = tx.AccountTokenUse(ctx, &store.AccountTokenUseParams{TokenHash: hash, Kind: kind, At: at})
			return err
		})
		return tok, err
	}
	t1 := t0.Add(time.Minute)
	if _, err := use("change", drip.TokenVerifyEmail, t1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a token used as another kind: err = %v, want ErrNotFound", err)
	}
	got, err := use("change", drip.TokenChangeEmail, t1)
	want := &drip.AccountToken{UserID: u.ID, Kind: drip.TokenChangeEmail, NewEmail: "new@example.com",
		CreatedAt: t0, ExpiresAt: t0.Add(time.Hour), UsedAt: t1}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AccountTokenUse (-want +got):\n%s", diff)
	}
	if _, err := use("change", drip.TokenChangeEmail, t1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a used token: err = %v, want ErrNotFound", err)
	}
	if _, err := use("old", drip.TokenResetPassword, t0.Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an expired token: err = %v, want ErrNotFound", err)
	}
	if _, err := use("unknown", drip.TokenVerifyEmail, t1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("an unknown token: err = %v, want ErrNotFound", err)
	}
	// Two uses racing: one wins.
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() { _, errs[i] = use("verify", drip.TokenVerifyEmail, t1) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("racing use: %v", err)
		}
	}
	if won != 1 {
		t.Errorf("%d racing uses of one token succeeded, want 1", won)
	}
}

func testRecoveryCodesSingleUse(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice, bob := newUser(t, st, "alice"), newUser(t, st, "bob")
	replace := func(u *drip.User, hashes ...string) {
		transact(t, st, func(ctx context.Context, tx store.Tx) error {
			return tx.RecoveryCodesReplace(ctx, &store.RecoveryCodesReplaceParams{UserID: u.ID, Hashes: hashes})
		})
	}
	use := func(u *drip.User, hash string) error {
		return try(st, func(ctx context.Context, tx store.Tx) error {
			return tx.RecoveryCodeUse(ctx, &store.RecoveryCodeUseParams{UserID: u.ID, Hash: hash, At: t0})
		})
	}
	remaining := func(u *drip.User) int64 {
		n, err := st.RecoveryCodesRemaining(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	replace(alice, "h1", "h2", "h3")
	replace(bob, "h1")
	if err := use(alice, "h2"); err != nil {
		t.Fatalf("first use: %v", err)
	}
	if err := use(alice, "h2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second use of a code: err = %v, want ErrNotFound", err)
	}
	if err := use(alice, "h9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown code: err = %v, want ErrNotFound", err)
	}
	if n := remaining(alice); n != 2 {
		t.Errorf("alice has %d codes left, want 2", n)
	}
	if n := remaining(bob); n != 1 {
		t.Errorf("bob has %d codes left, want 1 (codes are per user)", n)
	}
	replace(alice, "n1", "n2")
	if err := use(alice, "h1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a replaced code: err = %v, want ErrNotFound", err)
	}
	if n := remaining(alice); n != 2 {
		t.Errorf("alice has %d codes after replacing, want 2", n)
	}
}

func testSecurityLogNewestFirstPerUser(t *testing.T, st store.Store) {
	ctx := context.Background()
	alice, bob := newUser(t, st, "alice"), newUser(t, st, "bob")
	var want []drip.SecurityEvent
	transact(t, st, func(ctx context.Context, tx store.Tx) error {
		for i, kind := range []string{"login", "login_failed", "totp_enabled"} {
			e := drip.SecurityEvent{UserID: alice.ID, Kind: kind, IP: "203.0.113.7", Detail: "d" + kind,
				CreatedAt: t0.Add(time.Duration(i) * time.Second)}
			id, err := tx.SecurityLogAdd(ctx, &e)
			if err != nil {
				return err
			}
			e.ID = id
			want = append([]drip.SecurityEvent{e}, want...)
		}
		_, err := tx.SecurityLogAdd(ctx, &drip.SecurityEvent{UserID: bob.ID, Kind: "login", CreatedAt: t0})
		return err
	})
	got, err := st.SecurityLogList(ctx, &store.SecurityLogListParams{UserID: alice.ID, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SecurityLogList (-want +got):\n%s", diff)
	}
	got, _ = st.SecurityLogList(ctx, &store.SecurityLogListParams{UserID: alice.ID, Limit: 2})
	if len(got) != 2 || got[0].Kind != "totp_enabled" {
		t.Errorf("SecurityLogList limit 2 = %+v; want the two newest", got)
	}
}
