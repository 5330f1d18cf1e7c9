package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/store"
)

// TOTP as authenticator apps expect it (RFC 6238): 30 s steps, 6 digits,
// SHA-1; a code of the step before or after the current one is accepted,
// for clocks a little apart.
const (
	totpPeriod = 30
	totpSkew   = 1
	// RecoveryCodes is how many recovery codes a user gets at a time.
	RecoveryCodes = 10
)

var totpOpts = totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// seal encrypts a TOTP secret for the user's row (internal/seal); the
// user's id is bound in, so a sealed secret copied to another user does
// not open.
func (s *Service) seal(userID int64, secret string) (string, error) {
	return s.totpKey.Seal([]byte(secret), totpBinding(userID))
}

func (s *Service) open(userID int64, sealed string) (string, error) {
	plain, err := s.totpKey.Open(sealed, totpBinding(userID))
	if err != nil {
		return "", fmt.Errorf("account: sealed TOTP secret of user %d does not open: %w", userID, err)
	}
	return string(plain), nil
}

func totpBinding(userID int64) string { return "user:" + strconv.FormatInt(userID, 10) }

// matchTOTP returns the time step whose code is code, among the current
// step and its neighbours; false when none matches. Every candidate is
// compared, in constant time. Whether the step was used already is the
// store's to say (UserAcceptTOTPStep).
func (s *Service) matchTOTP(u *drip.User, code string) (int64, bool, error) {
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" || u.TOTPSecret == "" {
		return 0, false, nil
	}
	secret, err := s.open(u.ID, u.TOTPSecret)
	if err != nil {
		return 0, false, err
	}
	now := s.now().Unix() / totpPeriod
	var step int64
	found := false
	for st := now - totpSkew; st <= now+totpSkew; st++ {
		want, err := totp.GenerateCodeCustom(secret, time.Unix(st*totpPeriod, 0), totpOpts)
		if err != nil {
			return 0, false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			step, found = st, true
		}
	}
	return step, found, nil
}

// normalizeCode strips what people type around a code (spaces, hyphens)
// and lowers its case.
func normalizeCode(code string) string {
	return strings.ToLower(strings.NewReplacer(" ", "", "-", "", "\t", "").Replace(strings.TrimSpace(code)))
}

func hashRecoveryCode(code string) string {
	sum := sha256.Sum256([]byte(normalizeCode(code)))
	return hex.EncodeToString(sum[:])
}

// newRecoveryCodes makes RecoveryCodes codes of 80 random bits each, as
// "xxxx-xxxx-xxxx-xxxx", and their hashes (80 bits need no slow hash).
func newRecoveryCodes() (codes, hashes []string) {
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	for range RecoveryCodes {
		b := make([]byte, 10)
		_, _ = rand.Read(b)
		c := strings.ToLower(enc.EncodeToString(b)) // 16 characters
		code := c[0:4] + "-" + c[4:8] + "-" + c[8:12] + "-" + c[12:16]
		codes = append(codes, code)
		hashes = append(hashes, hashRecoveryCode(code))
	}
	return codes, hashes
}

// useCode accepts a TOTP code (its step once, on every node) or an unused
// recovery code of u in tx, and says which it was; ErrWrongCode when it
// is neither.
func (s *Service) useCode(ctx context.Context, tx store.Tx, u *drip.User, code string, at time.Time) (string, error) {
	code = normalizeCode(code)
	step, ok, err := s.matchTOTP(u, code)
	if err != nil {
		return "", err
	}
	if ok {
		err := tx.UserAcceptTOTPStep(ctx, &store.UserAcceptTOTPStepParams{ID: u.ID, Step: step})
		if errors.Is(err, store.ErrNotFound) {
			return "", ErrWrongCode // replayed inside its window
		}
		return "authenticator code", err
	}
	if len(code) != 16 {
		return "", ErrWrongCode
	}
	err = tx.RecoveryCodeUse(ctx, &store.RecoveryCodeUseParams{UserID: u.ID, Hash: hashRecoveryCode(code), At: at})
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrWrongCode
	}
	if err != nil {
		return "", err
	}
	left, err := tx.RecoveryCodesRemaining(ctx, u.ID)
	return fmt.Sprintf("recovery code (%d left)", left), err
}

// checkCode runs fn with a code accepted by useCode in one transaction,
// throttled per account; a wrong code is recorded as failKind.
func (s *Service) checkCode(ctx context.Context, sess *Session, code, ip, failKind string,
	fn func(tx store.Tx, u *drip.User, how string, now time.Time) error) error {
	if err := s.allowAccount(ctx, "code", sess.UserID); err != nil {
		return err
	}
	now := s.now()
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		u, err := tx.UserGetByID(ctx, sess.UserID) // the current secret and its state
		if err != nil {
			return err
		}
		how, err := s.useCode(ctx, tx, u, code, now)
		if err != nil {
			return err
		}
		return fn(tx, u, how, now)
	})
	if errors.Is(err, ErrWrongCode) {
		if rerr := s.record(ctx, sess.UserID, failKind, ip, "wrong or reused code"); rerr != nil {
			return rerr
		}
	}
	return err
}

// PassSecondFactor checks an authenticator or recovery code for the
// session, at login or to re-verify before a sensitive action. The
// session gets a new token (returned; the old one stops working at once,
// D15) and the time it was verified. A code is accepted once: the same
// code again inside its window is refused, on every node.
func (s *Service) PassSecondFactor(ctx context.Context, sess *Session, code, ip string) (string, error) {
	if !sess.User.TOTPEnabled {
		return "", drip.Errorf(drip.CodeInvalid, "Two-factor authentication is not on for this account.")
	}
	token := randomToken()
	hash := hashToken(token)
	var verified time.Time
	err := s.checkCode(ctx, sess, code, ip, "second_factor_failed", func(tx store.Tx, u *drip.User, how string, now time.Time) error {
		if !u.TOTPEnabled {
			return drip.Errorf(drip.CodeInvalid, "Two-factor authentication is not on for this account.")
		}
		err := tx.SessionRenew(ctx, &store.SessionRenewParams{ID: sess.ID, NewTokenHash: hash, VerifiedAt: now})
		if errors.Is(err, store.ErrNotFound) {
			return ErrSessionEnded
		}
		if err != nil {
			return err
		}
		verified = now
		return logEvent(ctx, tx, u.ID, "second_factor_passed", ip, how, now)
	})
	if err != nil {
		return "", err
	}
	sess.VerifiedAt, sess.tokenHash = verified, hash
	return token, nil
}

// Enrolment is a TOTP secret waiting for its first code: the page shows
// the secret as text and URL as a QR code.
type Enrolment struct {
	Secret string // base32, as authenticator apps take it typed
	URL    string // otpauth://totp/...
}

// BeginTOTP starts (or restarts) the enrolment of a second factor: a new
// secret is stored sealed, not yet on until ConfirmTOTP.
func (s *Service) BeginTOTP(ctx context.Context, sess *Session, ip string) (*Enrolment, error) {
	if sess.Pending() {
		return nil, ErrSecondFactorPending
	}
	if sess.User.TOTPEnabled {
		return nil, drip.Errorf(drip.CodeConflict, "Two-factor authentication is on already: turn it off first to enrol a new device.")
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: s.cfg.Issuer, AccountName: sess.User.Username,
		Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, SecretSize: 20})
	if err != nil {
		return nil, err
	}
	sealed, err := s.seal(sess.UserID, key.Secret())
	if err != nil {
		return nil, err
	}
	now := s.now()
	err = s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.UserSetTOTP(ctx, &store.UserSetTOTPParams{ID: sess.UserID, Secret: sealed}); err != nil {
			return err
		}
		return logEvent(ctx, tx, sess.UserID, "totp_enrolment_started", ip, "", now)
	})
	if err != nil {
		return nil, err
	}
	sess.User.TOTPSecret = sealed
	return &Enrolment{Secret: key.Secret(), URL: key.URL()}, nil
}

// ConfirmTOTP turns the second factor on with a first code of the secret
// BeginTOTP gave, and returns the recovery codes, shown this once (only
// their hashes are kept).
func (s *Service) ConfirmTOTP(ctx context.Context, sess *Session, code, ip string) ([]string, error) {
	if sess.Pending() {
		return nil, ErrSecondFactorPending
	}
	codes, hashes := newRecoveryCodes()
	var verified time.Time
	err := s.checkCode(ctx, sess, code, ip, "totp_confirm_failed", func(tx store.Tx, u *drip.User, how string, now time.Time) error {
		if u.TOTPEnabled {
			return drip.Errorf(drip.CodeConflict, "Two-factor authentication is on already.")
		}
		if how != "authenticator code" { // no recovery codes yet: a code of the new secret
			return ErrWrongCode
		}
		if err := tx.UserSetTOTP(ctx, &store.UserSetTOTPParams{ID: u.ID, Secret: u.TOTPSecret, Enabled: true}); err != nil {
			return err
		}
		if err := tx.RecoveryCodesReplace(ctx, &store.RecoveryCodesReplaceParams{UserID: u.ID, Hashes: hashes}); err != nil {
			return err
		}
		// The code just passed verifies the session too.
		if err := tx.SessionRenew(ctx, &store.SessionRenewParams{ID: sess.ID, NewTokenHash: sess.tokenHash, VerifiedAt: now}); err != nil {
			return err
		}
		verified = now
		return logEvent(ctx, tx, u.ID, "totp_enabled", ip, fmt.Sprintf("%d recovery codes issued", len(hashes)), now)
	})
	if err != nil {
		return nil, err
	}
	sess.User.TOTPEnabled, sess.VerifiedAt = true, verified
	// A notice: 2FA is on whether or not it reaches the user (send logs a failure).
	_ = s.send(ctx, mail.Message{To: sess.User.Email, Subject: "Two-factor authentication is on for your drip account",
		Body: "Two-factor authentication was turned on for your drip account. Keep your recovery codes somewhere safe.\n\nIf it was not you, reset your password at once.\n"},
		"totp_enabled")
	return codes, nil
}

// DisableTOTP turns the second factor off; it needs a current code (an
// authenticator code, or a recovery code for a lost device), and removes
// the secret and the recovery codes.
func (s *Service) DisableTOTP(ctx context.Context, sess *Session, code, ip string) error {
	if sess.Pending() {
		return ErrSecondFactorPending
	}
	if !sess.User.TOTPEnabled {
		return drip.Errorf(drip.CodeInvalid, "Two-factor authentication is not on for this account.")
	}
	err := s.checkCode(ctx, sess, code, ip, "totp_disable_failed", func(tx store.Tx, u *drip.User, how string, now time.Time) error {
		if err := tx.UserSetTOTP(ctx, &store.UserSetTOTPParams{ID: u.ID}); err != nil {
			return err
		}
		if err := tx.RecoveryCodesReplace(ctx, &store.RecoveryCodesReplaceParams{UserID: u.ID}); err != nil {
			return err
		}
		return logEvent(ctx, tx, u.ID, "totp_disabled", ip, "with "+how, now)
	})
	if err != nil {
		return err
	}
	sess.User.TOTPEnabled, sess.User.TOTPSecret = false, ""
	// A notice: 2FA is off whether or not it reaches the user (send logs a failure).
	_ = s.send(ctx, mail.Message{To: sess.User.Email, Subject: "Two-factor authentication is off for your drip account",
		Body: "Two-factor authentication was turned off for your drip account.\n\nIf it was not you, reset your password and turn it on again at once.\n"},
		"totp_disabled")
	return nil
}

// RegenerateRecoveryCodes replaces the user's recovery codes with ten new
// ones, shown this once; it needs a current authenticator code (not a
// recovery code: a user who lost the device disables and enrols again).
// The old codes stop working in the same transaction.
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, sess *Session, code, ip string) ([]string, error) {
	if sess.Pending() {
		return nil, ErrSecondFactorPending
	}
	if !sess.User.TOTPEnabled {
		return nil, drip.Errorf(drip.CodeInvalid, "Two-factor authentication is not on for this account.")
	}
	codes, hashes := newRecoveryCodes()
	err := s.checkCode(ctx, sess, code, ip, "recovery_codes_failed", func(tx store.Tx, u *drip.User, how string, now time.Time) error {
		if how != "authenticator code" {
			return drip.Errorf(drip.CodeInvalid, "Wrong code: enter a code from your authenticator app, not a recovery code.")
		}
		if err := tx.RecoveryCodesReplace(ctx, &store.RecoveryCodesReplaceParams{UserID: u.ID, Hashes: hashes}); err != nil {
			return err
		}
		return logEvent(ctx, tx, u.ID, "recovery_codes_replaced", ip, fmt.Sprintf("%d new recovery codes; the old ones no longer work", len(hashes)), now)
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// RecoveryCodesLeft counts the user's unused recovery codes.
func (s *Service) RecoveryCodesLeft(ctx context.Context, sess *Session) (int64, error) {
	return s.st.RecoveryCodesRemaining(ctx, sess.UserID)
}
