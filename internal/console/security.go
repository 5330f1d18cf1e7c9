package console

import (
	"context"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/drip"
)

type sessionKey struct{}

// auth serves next to a logged-in session that passed its second factor,
// found in the request's context; else it sends the browser to log in.
func (h *Handler) auth(next func(http.ResponseWriter, *http.Request, *account.Session)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sess, err := h.acc.Authenticate(r.Context(), h.token(r))
		switch {
		case errors.Is(err, account.ErrSecondFactorPending):
			redirect(w, r, "/login/code")
			return
		case errors.Is(err, account.ErrSessionEnded):
			h.setSession(w, "")
			redirect(w, r, "/login")
			return
		case err != nil:
			p := &page{Title: "Error"}
			h.render(w, r, h.failure(r, p, err), "problem", p, err)
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess)), sess)
	})
}

// security is the data of the account's security page.
type security struct {
	TOTP          bool
	CodesLeft     int64
	Sessions      []account.SessionInfo
	Log           []drip.SecurityEvent
	Recent        bool // passed its second factor (or password) within 15 minutes
	DisableFailed bool
}

func (h *Handler) securityData(ctx context.Context, sess *account.Session) (*security, error) {
	d := &security{TOTP: sess.User.TOTPEnabled, Recent: h.acc.RecentlyVerified(sess)}
	var err error
	if d.TOTP {
		if d.CodesLeft, err = h.acc.RecoveryCodesLeft(ctx, sess); err != nil {
			return nil, err
		}
	}
	if d.Sessions, err = h.acc.ListSessions(ctx, sess); err != nil {
		return nil, err
	}
	if d.Log, err = h.acc.SecurityLog(ctx, sess, 50); err != nil {
		return nil, err
	}
	return d, nil
}

// securityPage renders the account's security page, with p's errors.
func (h *Handler) securityPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.showSecurity(w, r, sess, http.StatusOK, &page{Flash: flash(r)}, nil)
}

func (h *Handler) showSecurity(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page, failed error) {
	d, err := h.securityData(r.Context(), sess)
	if err != nil {
		p := &page{Title: "Error", User: sess.User}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return
	}
	d.DisableFailed = failed != nil
	p.Title, p.User, p.Data = "Account security", sess.User, d
	h.render(w, r, status, "account", p, failed)
}

// enrolment is the data of the page that enrols an authenticator.
type enrolment struct {
	Secret string
	URL    string
	QR     template.URL // a PNG data: URI drawn here, from the otpauth URL
}

func (h *Handler) beginTOTP(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	e, err := h.acc.BeginTOTP(r.Context(), sess, h.ip(r))
	if err != nil {
		p := &page{}
		h.showSecurity(w, r, sess, h.failure(r, p, err), p, nil)
		return
	}
	h.showEnrolment(w, r, sess, http.StatusOK, &page{}, e.URL)
}

// showEnrolment shows the QR code of an otpauth URL and its secret as
// text. After a wrong first code the page posts the URL back (the
// account keeps the secret sealed and tells it once), so it can be shown
// again without a new secret to scan.
func (h *Handler) showEnrolment(w http.ResponseWriter, r *http.Request, sess *account.Session, status int, p *page, otpauth string) {
	u, err := url.Parse(otpauth)
	if err != nil || u.Scheme != "otpauth" || u.Query().Get("secret") == "" {
		p := &page{}
		h.showSecurity(w, r, sess, http.StatusUnprocessableEntity, p, nil)
		return
	}
	secret := u.Query().Get("secret")
	png, err := qrcode.Encode(otpauth, qrcode.Medium, 256)
	if err != nil {
		p := &page{Title: "Error", User: sess.User}
		h.render(w, r, h.failure(r, p, err), "problem", p, err)
		return
	}
	p.Title, p.User = "Turn on two-factor authentication", sess.User
	p.Data = enrolment{Secret: secret, URL: otpauth, QR: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))}
	h.render(w, r, status, "enrol", p, nil)
}

// confirmTOTP turns the second factor on with a first code and shows the
// recovery codes, this once.
func (h *Handler) confirmTOTP(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	codes, err := h.acc.ConfirmTOTP(r.Context(), sess, r.PostFormValue("code"), h.ip(r))
	if err != nil {
		p := &page{}
		status := h.failure(r, p, err)
		if otpauth := r.PostFormValue("otpauth"); otpauth != "" && !sess.User.TOTPEnabled {
			h.showEnrolment(w, r, sess, status, p, otpauth)
			return
		}
		h.showSecurity(w, r, sess, status, p, nil)
		return
	}
	h.render(w, r, http.StatusOK, "codes", &page{Title: "Your recovery codes", User: sess.User,
		Flash: "Two-factor authentication is on.", Data: codes}, nil)
}

// newRecoveryCodes replaces the recovery codes, with a current
// authenticator code, and shows the new ones this once.
func (h *Handler) newRecoveryCodes(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	codes, err := h.acc.RegenerateRecoveryCodes(r.Context(), sess, r.PostFormValue("code"), h.ip(r))
	if err != nil {
		p := &page{}
		status := h.failure(r, p, err)
		if msg, ok := p.Fields["code"]; ok { // this form's field, not the one that turns 2FA off
			delete(p.Fields, "code")
			p.Fields["regen"] = msg
		}
		h.showSecurity(w, r, sess, status, p, err)
		return
	}
	h.render(w, r, http.StatusOK, "codes", &page{Title: "Your new recovery codes", User: sess.User,
		Flash: "New recovery codes: the old ones no longer work.", Data: codes}, nil)
}

func (h *Handler) disableTOTP(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	if err := h.acc.DisableTOTP(r.Context(), sess, r.PostFormValue("code"), h.ip(r)); err != nil {
		p := &page{}
		h.showSecurity(w, r, sess, h.failure(r, p, err), p, err)
		return
	}
	redirect(w, r, "/account?done=totp-off")
}

// sensitive are the pages of sensitive actions, by name, with their titles.
var sensitive = map[string]string{"password": "Change your password", "email": "Change your email address"}

// sensitivePage shows the form of a sensitive action, after asking for a
// code (or the password) again when the session was not verified within
// 15 minutes.
func (h *Handler) sensitivePage(name string) func(http.ResponseWriter, *http.Request, *account.Session) {
	return func(w http.ResponseWriter, r *http.Request, sess *account.Session) {
		if !h.acc.RecentlyVerified(sess) {
			h.reverify(w, r, "/account/"+name)
			return
		}
		h.render(w, r, http.StatusOK, name, &page{Title: sensitive[name], User: sess.User, Rules: account.PasswordRules, Flash: flash(r)}, nil)
	}
}

func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	err := h.acc.ChangePassword(r.Context(), sess, r.PostFormValue("current"), r.PostFormValue("password"), h.ip(r))
	if errors.Is(err, account.ErrReverify) {
		h.reverify(w, r, "/account/password")
		return
	}
	if err != nil {
		p := &page{Title: sensitive["password"], User: sess.User, Rules: account.PasswordRules}
		h.render(w, r, h.failure(r, p, err), "password", p, err)
		return
	}
	redirect(w, r, "/account?done=password")
}

func (h *Handler) changeEmail(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	email := r.PostFormValue("email")
	err := h.acc.ChangeEmail(r.Context(), sess, email, h.ip(r))
	if errors.Is(err, account.ErrReverify) {
		h.reverify(w, r, "/account/email")
		return
	}
	if err != nil {
		p := &page{Title: sensitive["email"], User: sess.User, Form: map[string]string{"email": email}}
		h.render(w, r, h.failure(r, p, err), "email", p, err)
		return
	}
	redirect(w, r, "/account?done=email")
}

// confirmPage asks for a code (or, without a second factor, the password)
// before a sensitive action; next names the action's page.
func (h *Handler) confirmPage(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	h.render(w, r, http.StatusOK, "confirm", &page{Title: "Confirm it is you", User: sess.User,
		Form: map[string]string{"next": nextPage(r.URL.Query().Get("next"))}, Data: sess.User.TOTPEnabled}, nil)
}

func (h *Handler) confirm(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	next := nextPage(r.PostFormValue("next"))
	var err error
	if sess.User.TOTPEnabled {
		var token string
		if token, err = h.acc.PassSecondFactor(r.Context(), sess, r.PostFormValue("code"), h.ip(r)); err == nil {
			h.setSession(w, token) // a new token, as after every second factor (D15)
		}
	} else {
		err = h.acc.ConfirmPassword(r.Context(), sess, r.PostFormValue("password"), h.ip(r))
	}
	if err != nil {
		p := &page{Title: "Confirm it is you", User: sess.User, Form: map[string]string{"next": next}, Data: sess.User.TOTPEnabled}
		h.render(w, r, h.failure(r, p, err), "confirm", p, err)
		return
	}
	if next == "" {
		next = "/account"
	}
	sep := "?"
	if strings.Contains(next, "?") {
		sep = "&"
	}
	redirect(w, r, next+sep+"done=confirmed")
}

// reverify sends the browser to confirm it is you (a code, or the
// password without a second factor), then back to the page at back: the
// rule of every sensitive action (issue 11) in one place.
func (h *Handler) reverify(w http.ResponseWriter, r *http.Request, back string) {
	redirect(w, r, "/account/confirm?next="+url.QueryEscape(back))
}

// nextPage is where the confirm page, or a login, may send the browser
// on to: a sensitive account page by name ("password"), a path of one of
// the console's sections, or a checkout's page (the buyer logs in to pay
// and comes back to it); "" for anything else, so the page never sends a
// browser off the site (an open redirect).
func nextPage(next string) string {
	if _, ok := sensitive[next]; ok {
		return "/account/" + next
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(next, "/") ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") || (section(u.Path) == "" && !checkoutPage(u)) {
		return ""
	}
	return u.RequestURI()
}

// checkoutPage reports whether u is a checkout's page, exactly
// CheckoutPath and an id of letters, digits and underscores: no more
// path, no query.
func checkoutPage(u *url.URL) bool {
	id, ok := strings.CutPrefix(u.Path, CheckoutPath)
	if !ok || id == "" || u.RawQuery != "" || u.Fragment != "" || u.RawPath != "" {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err == nil {
		err = h.acc.RevokeSession(r.Context(), sess, id, h.ip(r))
	} else {
		err = drip.Errorf(drip.CodeNotFound, "No such session: it may have ended already.")
	}
	if err != nil {
		p := &page{}
		h.showSecurity(w, r, sess, h.failure(r, p, err), p, nil)
		return
	}
	if id == sess.ID {
		h.setSession(w, "")
		redirect(w, r, "/login?done=logout")
		return
	}
	redirect(w, r, "/account?done=ended")
}

func (h *Handler) endOtherSessions(w http.ResponseWriter, r *http.Request, sess *account.Session) {
	if _, err := h.acc.RevokeOtherSessions(r.Context(), sess, h.ip(r)); err != nil {
		p := &page{}
		h.showSecurity(w, r, sess, h.failure(r, p, err), p, nil)
		return
	}
	redirect(w, r, "/account?done=others")
}
