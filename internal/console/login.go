package console

import (
	"net/http"
	"net/url"

	"github.com/dripfaucet/drip/internal/account"
)

// flashes are the fixed notices a redirect may ask for (?done=...): the
// URL names one, it never carries text to show.
var flashes = map[string]string{
	"verified":  "Your email address is confirmed.",
	"reset":     "Your password was reset, and every session signed out: log in with the new one.",
	"logout":    "You are logged out.",
	"resent":    account.RequestAnswer,
	"sent":      account.RequestAnswer,
	"totp-off":  "Two-factor authentication is off.",
	"password":  "Your password was changed, and your other sessions signed out.",
	"email":     "We sent a link to the new address: your email changes when you open it.",
	"others":    "Your other sessions are signed out.",
	"ended":     "The session is signed out.",
	"confirmed": "Confirmed: go on.",

	// The wallet pages.
	"address-linked":  "The address is linked: payouts to it, in its coin, reach you.",
	"address-removed": "The address is removed: payouts to it no longer reach you.",
	"funded":          "Moved: the faucet can pay from it now.",

	// The merchant payments received.
	"callback-resent": "The callback is queued again: its first attempt is due now.",

	// A faucet's API keys page.
	"key-revoked":  "The key is revoked: it is refused from now on, on every node.",
	"v1-confirmed": "The rotation is confirmed: the new v1 key is the only one, and the old key is refused from now on.",

	// A faucet's webhooks page.
	"webhook-disabled": "The endpoint is disabled: nothing is sent to it until you enable it.",
	"webhook-enabled":  "The endpoint is enabled: deliveries to it start again.",
	"webhook-deleted":  "The endpoint is deleted, with its deliveries.",
	"webhook-test":     "A test event is queued: its delivery is at the top of the list.",
	"webhook-resent":   "The delivery is queued again: its first attempt is due now.",

	// A faucet's management pages.
	"manage-settings":      "The faucet's settings are saved.",
	"manage-limit-added":   "The send limit is added.",
	"manage-limit-removed": "The send limit is removed.",
	"manage-limit-gone":    "That send limit was removed already.",
	"manage-whitelist":     "The IP whitelist is saved.",
	"manage-antifraud-on":  "Anti-fraud rank checks are on.",
	"manage-antifraud-off": "Anti-fraud rank checks are off; the blacklist still applies.",
	"manage-rules":         "The anti-fraud rules are saved.",
	"manage-alerts":        "The low-balance alert is saved.",
	"manage-listing":       "Listing requested: the cost was paid and the request awaits the operator's decision.",

	// The operator pages; each action is in the operator log.
	"op-suspended":     "The user is suspended: they cannot log in or be paid, and their faucets' keys are refused.",
	"op-unsuspended":   "The user is active again.",
	"op-verified":      "The user's email is marked verified.",
	"op-deposited":     "The deposit is made, in one ledger transfer from system:deposits.",
	"op-coin-enabled":  "The coin is enabled.",
	"op-coin-disabled": "The coin is disabled: it cannot be sent or requested until it is enabled again.",
	"op-min-payout":    "The minimum payout is set.",
	"op-listing-cost":  "The listing cost is set.",
	"op-approved":      "The request is approved: the faucet is on the public list.",
	"op-rejected":      "The request is rejected and its fee refunded to the faucet.",
}

func flash(r *http.Request) string { return flashes[r.URL.Query().Get("done")] }

func (h *Handler) signUpPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "signup", &page{Title: "Sign up", Rules: account.PasswordRules}, nil)
}

func (h *Handler) signUp(w http.ResponseWriter, r *http.Request) {
	username, email := r.PostFormValue("username"), r.PostFormValue("email")
	err := h.acc.SignUp(r.Context(), username, email, r.PostFormValue("password"), h.ip(r))
	if err != nil {
		p := &page{Title: "Sign up", Rules: account.PasswordRules, Form: map[string]string{"username": username, "email": email}}
		h.render(w, r, h.failure(r, p, err), "signup", p, err)
		return
	}
	redirect(w, r, "/signup/sent")
}

func (h *Handler) signUpSent(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "sent", &page{Title: "Check your email", Flash: flash(r), Data: account.SignUpAnswer}, nil)
}

// resend asks for a new verification link; the answer is the same
// whatever the address.
func (h *Handler) resend(w http.ResponseWriter, r *http.Request) {
	email := r.PostFormValue("email")
	if err := h.acc.ResendVerification(r.Context(), email, h.ip(r)); err != nil {
		p := &page{Title: "Check your email", Data: account.SignUpAnswer, Form: map[string]string{"email": email}}
		h.render(w, r, h.failure(r, p, err), "sent", p, err)
		return
	}
	redirect(w, r, "/signup/sent?done=resent")
}

// verifyPage asks for a click before using the emailed link, so a mail
// scanner that fetches links does not use it up.
func (h *Handler) verifyPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "verify", &page{Title: "Confirm your email", Form: map[string]string{"token": r.URL.Query().Get("token")}}, nil)
}

func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	if err := h.acc.VerifyEmail(r.Context(), r.PostFormValue("token"), h.ip(r)); err != nil {
		p := &page{Title: "Confirm your email"}
		h.render(w, r, h.failure(r, p, err), "verify", p, err)
		return
	}
	if _, err := h.acc.Authenticate(r.Context(), h.token(r)); err == nil {
		redirect(w, r, "/account?done=verified") // an email change, while logged in
		return
	}
	redirect(w, r, "/login?done=verified")
}

// loginPage asks for the username and password; ?next= names the page
// to land on after logging in (nextPage: one of drip's own, such as a
// checkout the buyer came from), carried through the second factor.
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "login", &page{Title: "Log in", Flash: flash(r),
		Form: map[string]string{"next": nextPage(r.URL.Query().Get("next"))}}, nil)
}

// landing is where a login ends: next when it is one of drip's own pages
// (nextPage), else the wallet.
func landing(next string) string {
	if next = nextPage(next); next != "" {
		return next
	}
	return "/wallet"
}

// login opens a session with a new token (D15), and asks for the second
// factor when the user has one.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	identifier, next := r.PostFormValue("identifier"), nextPage(r.PostFormValue("next"))
	token, sess, err := h.acc.Login(r.Context(), identifier, r.PostFormValue("password"), h.ip(r), r.UserAgent())
	if err != nil {
		p := &page{Title: "Log in", Form: map[string]string{"identifier": identifier, "next": next}}
		h.render(w, r, h.failure(r, p, err), "login", p, err)
		return
	}
	// The browser's previous session, if any, ends: one browser, one session.
	if prev, err := h.acc.SessionForSecondFactor(r.Context(), h.token(r)); err == nil && prev.ID != sess.ID {
		if err := h.acc.Logout(r.Context(), prev, h.ip(r)); err != nil {
			h.log.WarnContext(r.Context(), "console: ending the previous session failed", "err", err)
		}
	}
	h.setSession(w, token)
	if sess.Pending() {
		if next != "" {
			redirect(w, r, "/login/code?next="+url.QueryEscape(next))
			return
		}
		redirect(w, r, "/login/code")
		return
	}
	redirect(w, r, landing(next))
}

func (h *Handler) codePage(w http.ResponseWriter, r *http.Request) {
	sess, err := h.acc.SessionForSecondFactor(r.Context(), h.token(r))
	if err != nil {
		redirect(w, r, "/login")
		return
	}
	next := r.URL.Query().Get("next")
	if !sess.Pending() {
		redirect(w, r, landing(next))
		return
	}
	h.render(w, r, http.StatusOK, "code", &page{Title: "Two-factor authentication", Form: map[string]string{"next": nextPage(next)}}, nil)
}

// code passes the second factor; the session gets a new token (D15).
func (h *Handler) code(w http.ResponseWriter, r *http.Request) {
	next := nextPage(r.PostFormValue("next"))
	sess, err := h.acc.SessionForSecondFactor(r.Context(), h.token(r))
	if err != nil {
		p := &page{Title: "Log in", Form: map[string]string{"next": next}}
		h.render(w, r, h.failure(r, p, err), "login", p, err)
		return
	}
	token, err := h.acc.PassSecondFactor(r.Context(), sess, r.PostFormValue("code"), h.ip(r))
	if err != nil {
		p := &page{Title: "Two-factor authentication", Form: map[string]string{"next": next}}
		h.render(w, r, h.failure(r, p, err), "code", p, err)
		return
	}
	h.setSession(w, token)
	redirect(w, r, landing(next))
}

// logout ends the session, a pending one too.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if sess, err := h.acc.SessionForSecondFactor(r.Context(), h.token(r)); err == nil {
		if err := h.acc.Logout(r.Context(), sess, h.ip(r)); err != nil {
			p := &page{Title: "Log out"}
			h.render(w, r, h.failure(r, p, err), "problem", p, err)
			return
		}
	}
	h.setSession(w, "")
	redirect(w, r, "/login?done=logout")
}

func (h *Handler) forgotPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "forgot", &page{Title: "Forgot your password", Flash: flash(r)}, nil)
}

func (h *Handler) forgot(w http.ResponseWriter, r *http.Request) {
	email := r.PostFormValue("email")
	if err := h.acc.RequestPasswordReset(r.Context(), email, h.ip(r)); err != nil {
		p := &page{Title: "Forgot your password", Form: map[string]string{"email": email}}
		h.render(w, r, h.failure(r, p, err), "forgot", p, err)
		return
	}
	redirect(w, r, "/forgot?done=sent")
}

func (h *Handler) resetPage(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	if token == "" {
		redirect(w, r, "/forgot")
		return
	}
	h.render(w, r, http.StatusOK, "reset", &page{Title: "Choose a new password", Rules: account.PasswordRules,
		Form: map[string]string{"token": token}}, nil)
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	token := r.PostFormValue("token")
	if err := h.acc.ResetPassword(r.Context(), token, r.PostFormValue("password"), h.ip(r)); err != nil {
		p := &page{Title: "Choose a new password", Rules: account.PasswordRules, Form: map[string]string{"token": token}}
		h.render(w, r, h.failure(r, p, err), "reset", p, err)
		return
	}
	h.setSession(w, "")
	redirect(w, r, "/login?done=reset")
}
