package account

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/ratelimit"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
)

// SignUpAnswer is the one answer of a sign-up that passed the checks of
// form, whether or not its username or email was free: the email sent
// says which (D10: no answer reveals whether an account exists).
const SignUpAnswer = "Check your email: we sent a message to finish signing up."

// RequestAnswer is the one answer of a request for a password reset or a
// new verification link, whether or not an account has that address.
const RequestAnswer = "If an account uses this address, we sent it an email with a link."

// SignUp registers an unverified user and emails a verification link. The
// username, email and password are checked first (those errors say only
// what is wrong with the form); then a taken email or username gets the
// same nil answer as a free one, and the address's owner an email saying
// what happened instead of a link. Both ways hash the password and send
// one email, so they also take alike long.
func (s *Service) SignUp(ctx context.Context, username, email, password, ip string) error {
	username = strings.ToLower(strings.TrimSpace(username))
	if !user.ValidUsername(username) {
		return drip.Errorf(drip.CodeInvalid, "Invalid username: 3-32 characters of a-z, 0-9 and _.")
	}
	email, err := user.NormalizeEmail(email)
	if err != nil {
		return err
	}
	if err := CheckPassword(password, username, email); err != nil {
		return err
	}
	if err := s.allowMail(ctx, ip, email); err != nil {
		return err
	}
	u, err := s.users.Create(ctx, user.CreateParams{Username: username, Email: email, Password: password})
	if drip.ErrorCode(err) == drip.CodeConflict {
		return s.signUpTaken(ctx, username, email, ip)
	}
	if err != nil {
		return err
	}
	token, err := s.newLink(ctx, u.ID, drip.TokenVerifyEmail, "", s.cfg.VerifyEmailTTL, "signup", ip, "")
	if err != nil {
		return err
	}
	return s.send(ctx, mail.Message{To: email, Subject: "Confirm your email address for drip",
		Body: fmt.Sprintf("Welcome to drip, %s.\n\nOpen this link to confirm your email address and finish signing up (it works once, for %s):\n\n%s\n\nIf you did not sign up, ignore this email.\n",
			username, s.cfg.VerifyEmailTTL, s.link("verify", token))}, "verify_email")
}

// allowMail takes one email from the caller IP's bucket and one from the
// address's, before a form that emails someone (sign-up, a new
// verification link, a password reset): neither a visitor nor many
// visitors together can bomb an address, or use drip to send mail at
// will. The address is counted whether or not it has an account, so the
// refusal says nothing about it.
func (s *Service) allowMail(ctx context.Context, ip, email string) error {
	for _, b := range []struct {
		l   ratelimit.Limiter
		key string
	}{{s.perIP, "mail-ip:" + ip}, {s.perAccount, "mail-to:" + email}} {
		d, err := b.l.Allow(ctx, b.key)
		if err != nil {
			return err
		}
		if !d.Allowed {
			return throttled(d.RetryAfter)
		}
	}
	return nil
}

// signUpTaken tells the address's owner why no account was made.
func (s *Service) signUpTaken(ctx context.Context, username, email, ip string) error {
	owner, err := s.st.UserGetByEmail(ctx, email)
	if err == nil {
		if err := s.record(ctx, owner.ID, "signup_attempt", ip, "someone tried to sign up with this email"); err != nil {
			return err
		}
		return s.send(ctx, mail.Message{To: email, Subject: "Someone tried to sign up to drip with your address",
			Body: "Someone tried to sign up to drip with this email address, which already has an account.\n\nIf it was you, log in instead, or reset your password from the login page. If not, you can ignore this email: nothing was changed.\n"},
			"signup_taken_email")
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return s.send(ctx, mail.Message{To: email, Subject: "Your drip sign-up: choose another username",
		Body: fmt.Sprintf("Someone (you, we hope) tried to sign up to drip with this email address and the username %q, which is taken.\n\nSign up again with another username. If it was not you, ignore this email.\n", username)},
		"signup_taken_username")
}

// newLink stores a single-use emailed token for the user and records kind
// in the security log, in one transaction; it returns the token.
func (s *Service) newLink(ctx context.Context, userID int64, kind drip.AccountTokenKind, newEmail string, ttl time.Duration,
	event, ip, detail string) (string, error) {
	token := randomToken()
	now := s.now()
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		err := tx.AccountTokenCreate(ctx, &store.AccountTokenCreateParams{TokenHash: hashToken(token), UserID: userID,
			Kind: kind, NewEmail: newEmail, CreatedAt: now, ExpiresAt: now.Add(ttl)})
		if err != nil {
			return err
		}
		return logEvent(ctx, tx, userID, event, ip, detail, now)
	})
	return token, err
}

func (s *Service) link(path, token string) string {
	return s.cfg.BaseURL + "/" + path + "?token=" + token
}

// VerifyEmail uses an emailed verification link: a sign-up's, which marks
// the address verified, or an email change's, which makes the new address
// the user's (verified). Each link works once.
func (s *Service) VerifyEmail(ctx context.Context, token, ip string) error {
	now := s.now()
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		use := &store.AccountTokenUseParams{TokenHash: hashToken(token), Kind: drip.TokenVerifyEmail, At: now}
		t, err := tx.AccountTokenUse(ctx, use)
		if errors.Is(err, store.ErrNotFound) {
			use.Kind = drip.TokenChangeEmail
			t, err = tx.AccountTokenUse(ctx, use)
		}
		if err != nil {
			return err
		}
		u, err := tx.UserGetByID(ctx, t.UserID)
		if err != nil {
			return err
		}
		if t.Kind == drip.TokenVerifyEmail {
			if err := tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: u.ID, Email: u.Email, Verified: true}); err != nil {
				return err
			}
			return logEvent(ctx, tx, u.ID, "email_verified", ip, "", now)
		}
		if err := tx.UserSetEmail(ctx, &store.UserSetEmailParams{ID: u.ID, Email: t.NewEmail, Verified: true}); err != nil {
			return err
		}
		return logEvent(ctx, tx, u.ID, "email_changed", ip, "from "+u.Email+" to "+t.NewEmail, now)
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return ErrBadLink
	case errors.Is(err, store.ErrConflict):
		return drip.Errorf(drip.CodeConflict, "This email address now belongs to another account: choose another one.")
	}
	return err
}

// ResendVerification emails a new verification link to an unverified
// account with this address; the answer is the same whatever the address.
func (s *Service) ResendVerification(ctx context.Context, email, ip string) error {
	email, err := user.NormalizeEmail(email)
	if err != nil {
		return err
	}
	if err := s.allowMail(ctx, ip, email); err != nil {
		return err
	}
	u, err := s.st.UserGetByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (u.EmailVerified || u.Status != drip.UserActive)) {
		return nil
	}
	if err != nil {
		return err
	}
	token, err := s.newLink(ctx, u.ID, drip.TokenVerifyEmail, "", s.cfg.VerifyEmailTTL, "verification_resent", ip, "")
	if err != nil {
		return err
	}
	return s.send(ctx, mail.Message{To: email, Subject: "Confirm your email address for drip",
		Body: fmt.Sprintf("Open this link to confirm your email address (it works once, for %s):\n\n%s\n", s.cfg.VerifyEmailTTL, s.link("verify", token))},
		"verify_email")
}

// RequestPasswordReset emails a single-use reset link to the account with
// this address; an address without an account gets an email saying so.
// Either way the answer is nil (show RequestAnswer).
func (s *Service) RequestPasswordReset(ctx context.Context, email, ip string) error {
	email, err := user.NormalizeEmail(email)
	if err != nil {
		return err
	}
	if err := s.allowMail(ctx, ip, email); err != nil {
		return err
	}
	u, err := s.st.UserGetByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) || (err == nil && u.Status != drip.UserActive) {
		return s.send(ctx, mail.Message{To: email, Subject: "Your drip password reset",
			Body: "Someone asked to reset the drip password of this email address, but no active account uses it.\n\nIf it was you, you may have signed up with another address. If not, ignore this email.\n"},
			"reset_no_account")
	}
	if err != nil {
		return err
	}
	token, err := s.newLink(ctx, u.ID, drip.TokenResetPassword, "", s.cfg.ResetPasswordTTL, "password_reset_requested", ip, "")
	if err != nil {
		return err
	}
	return s.send(ctx, mail.Message{To: email, Subject: "Reset your drip password",
		Body: fmt.Sprintf("Open this link to choose a new password for %s (it works once, for %s):\n\n%s\n\nIf you did not ask for this, ignore this email: your password stays as it is.\n",
			u.Username, s.cfg.ResetPasswordTTL, s.link("reset", token))}, "reset_password")
}

// ResetPassword uses a reset link to set a new password, and ends every
// session of the user. A password that breaks a rule leaves the link
// usable, to try again.
func (s *Service) ResetPassword(ctx context.Context, token, password, ip string) error {
	now := s.now()
	hash := user.HashPassword(password) // before the transaction: argon2id takes a while
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		t, err := tx.AccountTokenUse(ctx, &store.AccountTokenUseParams{TokenHash: hashToken(token), Kind: drip.TokenResetPassword, At: now})
		if err != nil {
			return err
		}
		u, err := tx.UserGetByID(ctx, t.UserID)
		if err != nil {
			return err
		}
		if err := CheckPassword(password, u.Username, u.Email); err != nil {
			return err // rolls back: the link is still unused
		}
		if err := tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: u.ID, PasswordHash: hash}); err != nil {
			return err
		}
		n, err := tx.SessionRevokeByUser(ctx, &store.SessionRevokeByUserParams{UserID: u.ID, At: now})
		if err != nil {
			return err
		}
		return logEvent(ctx, tx, u.ID, "password_reset", ip, fmt.Sprintf("%d sessions ended", n), now)
	})
	if errors.Is(err, store.ErrNotFound) {
		return ErrBadLink
	}
	return err
}

// ChangePassword sets a new password after checking the current one; it
// needs a recently verified session, and ends the user's other sessions.
func (s *Service) ChangePassword(ctx context.Context, sess *Session, current, password, ip string) error {
	if err := s.sensitive(sess); err != nil {
		return err
	}
	if err := s.allowAccount(ctx, "password", sess.UserID); err != nil {
		return err
	}
	if !user.CheckPassword(sess.User.PasswordHash, current) {
		if err := s.record(ctx, sess.UserID, "password_change_failed", ip, "wrong current password"); err != nil {
			return err
		}
		return drip.Errorf(drip.CodeInvalid, "Your current password is wrong.")
	}
	if err := CheckPassword(password, sess.User.Username, sess.User.Email); err != nil {
		return err
	}
	now := s.now()
	hash := user.HashPassword(password)
	err := s.st.Transact(ctx, func(tx store.Tx) error {
		if err := tx.UserSetPassword(ctx, &store.UserSetPasswordParams{ID: sess.UserID, PasswordHash: hash}); err != nil {
			return err
		}
		n, err := tx.SessionRevokeByUser(ctx, &store.SessionRevokeByUserParams{UserID: sess.UserID, ExceptID: sess.ID, At: now})
		if err != nil {
			return err
		}
		return logEvent(ctx, tx, sess.UserID, "password_changed", ip, fmt.Sprintf("%d other sessions ended", n), now)
	})
	if err != nil {
		return err
	}
	sess.User.PasswordHash = hash
	// A notice: the password changed whether or not it reaches the user.
	_ = s.send(ctx, mail.Message{To: sess.User.Email, Subject: "Your drip password was changed",
		Body: "The password of your drip account was changed, and your other sessions were signed out.\n\nIf it was not you, reset your password from the login page at once.\n"},
		"password_changed")
	return nil
}

// ChangeEmail starts a change of the user's email: a link goes to the new
// address, and the change happens when it is opened (VerifyEmail); the
// current address is told. It needs a recently verified session. A new
// address that another account uses gets the same nil answer, and that
// address an email saying so instead of a link.
func (s *Service) ChangeEmail(ctx context.Context, sess *Session, newEmail, ip string) error {
	if err := s.sensitive(sess); err != nil {
		return err
	}
	newEmail, err := user.NormalizeEmail(newEmail)
	if err != nil {
		return err
	}
	if newEmail == sess.User.Email {
		return drip.Errorf(drip.CodeInvalid, "This is already your email address.")
	}
	_, err = s.st.UserGetByEmail(ctx, newEmail)
	if err == nil {
		return s.send(ctx, mail.Message{To: newEmail, Subject: "Someone tried to move a drip account to your address",
			Body: "Someone tried to change the email of another drip account to this address, which already has an account. Nothing was changed.\n"},
			"change_email_taken")
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	token, err := s.newLink(ctx, sess.UserID, drip.TokenChangeEmail, newEmail, s.cfg.VerifyEmailTTL, "email_change_requested", ip, "to "+newEmail)
	if err != nil {
		return err
	}
	if err := s.send(ctx, mail.Message{To: newEmail, Subject: "Confirm your new email address for drip",
		Body: fmt.Sprintf("Open this link to make this the email address of the drip account %s (it works once, for %s):\n\n%s\n",
			sess.User.Username, s.cfg.VerifyEmailTTL, s.link("verify", token))}, "change_email"); err != nil {
		return err
	}
	// A notice to the current address; the link is sent, whether or not it arrives.
	_ = s.send(ctx, mail.Message{To: sess.User.Email, Subject: "Your drip email address is being changed",
		Body: fmt.Sprintf("Someone logged in to your drip account asked to change its email address to %s. It changes when the link sent there is opened.\n\nIf it was not you, change your password at once.\n", newEmail)},
		"change_email_notice")
	return nil
}
