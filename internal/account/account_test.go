package account

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

func TestAccountSignUpAndVerify(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		if err := f.svc.SignUp(f.ctx, " Alice ", "Alice@Example.com", password, "198.51.100.1"); err != nil {
			t.Fatal(err)
		}
		u, err := f.st.UserGetByUsername(f.ctx, "alice")
		if err != nil || u.EmailVerified || u.Email != "alice@example.com" || u.PasswordHash == password {
			t.Fatalf("signed-up user = %+v, %v; want alice, unverified, password hashed", u, err)
		}
		token := f.mail.link(t, "alice@example.com", "verify")
		if _, _, err := f.svc.Login(f.ctx, "alice", password, "203.0.113.7", "ua"); !errors.Is(err, ErrLoginFailed) {
			t.Errorf("login before verifying: err = %v, want ErrLoginFailed", err)
		}
		if err := f.svc.VerifyEmail(f.ctx, token, "198.51.100.1"); err != nil {
			t.Fatalf("VerifyEmail: %v", err)
		}
		if err := f.svc.VerifyEmail(f.ctx, token, "198.51.100.1"); !errors.Is(err, ErrBadLink) {
			t.Errorf("the link a second time: err = %v, want ErrBadLink", err)
		}
		if u, _ := f.st.UserGetByID(f.ctx, u.ID); !u.EmailVerified {
			t.Error("email not verified after the link")
		}
		f.login("alice@example.com")
		if got, want := f.events(u), "signup login_refused email_verified login"; got != want {
			t.Errorf("security log = %q, want %q", got, want)
		}
		// A link expires.
		if err := f.svc.SignUp(f.ctx, "bob", "bob@example.com", password, ""); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(24 * time.Hour)
		if err := f.svc.VerifyEmail(f.ctx, f.mail.link(t, "bob@example.com", "verify"), ""); !errors.Is(err, ErrBadLink) {
			t.Errorf("a link after 24 h: err = %v, want ErrBadLink", err)
		}
		if err := f.svc.ResendVerification(f.ctx, "bob@example.com", ""); err != nil {
			t.Fatal(err)
		}
		if err := f.svc.VerifyEmail(f.ctx, f.mail.link(t, "bob@example.com", "verify"), ""); err != nil {
			t.Errorf("a resent link: %v", err)
		}
	})
}

func TestAccountSignUpRules(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		cases := []struct{ username, email, password, want string }{
			{"al", "al@example.com", password, "Invalid username"},
			{"Al ice", "al@example.com", password, "Invalid username"},
			{"alice", "not-an-email", password, "Invalid email"},
			{"alice", "alice@example.com", "short pw", "at least 10"},
			{"alice_long", "alice@example.com", "alice_long", "not be your username"},
			{"alice", "alice@example.com", "Alice@example.com", "not be your username or email"},
			{"alice", "alice@example.com", "Password123", "most common"},
			{"alice", "alice@example.com", "zzzzzzzzzzzz", "most common"},
		}
		for _, c := range cases {
			err := f.svc.SignUp(f.ctx, c.username, c.email, c.password, "")
			if drip.ErrorCode(err) != drip.CodeInvalid || !strings.Contains(drip.ErrorMessage(err), c.want) {
				t.Errorf("SignUp(%q, %q, %q) = %v; want invalid, %q", c.username, c.email, c.password, err, c.want)
			}
		}
		if f.mail.count() != 0 {
			t.Errorf("%d emails sent for refused forms", f.mail.count())
		}
		if len(PasswordRules) != 3 {
			t.Errorf("PasswordRules = %q", PasswordRules)
		}
	})
}

// TestAccountSignUpNeverRevealsWhoExists: a taken email or username gets
// the same answer as a free one, in the same time class (each hashes the
// password and sends one email); the address's owner learns what happened.
func TestAccountSignUpNeverRevealsWhoExists(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		timed := func(username, email string) time.Duration {
			start := time.Now()
			if err := f.svc.SignUp(f.ctx, username, email, password, "198.51.100.9"); err != nil {
				t.Fatalf("SignUp(%s, %s) = %v, want nil as for a free one", username, email, err)
			}
			return time.Since(start)
		}
		var fresh, takenEmail, takenName []time.Duration
		for i := range 3 {
			n := string(rune('a' + i))
			fresh = append(fresh, timed("fresh"+n, "fresh"+n+"@example.com"))
			takenEmail = append(takenEmail, timed("other"+n, "alice@example.com"))
			takenName = append(takenName, timed("alice", "new"+n+"@example.com"))
		}
		if m := f.mail.last(t, "alice@example.com"); !strings.Contains(m.Subject, "tried to sign up") || strings.Contains(m.Body, "token=") {
			t.Errorf("email to the taken address: %+v", m)
		}
		if m := f.mail.last(t, "newa@example.com"); !strings.Contains(m.Body, "is taken") || strings.Contains(m.Body, "token=") {
			t.Errorf("email about a taken username: %+v", m)
		}
		if _, err := f.st.UserGetByUsername(f.ctx, "othera"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a user was made for a taken email: %v", err)
		}
		if !strings.Contains(f.events(alice), "signup_attempt") {
			t.Errorf("alice's security log lacks the attempt: %s", f.events(alice))
		}
		// The same time class: the medians within a factor of 4 (each is
		// dominated by the argon2id hash).
		median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[1] }
		mf, me, mn := median(fresh), median(takenEmail), median(takenName)
		t.Logf("sign-up medians: free %v, taken email %v, taken username %v", mf, me, mn)
		for _, m := range []time.Duration{me, mn} {
			if m*4 < mf || mf*4 < m {
				t.Errorf("sign-up times differ by class: free %v, taken %v", mf, m)
			}
		}
	})
}

func TestAccountLoginSucceedsFailsAndIsThrottled(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		f.signUp("bob")
		for _, who := range []string{"alice", "ALICE", "alice@example.com"} {
			token, sess, err := f.svc.Login(f.ctx, who, password, "203.0.113.7", "ua")
			if err != nil || sess.UserID != alice.ID || sess.Pending() {
				t.Fatalf("Login(%s) = %v, %v", who, sess, err)
			}
			if got, err := f.svc.Authenticate(f.ctx, token); err != nil || got.ID != sess.ID {
				t.Errorf("Authenticate(login token) = %v, %v", got, err)
			}
		}
		for _, who := range []string{"nobody", "nobody@example.com", "<script>"} {
			if _, _, err := f.svc.Login(f.ctx, who, password, "203.0.113.8", "ua"); !errors.Is(err, ErrLoginFailed) {
				t.Errorf("Login(%s): err = %v, want ErrLoginFailed", who, err)
			}
		}
		// Five attempts per account per 15 minutes (three were used above,
		// refilling at one per 3 minutes).
		f.clock.Advance(15 * time.Minute)
		for i := range 5 {
			if _, _, err := f.svc.Login(f.ctx, "alice", "wrong password", "203.0.113.7", "ua"); !errors.Is(err, ErrLoginFailed) {
				t.Fatalf("wrong password %d: err = %v, want ErrLoginFailed", i+1, err)
			}
		}
		_, _, err := f.svc.Login(f.ctx, "alice@example.com", password, "192.0.2.1", "ua") // another IP, another name for alice
		var de *drip.Error
		if !errors.As(err, &de) || de.Code != drip.CodeRateLimited || de.RetryAfter <= 0 || de.RetryAfter > 3*time.Minute ||
			!strings.Contains(de.Message, "try again in ") {
			t.Fatalf("sixth attempt: err = %v, want rate limited with a RetryAfter of at most 3 min", err)
		}
		f.clock.Advance(de.RetryAfter)
		if _, _, err := f.svc.Login(f.ctx, "alice", password, "192.0.2.1", "ua"); err != nil {
			t.Errorf("login after the wait: %v", err)
		}
		if got := f.events(alice); strings.Count(got, "login_failed") != 5 || !strings.Contains(got, "login_throttled") {
			t.Errorf("security log = %q; want 5 login_failed and a login_throttled", got)
		}
		// Twenty per IP, whatever the names tried.
		for i := range 20 {
			if _, _, err := f.svc.Login(f.ctx, "guess"+string(rune('a'+i)), "x", "198.51.100.66", "ua"); !errors.Is(err, ErrLoginFailed) {
				t.Fatalf("guess %d: err = %v", i+1, err)
			}
		}
		_, _, err = f.svc.Login(f.ctx, "alice", password, "198.51.100.66", "ua")
		wantCode(t, "the 21st attempt from one IP", err, drip.CodeRateLimited)
		if _, _, err := f.svc.Login(f.ctx, "bob", password, "198.51.100.67", "ua"); err != nil {
			t.Errorf("login from another IP: %v", err)
		}
	})
}

func TestAccountSuspendedUserCannotLogIn(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		token, _ := f.login("alice")
		if err := f.users.SetStatus(f.ctx, alice, drip.UserSuspended); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Authenticate(f.ctx, token); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("a suspended user's session: err = %v, want ErrSessionEnded", err)
		}
		if _, _, err := f.svc.Login(f.ctx, "alice", password, "203.0.113.7", "ua"); !errors.Is(err, ErrLoginFailed) {
			t.Errorf("a suspended user's login: err = %v, want ErrLoginFailed", err)
		}
	})
}

func TestAccountSessionTimeouts(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		f.signUp("alice")
		// Idle: 30 minutes without use ends a session; use keeps it.
		token, _ := f.login("alice")
		for range 4 {
			f.clock.Advance(29 * time.Minute)
			if _, err := f.svc.Authenticate(f.ctx, token); err != nil {
				t.Fatalf("used every 29 min: %v", err)
			}
		}
		f.clock.Advance(30 * time.Minute)
		if _, err := f.svc.Authenticate(f.ctx, token); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("after 30 idle minutes: err = %v, want ErrSessionEnded", err)
		}
		// Absolute: 7 days after login, however used.
		f.clock.Advance(time.Hour) // let the login bucket refill
		token, sess := f.login("alice")
		for f.clock.Now().Add(25 * time.Minute).Before(sess.ExpiresAt) {
			f.clock.Advance(25 * time.Minute)
			if _, err := f.svc.Authenticate(f.ctx, token); err != nil {
				t.Fatalf("at %v: %v", f.clock.Now(), err)
			}
		}
		f.clock.Advance(sess.ExpiresAt.Sub(f.clock.Now()))
		if _, err := f.svc.Authenticate(f.ctx, token); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("at the absolute timeout: err = %v, want ErrSessionEnded", err)
		}
		if got := sess.ExpiresAt.Sub(sess.CreatedAt); got != 7*24*time.Hour {
			t.Errorf("absolute timeout %v, want 7 days", got)
		}
		for _, bad := range []string{"", "not-a-token", token + "x"} {
			if _, err := f.svc.Authenticate(f.ctx, bad); !errors.Is(err, ErrSessionEnded) {
				t.Errorf("Authenticate(%q): err = %v", bad, err)
			}
		}
	})
}

func TestAccountSessionsListRevokeAndLogout(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		t1, _ := f.login("alice")
		t2, s2 := f.login("alice")
		t3, s3 := f.login("alice")
		if t1 == t2 || t2 == t3 || len(t1) != 43 {
			t.Fatalf("session tokens not new at each login: %q %q %q", t1, t2, t3)
		}
		list, err := f.svc.ListSessions(f.ctx, s3)
		if err != nil || len(list) != 3 || !list[0].Current || list[1].Current || list[0].UserAgent != "Firefox/140" {
			t.Fatalf("ListSessions = %+v, %v; want 3, newest (current) first", list, err)
		}
		if err := f.svc.RevokeSession(f.ctx, s3, s2.ID, "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Authenticate(f.ctx, t2); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("a revoked session: err = %v", err)
		}
		bob := f.signUp("bob")
		_, bobSess := f.login("bob")
		wantCode(t, "bob revoking alice's session", f.svc.RevokeSession(f.ctx, bobSess, s3.ID, ""), drip.CodeNotFound)
		n, err := f.svc.RevokeOtherSessions(f.ctx, s3, "203.0.113.7")
		if err != nil || n != 1 {
			t.Errorf("RevokeOtherSessions = %d, %v; want 1", n, err)
		}
		if _, err := f.svc.Authenticate(f.ctx, t1); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("a session signed out elsewhere: err = %v", err)
		}
		if _, err := f.svc.Authenticate(f.ctx, t3); err != nil {
			t.Errorf("the current session after signing out elsewhere: %v", err)
		}
		if err := f.svc.Logout(f.ctx, s3, "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Authenticate(f.ctx, t3); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("after logout: err = %v", err)
		}
		if got, want := f.events(alice), "signup email_verified login login login session_revoked sessions_revoked logout"; got != want {
			t.Errorf("security log = %q, want %q", got, want)
		}
		if !strings.HasSuffix(f.events(bob), "login") {
			t.Errorf("bob's log = %q", f.events(bob))
		}
	})
}

func TestAccountTOTP(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		_, sess := f.login("alice")
		e, err := f.svc.BeginTOTP(f.ctx, sess, "203.0.113.7")
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Secret) != 32 || !strings.HasPrefix(e.URL, "otpauth://totp/drip:alice?") || !strings.Contains(e.URL, "secret="+e.Secret) {
			t.Errorf("enrolment = %+v", e)
		}
		stored, _ := f.st.UserGetByID(f.ctx, alice.ID)
		if stored.TOTPEnabled || stored.TOTPSecret == "" || strings.Contains(stored.TOTPSecret, e.Secret) {
			t.Errorf("pending enrolment stored as %+v; want sealed and off", stored)
		}
		if _, err := f.svc.ConfirmTOTP(f.ctx, sess, "000000", ""); !errors.Is(err, ErrWrongCode) && f.code(e.Secret, 0) != "000000" {
			t.Errorf("confirm with a wrong code: err = %v", err)
		}
		codes, err := f.svc.ConfirmTOTP(f.ctx, sess, f.code(e.Secret, 0), "203.0.113.7")
		if err != nil {
			t.Fatal(err)
		}
		if len(codes) != 10 || len(slices.Compact(slices.Sorted(slices.Values(codes)))) != 10 || len(codes[0]) != 19 {
			t.Errorf("recovery codes = %q; want 10 distinct xxxx-xxxx-xxxx-xxxx", codes)
		}
		if n, _ := f.svc.RecoveryCodesLeft(f.ctx, sess); n != 10 {
			t.Errorf("%d recovery codes stored, want 10", n)
		}
		// The confirming code cannot log in again inside its window.
		confirmCode := f.code(e.Secret, 0)
		t1, pending, err := f.svc.Login(f.ctx, "alice", password, "203.0.113.7", "ua")
		if err != nil || !pending.Pending() {
			t.Fatalf("login with 2FA on = %+v, %v; want a pending session", pending, err)
		}
		if _, err := f.svc.Authenticate(f.ctx, t1); !errors.Is(err, ErrSecondFactorPending) {
			t.Errorf("Authenticate(pending): err = %v, want ErrSecondFactorPending", err)
		}
		if _, err := f.svc.PassSecondFactor(f.ctx, pending, confirmCode, ""); !errors.Is(err, ErrWrongCode) {
			t.Errorf("replay of the confirming code: err = %v, want ErrWrongCode", err)
		}
		f.clock.Advance(30 * time.Second)
		code := f.code(e.Secret, 0)
		t2, err := f.svc.PassSecondFactor(f.ctx, pending, code, "203.0.113.7")
		if err != nil {
			t.Fatal(err)
		}
		if t2 == t1 {
			t.Error("the session token did not change after the second factor")
		}
		if _, err := f.svc.SessionForSecondFactor(f.ctx, t1); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("the pre-2FA token after 2FA: err = %v, want ErrSessionEnded", err)
		}
		full, err := f.svc.Authenticate(f.ctx, t2)
		if err != nil || full.ID != pending.ID || full.Pending() {
			t.Fatalf("Authenticate(new token) = %+v, %v", full, err)
		}
		// The same code again in its window, on another login: refused.
		_, again, _ := f.svc.Login(f.ctx, "alice", password, "203.0.113.7", "ua")
		if _, err := f.svc.PassSecondFactor(f.ctx, again, code, ""); !errors.Is(err, ErrWrongCode) {
			t.Errorf("a code used twice in its window: err = %v, want ErrWrongCode", err)
		}
		// Code attempts are throttled like logins (5 per 15 minutes, one
		// back every 3 minutes): this one is the sixth.
		_, err = f.svc.PassSecondFactor(f.ctx, again, f.code(e.Secret, 30*time.Second), "")
		wantCode(t, "a sixth code in 15 minutes", err, drip.CodeRateLimited)
		f.clock.Advance(3 * time.Minute)
		if _, err := f.svc.PassSecondFactor(f.ctx, again, f.code(e.Secret, 0), ""); err != nil {
			t.Errorf("a current code: %v", err)
		}
		if _, err := f.svc.BeginTOTP(f.ctx, full, ""); drip.ErrorCode(err) != drip.CodeConflict {
			t.Errorf("BeginTOTP with 2FA on: err = %v, want conflict", err)
		}
		if got, want := f.events(alice), "signup email_verified login totp_enrolment_started totp_confirm_failed totp_enabled login second_factor_failed second_factor_passed login second_factor_failed second_factor_passed"; got != want {
			t.Errorf("security log =\n%q, want\n%q", got, want)
		}
	})
}

// TestAccountTOTPReplayAcrossNodes: two nodes over one database take a
// code once between them.
func TestAccountTOTPReplayAcrossNodes(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		f.signUp("alice")
		_, sess := f.login("alice")
		secret, _ := f.enrol(sess)
		other := f.node()
		_, onA, err := f.svc.Login(f.ctx, "alice", password, "203.0.113.7", "ua")
		if err != nil {
			t.Fatal(err)
		}
		_, onB, err := other.Login(f.ctx, "alice", password, "203.0.113.7", "ua")
		if err != nil {
			t.Fatal(err)
		}
		code := f.code(secret, 0)
		if _, err := f.svc.PassSecondFactor(f.ctx, onA, code, ""); err != nil {
			t.Fatalf("node A: %v", err)
		}
		if _, err := other.PassSecondFactor(f.ctx, onB, code, ""); !errors.Is(err, ErrWrongCode) {
			t.Errorf("node B, the same code: err = %v, want ErrWrongCode", err)
		}
		// A code of the next step (a fast phone) passes on B, and then the
		// current step's code no longer does anywhere.
		if _, err := other.PassSecondFactor(f.ctx, onB, f.code(secret, 30*time.Second), ""); err != nil {
			t.Errorf("node B, next step: %v", err)
		}
	})
}

func TestAccountRecoveryCodesSingleUse(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		_, sess := f.login("alice")
		_, codes := f.enrol(sess)
		_, p1, _ := f.svc.Login(f.ctx, "alice", password, "", "ua")
		if _, err := f.svc.PassSecondFactor(f.ctx, p1, strings.ToUpper(codes[3]), ""); err != nil {
			t.Fatalf("a recovery code (typed in capitals): %v", err)
		}
		_, p2, _ := f.svc.Login(f.ctx, "alice", password, "", "ua")
		if _, err := f.svc.PassSecondFactor(f.ctx, p2, codes[3], ""); !errors.Is(err, ErrWrongCode) {
			t.Errorf("a recovery code used twice: err = %v, want ErrWrongCode", err)
		}
		if _, err := f.svc.PassSecondFactor(f.ctx, p2, strings.ReplaceAll(codes[4], "-", " "), ""); err != nil {
			t.Errorf("another recovery code: %v", err)
		}
		if n, _ := f.svc.RecoveryCodesLeft(f.ctx, p2); n != 8 {
			t.Errorf("%d recovery codes left, want 8", n)
		}
		log, _ := f.st.SecurityLogList(f.ctx, &store.SecurityLogListParams{UserID: alice.ID, Limit: 1})
		if log[0].Detail != "recovery code (8 left)" {
			t.Errorf("last security log entry = %+v", log[0])
		}
	})
}

func TestAccountDisableTOTPNeedsACode(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		_, sess := f.login("alice")
		secret, _ := f.enrol(sess)
		if err := f.svc.DisableTOTP(f.ctx, sess, "", ""); !errors.Is(err, ErrWrongCode) {
			t.Errorf("disable without a code: err = %v", err)
		}
		if u, _ := f.st.UserGetByID(f.ctx, alice.ID); !u.TOTPEnabled {
			t.Fatal("2FA turned off without a code")
		}
		if err := f.svc.DisableTOTP(f.ctx, sess, f.code(secret, 0), "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		u, _ := f.st.UserGetByID(f.ctx, alice.ID)
		if u.TOTPEnabled || u.TOTPSecret != "" {
			t.Errorf("after disabling: %+v", u)
		}
		if n, _ := f.svc.RecoveryCodesLeft(f.ctx, sess); n != 0 {
			t.Errorf("%d recovery codes left after disabling", n)
		}
		if _, s, err := f.svc.Login(f.ctx, "alice", password, "", "ua"); err != nil || s.Pending() {
			t.Errorf("login after disabling: %+v, %v; want no second factor", s, err)
		}
		if !strings.HasSuffix(f.events(alice), "totp_disable_failed totp_disabled login") {
			t.Errorf("security log = %q", f.events(alice))
		}
	})
}

func TestAccountRecentlyVerified(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		f.signUp("alice")
		token, sess := f.login("alice")
		if !f.svc.RecentlyVerified(sess) {
			t.Error("a fresh login without 2FA is not recently verified")
		}
		secret, _ := f.enrol(sess)
		// Kept alive, the session passes 15 minutes since its last code.
		for range 2 {
			f.clock.Advance(8 * time.Minute)
			var err error
			if sess, err = f.svc.Authenticate(f.ctx, token); err != nil {
				t.Fatal(err)
			}
		}
		if f.svc.RecentlyVerified(sess) {
			t.Error("recently verified 16 minutes after the last code")
		}
		err := f.svc.ChangePassword(f.ctx, sess, password, "a new passphrase 42", "")
		if !errors.Is(err, ErrReverify) {
			t.Fatalf("ChangePassword without recent 2FA: err = %v, want ErrReverify", err)
		}
		if !errors.Is(f.svc.ChangeEmail(f.ctx, sess, "a2@example.com", ""), ErrReverify) {
			t.Error("ChangeEmail without recent 2FA is not refused")
		}
		token, err = f.svc.PassSecondFactor(f.ctx, sess, f.code(secret, 0), "")
		if err != nil {
			t.Fatal(err)
		}
		if sess, err = f.svc.Authenticate(f.ctx, token); err != nil || !f.svc.RecentlyVerified(sess) {
			t.Errorf("after a new code: %v, recently verified %v", err, f.svc.RecentlyVerified(sess))
		}
	})
}

func TestAccountChangePassword(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		other, _ := f.login("alice")
		token, sess := f.login("alice")
		wantCode(t, "wrong current password", f.svc.ChangePassword(f.ctx, sess, "not it at all", "a new passphrase 42", ""), drip.CodeInvalid)
		wantCode(t, "a common new password", f.svc.ChangePassword(f.ctx, sess, password, "password123", ""), drip.CodeInvalid)
		if err := f.svc.ChangePassword(f.ctx, sess, password, "a new passphrase 42", "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Authenticate(f.ctx, other); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("another session after a password change: err = %v", err)
		}
		if _, err := f.svc.Authenticate(f.ctx, token); err != nil {
			t.Errorf("the session that changed it: %v", err)
		}
		if _, _, err := f.svc.Login(f.ctx, "alice", "a new passphrase 42", "", "ua"); err != nil {
			t.Errorf("login with the new password: %v", err)
		}
		if !strings.Contains(f.mail.last(t, "alice@example.com").Subject, "password was changed") {
			t.Error("no notice of the change")
		}
		if !strings.Contains(f.events(alice), "password_change_failed password_changed") {
			t.Errorf("security log = %q", f.events(alice))
		}
	})
}

func TestAccountPasswordReset(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		old, _ := f.login("alice")
		if err := f.svc.RequestPasswordReset(f.ctx, "nobody@example.com", ""); err != nil {
			t.Errorf("reset of an unknown address: %v, want nil as for a known one", err)
		}
		if m := f.mail.last(t, "nobody@example.com"); strings.Contains(m.Body, "token=") {
			t.Errorf("a reset link sent to an address without an account: %+v", m)
		}
		if err := f.svc.RequestPasswordReset(f.ctx, "ALICE@example.com", "198.51.100.4"); err != nil {
			t.Fatal(err)
		}
		token := f.mail.link(t, "alice@example.com", "reset")
		wantCode(t, "a reset to the username", f.svc.ResetPassword(f.ctx, token, "alice", ""), drip.CodeInvalid)
		if err := f.svc.ResetPassword(f.ctx, token, "a new passphrase 42", "198.51.100.4"); err != nil {
			t.Fatalf("reset after a refused password (the link still works): %v", err)
		}
		if err := f.svc.ResetPassword(f.ctx, token, "another passphrase 7", ""); !errors.Is(err, ErrBadLink) {
			t.Errorf("the link twice: err = %v, want ErrBadLink", err)
		}
		if _, err := f.svc.Authenticate(f.ctx, old); !errors.Is(err, ErrSessionEnded) {
			t.Errorf("a session after a reset: err = %v", err)
		}
		if _, _, err := f.svc.Login(f.ctx, "alice", password, "", "ua"); !errors.Is(err, ErrLoginFailed) {
			t.Errorf("the old password: err = %v", err)
		}
		if _, _, err := f.svc.Login(f.ctx, "alice", "a new passphrase 42", "", "ua"); err != nil {
			t.Errorf("the new password: %v", err)
		}
		// Links expire after an hour.
		_ = f.svc.RequestPasswordReset(f.ctx, "alice@example.com", "")
		f.clock.Advance(time.Hour)
		if err := f.svc.ResetPassword(f.ctx, f.mail.link(t, "alice@example.com", "reset"), "a third passphrase 9", ""); !errors.Is(err, ErrBadLink) {
			t.Errorf("a link after an hour: err = %v", err)
		}
		if !strings.Contains(f.events(alice), "password_reset_requested password_reset login_failed login password_reset_requested") {
			t.Errorf("security log = %q", f.events(alice))
		}
	})
}

func TestAccountChangeEmail(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		f.signUp("bob")
		_, sess := f.login("alice")
		if err := f.svc.ChangeEmail(f.ctx, sess, "bob@example.com", ""); err != nil {
			t.Errorf("change to a taken address: %v, want nil as for a free one", err)
		}
		if m := f.mail.last(t, "bob@example.com"); strings.Contains(m.Body, "token=") {
			t.Errorf("a link sent to a taken address: %+v", m)
		}
		if err := f.svc.ChangeEmail(f.ctx, sess, "Alice.New@example.com", "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.mail.last(t, "alice@example.com").Body, "alice.new@example.com") {
			t.Error("the current address was not told")
		}
		if u, _ := f.st.UserGetByID(f.ctx, alice.ID); u.Email != "alice@example.com" {
			t.Errorf("email changed before the link: %s", u.Email)
		}
		if err := f.svc.VerifyEmail(f.ctx, f.mail.link(t, "alice.new@example.com", "verify"), "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		if u, _ := f.st.UserGetByID(f.ctx, alice.ID); u.Email != "alice.new@example.com" || !u.EmailVerified {
			t.Errorf("after the link: %+v", u)
		}
		if !strings.HasSuffix(f.events(alice), "login email_change_requested email_changed") {
			t.Errorf("security log = %q", f.events(alice))
		}
	})
}

// TestAccountNoSecretInLogs drives every path that handles a secret and
// checks that none (password, TOTP secret, recovery code, session or
// emailed token) is in a line the service logs or in a security log entry.
func TestAccountNoSecretInLogs(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		secrets := []string{password, "a new passphrase 42", "wrong guess 12345"}
		t1, sess := f.login("alice")
		secret, codes := f.enrol(sess)
		secrets = append(secrets, t1, secret)
		secrets = append(secrets, codes...)
		_, _, _ = f.svc.Login(f.ctx, "alice", "wrong guess 12345", "", "ua")
		_, p, _ := f.svc.Login(f.ctx, "alice", password, "", "ua")
		code := f.code(secret, 0)
		t2, err := f.svc.PassSecondFactor(f.ctx, p, code, "")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = f.svc.PassSecondFactor(f.ctx, p, codes[0], "")
		secrets = append(secrets, t2)
		if err := f.svc.ChangePassword(f.ctx, p, password, "a new passphrase 42", ""); err != nil {
			t.Fatal(err)
		}
		_ = f.svc.RequestPasswordReset(f.ctx, "alice@example.com", "")
		secrets = append(secrets, f.mail.link(t, "alice@example.com", "reset"), f.mail.link(t, "alice@example.com", "reset"))
		f.mail.fail = true // the SMTP server down: the service logs it
		if err := f.svc.RequestPasswordReset(f.ctx, "alice@example.com", ""); !errors.Is(err, ErrMailFailed) {
			t.Errorf("reset with the mail server down: err = %v, want ErrMailFailed", err)
		}
		logs := f.logs.String()
		if !strings.Contains(logs, "email not sent") {
			t.Errorf("the mail failure was not logged:\n%s", logs)
		}
		entries, err := f.st.SecurityLogList(f.ctx, &store.SecurityLogListParams{UserID: alice.ID, Limit: 500})
		if err != nil || len(entries) < 10 {
			t.Fatalf("security log: %d entries, %v", len(entries), err)
		}
		var all strings.Builder
		all.WriteString(logs)
		for _, e := range entries {
			all.WriteString(e.Kind + " " + e.IP + " " + e.Detail + "\n")
		}
		for _, s := range secrets {
			if strings.Contains(all.String(), s) {
				t.Errorf("a secret (%.6s...) is in the logs:\n%s", s, all.String())
			}
		}
		if u, _ := f.st.UserGetByID(f.ctx, alice.ID); strings.Contains(u.TOTPSecret, secret) || strings.Contains(u.PasswordHash, "passphrase") {
			t.Errorf("a secret is stored in the clear: %+v", u)
		}
	})
}

// TestAccountTOTPSecretSealedPerUser: a sealed secret opens on every node
// (one server secret) but only for its user, and never equals the secret.
func TestAccountTOTPSecretSealedPerUser(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		sealed, err := f.svc.seal(7, "JBSWY3DPEHPK3PXP")
		if err != nil {
			t.Fatal(err)
		}
		again, _ := f.svc.seal(7, "JBSWY3DPEHPK3PXP")
		if sealed == again || strings.Contains(sealed, "JBSWY3DPEHPK3PXP") {
			t.Errorf("sealed = %q, again %q; want a fresh nonce each time and no plain secret", sealed, again)
		}
		if got, err := f.node().open(7, sealed); err != nil || got != "JBSWY3DPEHPK3PXP" {
			t.Errorf("open on another node = %q, %v", got, err)
		}
		if _, err := f.svc.open(8, sealed); err == nil {
			t.Error("a secret sealed for user 7 opened for user 8")
		}
	})
}

// TestAccountConfirmPasswordReverifies: a user without a second factor
// re-verifies an old session by the password, for a sensitive action.
func TestAccountConfirmPasswordReverifies(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		token, _ := f.login("alice")
		f.clock.Advance(10 * time.Minute)
		if sess, err := f.svc.Authenticate(f.ctx, token); err != nil || !f.svc.RecentlyVerified(sess) {
			t.Error("not recently verified 10 minutes after login")
		}
		f.clock.Advance(6 * time.Minute)
		sess, err := f.svc.Authenticate(f.ctx, token)
		if err != nil || f.svc.RecentlyVerified(sess) {
			t.Fatalf("16 minutes after login: %v, recently verified %v; want false", err, f.svc.RecentlyVerified(sess))
		}
		wantCode(t, "a wrong password", f.svc.ConfirmPassword(f.ctx, sess, "not the password", ""), drip.CodeInvalid)
		if err := f.svc.ConfirmPassword(f.ctx, sess, password, "203.0.113.7"); err != nil {
			t.Fatal(err)
		}
		if sess, err = f.svc.Authenticate(f.ctx, token); err != nil || !f.svc.RecentlyVerified(sess) {
			t.Errorf("after the password again: %v, recently verified %v", err, f.svc.RecentlyVerified(sess))
		}
		if err := f.svc.ChangeEmail(f.ctx, sess, "alice2@example.com", ""); err != nil {
			t.Errorf("a sensitive action after re-verifying: %v", err)
		}
		f.enrol(sess)
		wantCode(t, "ConfirmPassword with 2FA on", f.svc.ConfirmPassword(f.ctx, sess, password, ""), drip.CodeInvalid)
		log, err := f.svc.SecurityLog(f.ctx, sess, 3)
		if err != nil || len(log) != 3 || log[0].Kind != "totp_enabled" || log[2].Kind != "email_change_requested" {
			t.Errorf("SecurityLog(3) = %+v, %v", log, err)
		}
		if !strings.Contains(f.events(alice), "reverify_failed reverified") {
			t.Errorf("security log = %q", f.events(alice))
		}
	})
}

func TestAccountSetOperator(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		if alice.Operator {
			t.Fatal("a signed-up user is an operator")
		}
		if err := f.svc.SetOperator(f.ctx, alice, true); err != nil {
			t.Fatal(err)
		}
		_, sess := f.login("alice")
		if !sess.User.Operator {
			t.Error("the operator role is not on the session's user")
		}
		if err := f.svc.SetOperator(f.ctx, alice, false); err != nil {
			t.Fatal(err)
		}
		if u, _ := f.st.UserGetByID(f.ctx, alice.ID); u.Operator {
			t.Error("the role was not withdrawn")
		}
		if got := f.events(alice); !strings.HasSuffix(got, "operator_granted login operator_withdrawn") {
			t.Errorf("security log = %q", got)
		}
	})
}

// Forms that email someone are limited per address and per caller IP
// (the login buckets' rates): nobody can bomb an address through drip,
// and the refusal is the same whether the address has an account.
func TestAccountMailIsThrottled(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		// An account made without an email, so each address starts unused.
		if _, err := f.users.Create(f.ctx, user.CreateParams{Username: "carol", Email: "carol@example.com", Password: password, Verified: true}); err != nil {
			t.Fatal(err)
		}
		sent := f.mail.count()
		for _, email := range []string{"carol@example.com", "nobody@example.com"} {
			for i := range 5 {
				if err := f.svc.RequestPasswordReset(f.ctx, email, "198.51.100.7"); err != nil {
					t.Fatalf("reset request %d for %s: %v", i+1, email, err)
				}
			}
			err := f.svc.RequestPasswordReset(f.ctx, email, "198.51.100.8")
			wantCode(t, "a 6th reset request for "+email, err, drip.CodeRateLimited)
			if err := f.svc.ResendVerification(f.ctx, email, "198.51.100.8"); drip.ErrorCode(err) != drip.CodeRateLimited {
				t.Errorf("a resend to %s after 5 resets: %v, want throttled", email, err)
			}
		}
		if got := f.mail.count() - sent; got != 10 {
			t.Errorf("%d emails sent, want 10 (5 to each address)", got)
		}
		// One IP: 20 emails in 15 minutes to any addresses, then a wait.
		for i := range 10 {
			if err := f.svc.RequestPasswordReset(f.ctx, fmt.Sprintf("x%d@example.com", i), "198.51.100.7"); err != nil {
				t.Fatalf("reset request to x%d: %v", i, err)
			}
		}
		err := f.svc.SignUp(f.ctx, "bob", "bob@example.com", password, "198.51.100.7")
		wantCode(t, "a 21st email from one IP", err, drip.CodeRateLimited)
		if de := (*drip.Error)(nil); errors.As(err, &de) && (de.RetryAfter <= 0 || !strings.Contains(de.Message, "try again in")) {
			t.Errorf("throttled sign-up: %+v, want a wait in the message", de)
		}
		if _, err := f.st.UserGetByUsername(f.ctx, "bob"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a throttled sign-up made a user: %v", err)
		}
		f.clock.Advance(15 * time.Minute)
		if err := f.svc.SignUp(f.ctx, "bob", "bob@example.com", password, "198.51.100.7"); err != nil {
			t.Errorf("sign-up after the wait: %v", err)
		}
	})
}

// New recovery codes need an authenticator code, not a recovery code; the
// old codes stop working at once and the new ones work.
func TestAccountRegenerateRecoveryCodes(t *testing.T) {
	engines(t, func(t *testing.T, f *fixture) {
		alice := f.signUp("alice")
		_, sess := f.login("alice")
		secret, old := f.enrol(sess)
		if _, err := f.svc.RegenerateRecoveryCodes(f.ctx, sess, old[0], ""); drip.ErrorCode(err) != drip.CodeInvalid {
			t.Fatalf("new codes with a recovery code: %v, want refused", err)
		}
		if n, _ := f.svc.RecoveryCodesLeft(f.ctx, sess); n != 10 {
			t.Errorf("a refused regeneration used up a recovery code: %d left", n)
		}
		fresh, err := f.svc.RegenerateRecoveryCodes(f.ctx, sess, f.code(secret, 0), "")
		if err != nil {
			t.Fatalf("new codes: %v", err)
		}
		if len(fresh) != 10 || fresh[0] == old[0] {
			t.Fatalf("new codes %v, old %v", fresh, old)
		}
		_, p1, _ := f.svc.Login(f.ctx, "alice", password, "", "ua")
		if _, err := f.svc.PassSecondFactor(f.ctx, p1, old[1], ""); !errors.Is(err, ErrWrongCode) {
			t.Errorf("an old recovery code after regeneration: %v, want ErrWrongCode", err)
		}
		if _, err := f.svc.PassSecondFactor(f.ctx, p1, fresh[1], ""); err != nil {
			t.Errorf("a new recovery code: %v", err)
		}
		if !strings.Contains(f.events(alice), "recovery_codes_replaced") {
			t.Errorf("the security log lacks the regeneration: %s", f.events(alice))
		}
	})
}
