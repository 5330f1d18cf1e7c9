package account

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

// Session is a live web session with its user, as Authenticate finds it.
type Session struct {
	drip.Session
	User      *drip.User
	tokenHash string
}

// Pending reports whether the login still waits for its second factor. A
// login without one is verified at once, so a session never verified
// waited for one; if the factor was turned off meanwhile, it stays
// pending (PassSecondFactor refuses it) and its holder logs in again.
func (s *Session) Pending() bool { return s.VerifiedAt.IsZero() }

// touchEvery bounds the writes of last-seen times: a session used several
// times a minute is written once, which makes the idle timeout exact to a
// minute.
const touchEvery = time.Minute

// Login checks a username or email and password, and opens a session: its
// token (new at every login, D15) goes into the cookie. A user with a
// second factor gets a session that waits for it (Pending; pass it with
// PassSecondFactor). Attempts are throttled per IP and per account before
// the password is checked, so parallel guesses cannot slip past a count
// kept after it; an attempt over a limit is refused at once with its
// RetryAfter ("try again in N s").
func (s *Service) Login(ctx context.Context, identifier, password, ip, userAgent string) (string, *Session, error) {
	if d, err := s.perIP.Allow(ctx, "login-ip:"+ip); err != nil {
		return "", nil, err
	} else if !d.Allowed {
		return "", nil, throttled(d.RetryAfter)
	}
	u, err := s.lookup(ctx, identifier)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", nil, err
	}
	// A user is counted under its id, however named, so that alternating
	// its email and its username gains nothing.
	key := "login-name:" + strings.ToLower(strings.TrimSpace(identifier))
	if u != nil {
		key = "login-user:" + strconv.FormatInt(u.ID, 10)
	}
	if d, err := s.perAccount.Allow(ctx, key); err != nil {
		return "", nil, err
	} else if !d.Allowed {
		if u != nil {
			if err := s.record(ctx, u.ID, "login_throttled", ip, ""); err != nil {
				return "", nil, err
			}
		}
		return "", nil, throttled(d.RetryAfter)
	}
	if u == nil || u.PasswordHash == "" {
		user.CheckPassword(user.DummyHash, password) // the time a known user's check takes
		return "", nil, ErrLoginFailed
	}
	if !user.CheckPassword(u.PasswordHash, password) {
		if err := s.record(ctx, u.ID, "login_failed", ip, "wrong password"); err != nil {
			return "", nil, err
		}
		return "", nil, ErrLoginFailed
	}
	if u.Status != drip.UserActive || !u.EmailVerified {
		reason := "account suspended"
		if u.Status == drip.UserActive {
			reason = "email not verified"
		}
		if err := s.record(ctx, u.ID, "login_refused", ip, reason); err != nil {
			return "", nil, err
		}
		return "", nil, ErrLoginFailed
	}
	token := randomToken()
	now := s.now()
	p := &store.SessionCreateParams{TokenHash: hashToken(token), UserID: u.ID, CreatedAt: now,
		ExpiresAt: now.Add(s.cfg.AbsoluteTimeout), IP: ip, UserAgent: truncate(userAgent, 512)}
	detail := "password; second factor to pass"
	if !u.TOTPEnabled {
		p.VerifiedAt, detail = now, "password"
	}
	var id int64
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		if id, err = tx.SessionCreate(ctx, p); err != nil {
			return err
		}
		return logEvent(ctx, tx, u.ID, "login", ip, detail+"; "+truncate(userAgent, 200), now)
	})
	if err != nil {
		return "", nil, err
	}
	sess := &Session{Session: drip.Session{ID: id, UserID: u.ID, CreatedAt: now, LastSeenAt: now, ExpiresAt: p.ExpiresAt,
		VerifiedAt: p.VerifiedAt, IP: ip, UserAgent: p.UserAgent}, User: u, tokenHash: p.TokenHash}
	return token, sess, nil
}

// lookup finds the user an identifier names: an email if it has an @,
// else a username.
func (s *Service) lookup(ctx context.Context, identifier string) (*drip.User, error) {
	identifier = strings.ToLower(strings.TrimSpace(identifier))
	if strings.Contains(identifier, "@") {
		return s.st.UserGetByEmail(ctx, identifier)
	}
	if !user.ValidUsername(identifier) {
		return nil, store.ErrNotFound
	}
	return s.st.UserGetByUsername(ctx, identifier)
}

// Authenticate finds the session of a cookie's token: ErrSessionEnded when
// there is none, it was revoked, it was idle longer than the idle timeout
// or is past its absolute timeout, or its user is suspended;
// ErrSecondFactorPending while its login waits for the second factor. It
// records the session's use (at most once a minute).
func (s *Service) Authenticate(ctx context.Context, token string) (*Session, error) {
	sess, err := s.SessionForSecondFactor(ctx, token)
	if err != nil {
		return nil, err
	}
	if sess.Pending() {
		return nil, ErrSecondFactorPending
	}
	return sess, nil
}

// SessionForSecondFactor is Authenticate for the page that asks for the
// second factor: it also returns a session whose login waits for it.
func (s *Service) SessionForSecondFactor(ctx context.Context, token string) (*Session, error) {
	if token == "" {
		return nil, ErrSessionEnded
	}
	hash := hashToken(token)
	ds, err := s.st.SessionGet(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrSessionEnded
	}
	if err != nil {
		return nil, err
	}
	now := s.now()
	if !ds.RevokedAt.IsZero() || !now.Before(ds.ExpiresAt) || now.Sub(ds.LastSeenAt) >= s.cfg.IdleTimeout {
		return nil, ErrSessionEnded
	}
	u, err := s.st.UserGetByID(ctx, ds.UserID)
	if err != nil {
		return nil, err
	}
	if u.Status != drip.UserActive {
		return nil, ErrSessionEnded
	}
	if now.Sub(ds.LastSeenAt) >= touchEvery {
		err := s.st.Transact(ctx, func(tx store.Tx) error {
			return tx.SessionTouch(ctx, &store.SessionTouchParams{ID: ds.ID, At: now})
		})
		if err != nil {
			return nil, err
		}
		ds.LastSeenAt = now
	}
	return &Session{Session: *ds, User: u, tokenHash: hash}, nil
}

// RecentlyVerified reports whether the session passed its second factor
// (or, for a user without one, its password) within Config.Reverify: the
// rule for sensitive actions (minting or revoking keys, the v1 key,
// webhooks, disabling the second factor, changing email or password).
func (s *Service) RecentlyVerified(sess *Session) bool {
	return !sess.VerifiedAt.IsZero() && s.now().Sub(sess.VerifiedAt) < s.cfg.Reverify
}

// sensitive refuses a sensitive action on a session not recently verified.
func (s *Service) sensitive(sess *Session) error {
	if sess.Pending() {
		return ErrSecondFactorPending
	}
	if !s.RecentlyVerified(sess) {
		return ErrReverify
	}
	return nil
}

// ConfirmPassword re-verifies the session of a user without a second
// factor by the password, for a sensitive action (a user with one passes
// PassSecondFactor instead).
func (s *Service) ConfirmPassword(ctx context.Context, sess *Session, password, ip string) error {
	if sess.User.TOTPEnabled {
		return drip.Errorf(drip.CodeInvalid, "Enter the code from your authenticator app instead.")
	}
	if err := s.allowAccount(ctx, "password", sess.UserID); err != nil {
		return err
	}
	if !user.CheckPassword(sess.User.PasswordHash, password) {
		if err := s.record(ctx, sess.UserID, "reverify_failed", ip, "wrong password"); err != nil {
			return err
		}
		return drip.Errorf(drip.CodeInvalid, "Wrong password.")
	}
	now := s.now()
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.SessionRenew(ctx, &store.SessionRenewParams{ID: sess.ID, NewTokenHash: sess.tokenHash, VerifiedAt: now}); err != nil {
			return err
		}
		return logEvent(ctx, tx, sess.UserID, "reverified", ip, "password", now)
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrSessionEnded
	}
	if err == nil {
		sess.VerifiedAt = now
	}
	return err
}

// allowAccount takes an attempt from the user's bucket of kind (second
// factor, password): refused, a throttled error.
func (s *Service) allowAccount(ctx context.Context, kind string, userID int64) error {
	d, err := s.perAccount.Allow(ctx, kind+"-user:"+strconv.FormatInt(userID, 10))
	if err != nil {
		return err
	}
	if !d.Allowed {
		return throttled(d.RetryAfter)
	}
	return nil
}

// SessionInfo is one of a user's live sessions, for the list of sessions.
type SessionInfo struct {
	drip.Session
	Current bool // the session asking
}

// ListSessions is the user's live sessions, newest first.
func (s *Service) ListSessions(ctx context.Context, sess *Session) ([]SessionInfo, error) {
	now := s.now()
	list, err := s.st.SessionListByUser(ctx, &store.SessionListByUserParams{UserID: sess.UserID, At: now})
	if err != nil {
		return nil, err
	}
	var out []SessionInfo
	for _, ds := range list {
		if now.Sub(ds.LastSeenAt) < s.cfg.IdleTimeout {
			out = append(out, SessionInfo{Session: ds, Current: ds.ID == sess.ID})
		}
	}
	return out, nil
}

// RevokeSession signs one of the user's sessions out, at once on every node.
func (s *Service) RevokeSession(ctx context.Context, sess *Session, id int64, ip string) error {
	now := s.now()
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.SessionRevoke(ctx, &store.SessionRevokeParams{UserID: sess.UserID, ID: id, At: now}); err != nil {
			return err
		}
		return logEvent(ctx, tx, sess.UserID, "session_revoked", ip, "session "+strconv.FormatInt(id, 10), now)
	})
	if errors.Is(err, store.ErrNotFound) {
		return drip.Errorf(drip.CodeNotFound, "No such session: it may have ended already.")
	}
	return err
}

// RevokeOtherSessions is "sign out elsewhere": every session of the user
// but this one ends. It returns how many did.
func (s *Service) RevokeOtherSessions(ctx context.Context, sess *Session, ip string) (int64, error) {
	now := s.now()
	var n int64
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		var err error
		n, err = tx.SessionRevokeByUser(ctx, &store.SessionRevokeByUserParams{UserID: sess.UserID, ExceptID: sess.ID, At: now})
		if err != nil {
			return err
		}
		return logEvent(ctx, tx, sess.UserID, "sessions_revoked", ip, strconv.FormatInt(n, 10)+" other sessions ended", now)
	})
	return n, err
}

// Logout ends the session.
func (s *Service) Logout(ctx context.Context, sess *Session, ip string) error {
	now := s.now()
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.SessionRevoke(ctx, &store.SessionRevokeParams{UserID: sess.UserID, ID: sess.ID, At: now}); err != nil {
			return err
		}
		return logEvent(ctx, tx, sess.UserID, "logout", ip, "", now)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil // ended already
	}
	return err
}
