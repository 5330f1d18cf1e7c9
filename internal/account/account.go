// Package account is the service behind the web console's accounts (D10)
// and sessions (D15): sign-up with email verification, passwords and their
// reset, login throttled per account and per IP, server-side sessions with
// idle and absolute timeouts, the TOTP second factor with recovery codes,
// and each user's security log. The pages call it; it holds every rule.
//
// Secrets never leave it in the clear except once, to their owner: session
// tokens and emailed tokens are stored as SHA-256 hashes, recovery codes
// likewise, passwords as argon2id, and TOTP secrets sealed with AES-256-GCM
// under a key derived from a server secret kept in the database. None is
// logged, nor written to the security log.
package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/seal"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

// Config holds the service's timeouts and limits; the zero value of each
// field means its default.
type Config struct {
	// BaseURL is where the console is served ("https://drip.example.com");
	// emailed links are BaseURL + "/verify?token=..." and "/reset?token=...".
	BaseURL string
	// Issuer names drip in authenticator apps (default "drip").
	Issuer string
	// IdleTimeout ends a session unused this long (default 30 min).
	IdleTimeout time.Duration
	// AbsoluteTimeout ends a session this long after its login, however
	// used (default 7 days).
	AbsoluteTimeout time.Duration
	// Reverify is how long a passed second factor (or, without one, a
	// password) counts for sensitive actions (default 15 min).
	Reverify time.Duration
	// VerifyEmailTTL and ResetPasswordTTL bound the emailed links (default
	// 24 h and 1 h).
	VerifyEmailTTL   time.Duration
	ResetPasswordTTL time.Duration
	// LoginPerAccount and LoginPerIP shape the login throttles (default 5
	// attempts per 15 minutes per account, 20 per IP).
	LoginPerAccount ratelimit.Config
	LoginPerIP      ratelimit.Config
}

// The defaults of Config.
var (
	DefaultLoginPerAccount = ratelimit.Config{PerMinute: 5.0 / 15, Burst: 5}
	DefaultLoginPerIP      = ratelimit.Config{PerMinute: 20.0 / 15, Burst: 20}
)

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.IdleTimeout, 30*time.Minute)
	set(&c.AbsoluteTimeout, 7*24*time.Hour)
	set(&c.Reverify, 15*time.Minute)
	set(&c.VerifyEmailTTL, 24*time.Hour)
	set(&c.ResetPasswordTTL, time.Hour)
	if c.Issuer == "" {
		c.Issuer = "drip"
	}
	if c.LoginPerAccount.Burst == 0 {
		c.LoginPerAccount = DefaultLoginPerAccount
	}
	if c.LoginPerIP.Burst == 0 {
		c.LoginPerIP = DefaultLoginPerIP
	}
	c.BaseURL = strings.TrimSuffix(c.BaseURL, "/")
}

// Params are what New needs.
type Params struct {
	Store  store.Store
	Users  *user.Registry
	Mail   mail.Sender
	Log    *slog.Logger
	Now    func() time.Time
	Config Config
	// AccountLimiter and IPLimiter count login and second-factor attempts
	// per account and per IP; nil means one in memory shaped by Config
	// (pass Redis ones to share the counts across nodes, D40).
	AccountLimiter ratelimit.Limiter
	IPLimiter      ratelimit.Limiter
}

// Service is the accounts service. It keeps no state of its own but the
// limiters': several nodes over one database agree on every session,
// token and TOTP step.
type Service struct {
	st         store.Store
	users      *user.Registry
	mail       mail.Sender
	log        *slog.Logger
	now        func() time.Time
	cfg        Config
	perAccount ratelimit.Limiter
	perIP      ratelimit.Limiter
	totpKey    *seal.Key // seals TOTP secrets
}

// New loads (creating on first use) the key sealing TOTP secrets
// (internal/seal), derived from a server secret of its own, never the
// payout-hash secret (D12).
func New(ctx context.Context, p Params) (*Service, error) {
	if p.Store == nil || p.Users == nil || p.Mail == nil {
		return nil, errors.New("account: Store, Users and Mail are required")
	}
	cfg := p.Config
	cfg.defaults()
	now := p.Now
	if now == nil {
		now = time.Now
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key, err := seal.Load(ctx, p.Store, seal.TOTP)
	if err != nil {
		return nil, err
	}
	s := &Service{
		st: p.Store, users: p.Users, mail: p.Mail, log: log, now: now, cfg: cfg,
		perAccount: p.AccountLimiter, perIP: p.IPLimiter, totpKey: key,
	}
	if s.perAccount == nil {
		s.perAccount = ratelimit.NewMemory(cfg.LoginPerAccount, now)
	}
	if s.perIP == nil {
		s.perIP = ratelimit.NewMemory(cfg.LoginPerIP, now)
	}
	return s, nil
}

// Errors a page tells apart. Each is a *drip.Error with a message fit to
// show; none says whether an account exists.
var (
	// ErrLoginFailed answers every refused login alike: unknown name, wrong
	// password, unverified email or suspended account.
	ErrLoginFailed = &drip.Error{Code: drip.CodeUnauthenticated,
		Message: "Wrong username, email or password, or the account's email is not verified yet, or it is suspended."}
	// ErrSessionEnded: the session is unknown, revoked, idle too long or
	// past its absolute timeout; log in again.
	ErrSessionEnded = &drip.Error{Code: drip.CodeUnauthenticated, Message: "Your session has ended: log in again."}
	// ErrSecondFactorPending: the login still waits for the second factor.
	ErrSecondFactorPending = &drip.Error{Code: drip.CodeUnauthenticated,
		Message: "Enter the code from your authenticator app (or a recovery code) to finish logging in."}
	// ErrReverify: a sensitive action needs the second factor (or, without
	// one, the password) passed within Config.Reverify.
	ErrReverify = &drip.Error{Code: drip.CodeForbidden,
		Message: "For this, confirm it is you: enter your current code (or your password) again."}
	// ErrWrongCode: a TOTP or recovery code that is wrong, expired or
	// already used.
	ErrWrongCode = &drip.Error{Code: drip.CodeInvalid, Message: "Wrong code, or a code already used: enter the current one."}
	// ErrBadLink: an emailed link that is unknown, used or expired.
	ErrBadLink = &drip.Error{Code: drip.CodeInvalid, Message: "This link is invalid, already used or expired: ask for a new one."}
	// ErrMailFailed: the email could not be handed to the mail server.
	ErrMailFailed = &drip.Error{Code: drip.CodeUnavailable, RetryAfter: time.Minute,
		Message: "We could not send the email just now; try again in a minute."}
)

// throttled is the answer to an attempt over a limit: never a wait, a
// clear "try again in N s".
func throttled(retry time.Duration) error {
	n := int64(math.Ceil(retry.Seconds()))
	return &drip.Error{Code: drip.CodeRateLimited, RetryAfter: time.Duration(n) * time.Second,
		Message: fmt.Sprintf("Too many attempts: try again in %d s.", n)}
}

// randomToken is 256 random bits, URL-safe.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is how a session or emailed token is stored and looked up.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// logEvent adds an entry to a user's security log in tx.
func logEvent(ctx context.Context, tx store.Tx, userID int64, kind, ip, detail string, at time.Time) error {
	_, err := tx.SecurityLogAdd(ctx, &drip.SecurityEvent{UserID: userID, Kind: kind, IP: ip, Detail: detail, CreatedAt: at})
	return err
}

// record adds an entry to a user's security log in a transaction of its own.
func (s *Service) record(ctx context.Context, userID int64, kind, ip, detail string) error {
	return s.st.Transact(ctx, func(tx store.Tx) error { return logEvent(ctx, tx, userID, kind, ip, detail, s.now()) })
}

// send hands a message to the mail sender; a failure is logged without
// the message (its body may hold a link's token) and answered ErrMailFailed.
func (s *Service) send(ctx context.Context, m mail.Message, kind string) error {
	if err := s.mail.Send(ctx, m); err != nil {
		s.log.WarnContext(ctx, "account: email not sent", slog.String("kind", kind), slog.String("err", err.Error()))
		return ErrMailFailed
	}
	return nil
}

// SecurityLog is the user's latest security log entries, newest first.
func (s *Service) SecurityLog(ctx context.Context, sess *Session, limit int) ([]drip.SecurityEvent, error) {
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	return s.st.SecurityLogList(ctx, &store.SecurityLogListParams{UserID: sess.UserID, Limit: limit})
}

// The security log's kinds of key changes, made on a faucet's key page
// (issue 11 item 3: every key change is recorded in the account's log).
const (
	KeyMinted              = "key_minted"
	KeyRevoked             = "key_revoked"
	V1KeyRotated           = "v1_key_rotated"
	V1KeyRotationConfirmed = "v1_key_rotation_confirmed"
)

// RecordKeyChange adds a key change of kind to the session's user's
// security log. detail names the key (its prefix, scopes, faucet), never
// its secret.
func (s *Service) RecordKeyChange(ctx context.Context, sess *Session, kind, ip, detail string) error {
	switch kind {
	case KeyMinted, KeyRevoked, V1KeyRotated, V1KeyRotationConfirmed:
	default:
		return fmt.Errorf("account: %q is not a key change", kind)
	}
	return s.record(ctx, sess.UserID, kind, ip, truncate(detail, 500))
}

// SetOperator grants or withdraws a user's operator role (drip admin user
// set-operator), recorded in the user's security log.
func (s *Service) SetOperator(ctx context.Context, u *drip.User, operator bool) error {
	return s.users.SetOperator(ctx, u, operator)
}

// truncate cuts s to at most n bytes for the security log.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
