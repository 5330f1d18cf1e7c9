package console

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// Every page renders with its headers: a strict CSP, no cache, nothing
// from another site, and a label for each visible input.
func TestPagesRenderWithLabelsAndStrictHeaders(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	anon, in := f.browser(), f.login("alice")
	pages := []struct {
		b    *browser
		path string
	}{
		{anon, "/signup"}, {anon, "/signup/sent"}, {anon, "/verify?token=x"}, {anon, "/login"}, {anon, "/forgot"},
		{anon, "/reset?token=x"}, {in, "/account"}, {in, "/account/password"}, {in, "/account/email"}, {in, "/account/confirm?next=email"},
	}
	input := regexp.MustCompile(`<input id="([a-z-]+)"`)
	for _, p := range pages {
		r := p.b.get(p.path).want(t, 200, "")
		if got := r.Header.Get("Content-Security-Policy"); got != pageCSP {
			t.Errorf("%s: CSP %q", p.path, got)
		}
		if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", p.path, r.Header)
		}
		lacks(t, p.path, r.body, "http://", "https://", "<script")
		for _, m := range input.FindAllStringSubmatch(r.body, -1) {
			if !strings.Contains(r.body, `<label for="`+m[1]+`">`) {
				t.Errorf("%s: input %s has no label", p.path, m[1])
			}
		}
	}
	css := anon.get(StylePath).want(t, 200, "")
	if css.Header.Get("Content-Type") != "text/css; charset=utf-8" || !strings.Contains(css.body, ".field-error") {
		t.Errorf("stylesheet: %v %.80s", css.Header, css.body)
	}
	icon := anon.get(IconPath).want(t, 200, "")
	if icon.Header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(icon.body, "<svg") {
		t.Errorf("icon: %v %.80s", icon.Header, icon.body)
	}
	contains(t, "every page", anon.get("/login").body, `<link rel="icon" href="/assets/favicon.svg"`)
}

// The walk a newcomer takes, on both engines: rules shown before
// submitting, errors next to their fields, the emailed link, the login
// cookie and the security page.
func TestSignUpVerifyLogIn(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, e.Open(t), "http://127.0.0.1:8080")
			b := f.browser()
			contains(t, "sign-up page", b.get("/signup").body, html.EscapeString(account.PasswordRules[0]), `aria-describedby="password-rules"`)

			for _, c := range []struct{ username, email, password, field, msg string }{
				{"a", "alice@example.com", password, "username", "Invalid username"},
				{"alice", "not-an-email", password, "email", "Invalid email address"},
				{"alice", "alice@example.com", "short", "password", "Invalid password: at least 10 characters"},
				{"alice", "alice@example.com", "alice@example.com", "password", "Invalid password: it must not be your username"},
				{"alice", "alice@example.com", "1234567890", "password", "Invalid password: it is one of the most common"},
			} {
				r := b.post("/signup", "username", c.username, "email", c.email, "password", c.password).want(t, 422, "")
				contains(t, "sign-up with a bad "+c.field, r.body, `<p class="field-error" id="`+c.field+`-error">`+c.msg, `id="`+c.field+`" `)
				lacks(t, "sign-up with a bad "+c.field, r.body, `class="form-error"`, `value="short"`, `value="1234567890"`)
				if c.field != "username" {
					contains(t, "the form filled in again", r.body, `value="alice"`)
				}
			}
			b.post("/signup", "username", "alice", "email", "alice@example.com", "password", password).want(t, 303, "/signup/sent")
			contains(t, "check-your-email page", b.get("/signup/sent").body, html.EscapeString(account.SignUpAnswer))

			// Not verified yet: the one login refusal.
			contains(t, "unverified login", b.post("/login", "identifier", "alice", "password", password).want(t, 401, "").body,
				html.EscapeString(account.ErrLoginFailed.Message))

			token := f.mail.link(t, "alice@example.com")
			f.secret("an emailed token", token)
			contains(t, "verify page", b.get("/verify?token="+token).want(t, 200, "").body, `<button type="submit">Confirm my email address`)
			b.post("/verify", "token", token).want(t, 303, "/login?done=verified")
			contains(t, "a used link", b.post("/verify", "token", token).want(t, 422, "").body, html.EscapeString(account.ErrBadLink.Message))
			contains(t, "login page after verifying", b.get("/login?done=verified").body, "Your email address is confirmed.")

			r := b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/wallet")
			var c *http.Cookie
			for _, k := range r.Cookies() {
				c = k
			}
			if c == nil || c.Name != "drip_session" || !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || len(c.Value) < 40 {
				t.Fatalf("session cookie %+v, want drip_session HttpOnly, SameSite=Lax, not Secure on http://127.0.0.1", c)
			}
			contains(t, "security page", b.get("/account").want(t, 200, "").body, "alice@example.com", "Turn on two-factor authentication",
				"TestBrowser/1.0", "This session", "<td>email verified</td>", "<td>login</td>")
		})
	}
}

// Served over https (or anywhere but plain-http localhost) the cookie is
// Secure, and named __Host- so no sibling subdomain can plant one.
func TestCookieSecureOffLocalhost(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"https://drip.example.com", "http://drip.example.com", "https://localhost:8443"} {
		f := newFixture(t, storetest.OpenSQLite(t), base)
		f.signUp("alice")
		r := f.browser().post("/login", "identifier", "alice", "password", password)
		c := r.Cookies()[0]
		if c.Name != "__Host-drip_session" || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" {
			t.Errorf("%s: cookie %+v, want __Host-drip_session Secure HttpOnly SameSite=Lax", base, c)
		}
	}
	for _, base := range []string{"http://localhost:8080", "http://[::1]:8080", "http://127.0.0.1:9"} {
		f := newFixture(t, storetest.OpenSQLite(t), base)
		f.signUp("alice")
		if c := f.browser().post("/login", "identifier", "alice", "password", password).Cookies()[0]; c.Secure || c.Name != "drip_session" {
			t.Errorf("%s: cookie %+v, want drip_session without Secure", base, c)
		}
	}
}

// No answer tells whether an account exists: a taken username or email
// signs up alike, a reset of an unknown address answers alike, and a
// wrong password reads as an unknown user.
func TestNoEnumeration(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.browser()
	for _, c := range [][]string{{"alice", "new@example.com"}, {"newbie", "alice@example.com"}, {"other", "other@example.com"}} {
		b.post("/signup", "username", c[0], "email", c[1], "password", password).want(t, 303, "/signup/sent")
	}
	b.post("/forgot", "email", "alice@example.com").want(t, 303, "/forgot?done=sent")
	b.post("/forgot", "email", "nobody@example.com").want(t, 303, "/forgot?done=sent")
	b.post("/verify/resend", "email", "alice@example.com").want(t, 303, "/signup/sent?done=resent")
	b.post("/verify/resend", "email", "nobody@example.com").want(t, 303, "/signup/sent?done=resent")
	wrong := b.post("/login", "identifier", "alice", "password", "wrong password!").want(t, 401, "")
	unknown := b.post("/login", "identifier", "nobody", "password", "wrong password!").want(t, 401, "")
	if strings.ReplaceAll(wrong.body, "alice", "nobody") != unknown.body {
		t.Errorf("a wrong password and an unknown user answer differently:\n%s\n---\n%s", wrong.body, unknown.body)
	}
}

// The session id is new at every login and after the second factor; the
// token before the second factor stops working.
func TestSessionIDChangesAtLoginAndAfterSecondFactor(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.login("alice")
	first := b.token()
	b.cookies["drip_session"].Value = "planted-by-someone-else"
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/wallet")
	if b.token() == first || b.token() == "planted-by-someone-else" {
		t.Fatal("the session id did not change at login")
	}
	// Logging in again ends the browser's previous session.
	second := b.token()
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/wallet")
	stale := f.browser()
	stale.cookies["drip_session"] = &http.Cookie{Name: "drip_session", Value: second}
	stale.get("/account").want(t, 303, "/login")
	secret, _ := f.enrol(b)
	b.post("/logout").want(t, 303, "/login?done=logout")
	if b.token() != "" {
		t.Fatal("logout left the cookie")
	}
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/login/code")
	pending := b.token()
	b.get("/account").want(t, 303, "/login/code")
	contains(t, "second-factor page", b.get("/login/code").want(t, 200, "").body, `<label for="code">`)
	b.post("/login/code", "code", f.code(secret)).want(t, 303, "/wallet")
	if b.token() == pending || b.token() == "" {
		t.Fatal("the session id did not change after the second factor")
	}
	old := f.browser()
	old.cookies["drip_session"] = &http.Cookie{Name: "drip_session", Value: pending}
	old.get("/account").want(t, 303, "/login")
	b.get("/account").want(t, 200, "")
}

// A form posted from another site is refused (D15), whichever header
// tells it; the same form from drip's own page goes through.
func TestCrossOriginPostRefused(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.login("alice")
	form := url.Values{"email": {"mallory@example.com"}}
	for _, h := range [][]string{{"Sec-Fetch-Site", "cross-site"}, {"Origin", "https://evil.example"}} {
		r := b.do(http.MethodPost, "/account/email", form, h...).want(t, 403, "")
		contains(t, "cross-origin post", r.body, "sent from another site")
		b.do(http.MethodPost, "/logout", nil, h...).want(t, 403, "")
	}
	b.get("/account").want(t, 200, "") // still logged in
	b.do(http.MethodPost, "/logout", nil, "Sec-Fetch-Site", "same-origin").want(t, 303, "/login?done=logout")
	b = f.login("alice")
	b.get("/logout").want(t, 404, "") // logging out is a POST: a link or an <img> cannot do it
	b.get("/account").want(t, 200, "")
}

// Guessing passwords is throttled with a clear "try again in N s" and a
// Retry-After, never a hang; the right password is refused too meanwhile.
func TestLoginThrottled(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.browser()
	for range 5 {
		b.post("/login", "identifier", "alice", "password", "wrong password!").want(t, 401, "")
	}
	start := time.Now()
	r := b.post("/login", "identifier", "alice", "password", password).want(t, 429, "")
	if time.Since(start) > 2*time.Second {
		t.Error("a throttled login hung")
	}
	if !regexp.MustCompile(`class="form-error" role="alert">Too many attempts: try again in \d+ s\.`).MatchString(r.body) || r.Header.Get("Retry-After") == "" {
		t.Errorf("throttled login: Retry-After %q\n%s", r.Header.Get("Retry-After"), r.body)
	}
	f.clock.Advance(15 * time.Minute)
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/wallet")
}

// TOTP: the enrolment page shows a QR code drawn by drip and the secret,
// a wrong first code shows the same secret again with the error next to
// the field; the recovery codes are shown once; a code is taken once; a
// recovery code works once; disabling needs a code.
func TestTwoFactor(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.login("alice")
	page := b.post("/account/totp").want(t, 200, "")
	contains(t, "enrolment page", page.body, `<img class="qr" src="data:image/png;base64,`, `id="totp-secret">`, `<label for="code">`)
	secret := secretRE.FindStringSubmatch(page.body)[1]
	f.secret("the TOTP secret", secret)
	otpauth := html.UnescapeString(regexp.MustCompile(`name="otpauth" value="([^"]+)"`).FindStringSubmatch(page.body)[1])
	wrong := b.post("/account/totp/confirm", "code", "000000", "otpauth", otpauth).want(t, 422, "")
	contains(t, "a wrong first code", wrong.body, `<p class="field-error" id="code-error">Wrong code`, `id="totp-secret">`+secret+`<`)
	codes := b.post("/account/totp/confirm", "code", f.code(secret), "otpauth", otpauth).want(t, 200, "")
	var recovery []string
	for _, m := range codesRE.FindAllStringSubmatch(codes.body, -1) {
		recovery = append(recovery, m[1])
		f.secret("a recovery code", m[1])
	}
	if len(recovery) != 10 {
		t.Fatalf("%d recovery codes shown, want 10", len(recovery))
	}
	after := b.get("/account").want(t, 200, "")
	contains(t, "security page with 2FA on", after.body, "Recovery codes left: <strong>10</strong>", "totp enabled")
	lacks(t, "security page after the codes' page", after.body, append([]string{secret}, recovery...)...)

	// Log in with the current code, then again with the same code: refused.
	f.clock.Advance(30 * time.Second) // the confirming code's step is used
	used := f.code(secret)
	b.post("/logout")
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/login/code")
	b.post("/login/code", "code", used).want(t, 303, "/wallet")
	b.post("/logout")
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/login/code")
	replay := b.post("/login/code", "code", used).want(t, 422, "")
	contains(t, "a replayed code", replay.body, `<p class="field-error" id="code-error">`+html.EscapeString(account.ErrWrongCode.Message))

	// A recovery code works once. (Codes are throttled too: 5 per 15 minutes.)
	f.clock.Advance(9 * time.Minute)
	b.post("/login/code", "code", strings.ToUpper(recovery[0])).want(t, 303, "/wallet")
	b.post("/logout")
	b.post("/login", "identifier", "alice", "password", password).want(t, 303, "/login/code")
	contains(t, "a reused recovery code", b.post("/login/code", "code", recovery[0]).want(t, 422, "").body, "Wrong code, or a code already used")
	b.post("/login/code", "code", recovery[1]).want(t, 303, "/wallet")
	contains(t, "security page", b.get("/account").body, "Recovery codes left: <strong>8</strong>")

	// Turning it off needs a current code.
	contains(t, "disable with a wrong code", b.post("/account/totp/disable", "code", "123456").want(t, 422, "").body,
		`<p class="field-error" id="code-error">Wrong code`)
	f.clock.Advance(6 * time.Minute)
	b.post("/account/totp/disable", "code", f.code(secret)).want(t, 303, "/account?done=totp-off")
	contains(t, "security page with 2FA off", b.get("/account?done=totp-off").body, "Two-factor authentication is off.", "totp disabled")
}

// A sensitive action more than 15 minutes after the last code asks for a
// code again on its own page, then goes on to the action.
func TestSensitiveActionAsksForCodeAgain(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	b := f.login("alice")
	secret, _ := f.enrol(b)
	f.clock.Advance(16 * time.Minute)
	b.get("/account").want(t, 200, "") // keeps the session from idling out
	b.get("/account/password").want(t, 303, "/account/confirm?next=%2Faccount%2Fpassword")
	b.post("/account/password", "current", password, "password", "a new long password").want(t, 303, "/account/confirm?next=%2Faccount%2Fpassword")
	b.post("/account/email", "email", "new@example.com").want(t, 303, "/account/confirm?next=%2Faccount%2Femail")
	page := b.get("/account/confirm?next=password").want(t, 200, "")
	contains(t, "re-verification page", page.body, `<label for="code">`, `name="next" value="/account/password"`)
	before := b.token()
	contains(t, "a wrong code", b.post("/account/confirm", "next", "password", "code", "000000").want(t, 422, "").body, `id="code-error"`)
	b.post("/account/confirm", "next", "password", "code", f.code(secret)).want(t, 303, "/account/password?done=confirmed")
	if b.token() == before {
		t.Error("the session id did not change after the code")
	}
	contains(t, "change-password page", b.get("/account/password?done=confirmed").want(t, 200, "").body, "Confirmed: go on.",
		html.EscapeString(account.PasswordRules[0]))
	contains(t, "a wrong current password", b.post("/account/password", "current", "not my password", "password", "a new long password").want(t, 422, "").body,
		`<p class="field-error" id="current-error">Your current password is wrong.`)
	contains(t, "a weak new password", b.post("/account/password", "current", password, "password", "short").want(t, 422, "").body,
		`<p class="field-error" id="password-error">Invalid password`)
	b.post("/account/password", "current", password, "password", "a new long password").want(t, 303, "/account?done=password")
	f.secret("the new password", "a new long password")
	b.post("/account/email", "email", "alice@example.com").want(t, 422, "")
	b.post("/account/email", "email", "new@example.com").want(t, 303, "/account?done=email")
	token := f.mail.link(t, "new@example.com")
	f.secret("an emailed token", token)
	b.post("/verify", "token", token).want(t, 303, "/account?done=verified")
	contains(t, "security page", b.get("/account").body, "new@example.com", "password changed", "email changed")

	// Without a second factor, the password confirms.
	f.clock.Advance(30 * time.Second)
	b.post("/account/totp/disable", "code", f.code(secret)).want(t, 303, "/account?done=totp-off")
	f.clock.Advance(16 * time.Minute)
	b.get("/account/email").want(t, 303, "/account/confirm?next=%2Faccount%2Femail")
	contains(t, "re-verification by password", b.get("/account/confirm?next=email").body, `<label for="password">Your password`)
	b.post("/account/confirm", "next", "email", "password", "a new long password").want(t, 303, "/account/email?done=confirmed")
	// next only ever names drip's own pages
	f.clock.Advance(16 * time.Minute)
	b.post("/account/confirm", "next", "//evil.example/", "password", "a new long password").want(t, 303, "/account?done=confirmed")
}

// The list of sessions ends one, or all but this one, at once.
func TestSessionsSignOutElsewhere(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	a, other, third := f.login("alice"), f.login("alice"), f.login("alice")
	other.ua, third.ua = "OtherBrowser/2", "ThirdBrowser/3"
	other.get("/account")
	page := a.get("/account").want(t, 200, "")
	if n := strings.Count(page.body, "<li>\n<div><strong>"); n != 3 {
		t.Errorf("%d sessions listed, want 3:\n%s", n, page.body)
	}
	id := regexp.MustCompile(`action="/account/sessions/(\d+)/end"`).FindStringSubmatch(page.body)[1]
	a.post("/account/sessions/"+id+"/end").want(t, 303, "/account?done=ended")
	a.post("/account/sessions/others/end").want(t, 303, "/account?done=others")
	other.get("/account").want(t, 303, "/login")
	third.get("/account").want(t, 303, "/login")
	contains(t, "security page", a.get("/account?done=others").body, "Your other sessions are signed out.", "sessions revoked")
	a.post("/account/sessions/999999/end").want(t, 404, "")
}

// Forgotten password: the emailed link sets a new one and ends every session.
func TestPasswordReset(t *testing.T) {
	f := sqlite(t)
	f.signUp("alice")
	in := f.login("alice")
	b := f.browser()
	b.post("/forgot", "email", "alice@example.com").want(t, 303, "/forgot?done=sent")
	contains(t, "forgot page", b.get("/forgot?done=sent").body, html.EscapeString(account.RequestAnswer))
	token := f.mail.link(t, "alice@example.com")
	f.secret("an emailed token", token)
	contains(t, "reset page", b.get("/reset?token="+token).want(t, 200, "").body, html.EscapeString(account.PasswordRules[0]))
	contains(t, "a weak password", b.post("/reset", "token", token, "password", "alice").want(t, 422, "").body, `id="password-error"`)
	b.post("/reset", "token", token, "password", "my brand new password").want(t, 303, "/login?done=reset")
	f.secret("the new password", "my brand new password")
	contains(t, "a used link", b.post("/reset", "token", token, "password", "my brand new password").want(t, 422, "").body, "This link is invalid")
	in.get("/account").want(t, 303, "/login")
	b.post("/login", "identifier", "alice@example.com", "password", "my brand new password").want(t, 303, "/wallet")
}

// The classic payloads typed into the username, email and login fields,
// and sent as a browser's name, come back escaped.
func TestUserInputEscaped(t *testing.T) {
	f := sqlite(t)
	payloads := []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `'><svg onload=alert(1)>`,
		`javascript:alert(1)`, `</textarea><script>alert(1)</script>`}
	raw := []string{"<script>alert", "<img src=x", "<svg onload"}
	b := f.browser()
	for _, p := range payloads {
		for _, r := range []*reply{
			b.post("/signup", "username", p, "email", p, "password", password),
			b.post("/signup", "username", "ok_name", "email", p+"@example.com", "password", password),
			b.post("/login", "identifier", p, "password", password),
			b.post("/forgot", "email", p),
		} {
			lacks(t, "a page after "+p, r.body, raw...)
		}
	}
	f.signUp("alice")
	in := f.browser()
	in.ua = `<script>alert(1)</script>"><img src=x onerror=alert(1)>`
	in.post("/login", "identifier", "alice", "password", password).want(t, 303, "/wallet")
	page := in.get("/account").want(t, 200, "")
	lacks(t, "security page with a hostile user agent", page.body, raw...)
	contains(t, "security page", page.body, "&lt;script&gt;alert(1)&lt;/script&gt;")
}

// Unknown paths under the console's prefixes answer a page, not a panic.
func TestUnknownPage(t *testing.T) {
	f := sqlite(t)
	contains(t, "unknown page", f.browser().get("/account/nope").want(t, 404, "").body, "There is no such page.")
	f.signUp("alice")
	contains(t, "unknown page", f.login("alice").get("/signup/nope").want(t, 404, "").body, "There is no such page.")
}

// The confirm page sends the browser back only to the console's own
// pages: never off the site, whatever next says.
func TestNextPageStaysOnSite(t *testing.T) {
	t.Parallel()
	for next, want := range map[string]string{
		"password": "/account/password", "email": "/account/email",
		"/manage/7/keys":           "/manage/7/keys",
		"/manage/7/keys?step=mint": "/manage/7/keys?step=mint",
		"/operator/users":          "/operator/users",
		"":                         "", "nope": "", "/": "", "/login": "",
		"//evil.example/account":        "",
		"https://evil.example/manage/1": "",
		"/\\evil.example/manage":        "",
		"/manage/1\r\nSet-Cookie: x=y":  "",
		"javascript:alert(1)//manage":   "",
		"http:/manage/1":                "",
		"/accounting":                   "",
		// A checkout's page, exactly: a buyer logs in to pay and comes back.
		"/merchant/checkout/chk_0123abcd":              "/merchant/checkout/chk_0123abcd",
		"/merchant/checkout/":                          "",
		"/merchant/checkout/chk_1/pay":                 "",
		"/merchant/checkout/chk_1?next=//evil":         "",
		"/merchant/checkout/chk_1#x":                   "",
		"/merchant/checkout/chk_1%2F..%2F..%2Flogin":   "",
		"/merchant/checkout/../../login":               "",
		"/merchant/checkouts/chk_1":                    "",
		"/merchant/webscr":                             "",
		"//evil.example/merchant/checkout/chk_1":       "",
		"https://evil.example/merchant/checkout/chk_1": "",
		"/merchant/checkout/chk_1\\evil":               "",
	} {
		if got := nextPage(next); got != want {
			t.Errorf("nextPage(%q) = %q, want %q", next, got, want)
		}
	}
}
