// Package console serves the web console's pages (issue 11): for now the
// account pages (sign-up, email verification, login with the second
// factor, password reset, and the account's security page). Pages are
// html/template files and one stylesheet, embedded in the binary; they
// work without JavaScript and load nothing from another site. Handlers
// decode a form, call internal/account, which holds every rule, and
// render; this package adds only what belongs to the web: the session
// cookie, the cross-origin check and where an error is shown (D15).
package console

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/audit"
	"github.com/dripfaucet/drip/internal/coin"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/key"
	"github.com/dripfaucet/drip/internal/ledger"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/merchant"
	"github.com/dripfaucet/drip/internal/operation"
	"github.com/dripfaucet/drip/internal/price"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/user"
	"github.com/dripfaucet/drip/internal/webhook"
)

//go:embed templates assets
var files embed.FS

// Patterns are the paths the console answers, for the server's mux.
var Patterns = []string{"/{$}", "/wallet", "/wallet/", "/manage", "/manage/", "/operator", "/operator/", "/signup", "/signup/", "/verify", "/verify/", "/login", "/login/", "/logout",
	"/forgot", "/reset", "/account", "/account/", "/merchant/", StylePath, ScriptPath, IconPath}

// The files a page loads, all embedded in the binary: the stylesheet, the
// one script (the copy button beside a key shown once; every page works
// without it) and the icon.
const (
	StylePath  = "/assets/console.css"
	ScriptPath = "/assets/console.js"
	IconPath   = "/assets/favicon.svg"
)

// assets are those files: their path, embedded file and type.
var assets = []struct{ path, file, ctype string }{
	{StylePath, "assets/console.css", "text/css; charset=utf-8"},
	{ScriptPath, "assets/console.js", "text/javascript; charset=utf-8"},
	{IconPath, "assets/favicon.svg", "image/svg+xml"},
}

// Deps are what New needs.
type Deps struct {
	Accounts *account.Service
	// The services behind the wallet, faucet and operator pages: a page
	// calls the operation or service that v2 and the tool server call,
	// never a copy of its rules (issue 7).
	Ops     *operation.Service
	Store   store.Store
	Users   *user.Registry
	Faucets *faucet.Service
	Keys    *key.Service
	Coins   *coin.Catalog
	Ledger  *ledger.Ledger
	Listing *listing.Service
	Audit   *audit.Service
	Prices  price.Source
	// Webhooks are the faucets' webhook endpoints and deliveries: only
	// the console registers and changes them (D54).
	Webhooks *webhook.Endpoints
	// Merchant is the hosted checkout (spec 4.4): the payment form, the
	// buyer's pages and the token's verification; nil leaves them out.
	Merchant *merchant.Service
	Now      func() time.Time
	Log      *slog.Logger
	// BaseURL is where drip is served (--base-url): its scheme and host
	// decide whether the cookie is Secure (always, except on plain-http
	// localhost).
	BaseURL string
	// ClientIP tells the caller's address (server.ClientIP); nil: the
	// connection's.
	ClientIP func(*http.Request) netip.Addr
}

// Handler serves the console's pages.
type Handler struct {
	d        Deps
	acc      *account.Service
	log      *slog.Logger
	clientIP func(*http.Request) netip.Addr
	secure   bool
	cookie   string
	pages    map[string]*template.Template
	next     http.Handler
	recon    *reconciler // the operator overview's checks of the ledger
}

// pageCSP lets a page load its own stylesheet, images (the QR code is a
// data: URI) and script (ScriptPath, the only one drip serves) and post
// forms to drip only; no inline script runs at all.
const pageCSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// csp is a page's policy: pageCSP, its forms also allowed to end at the
// origins formTo (a checkout's Pay and Cancel are answered by a redirect
// to the merchant's site, which form-action governs too).
func csp(formTo []string) string {
	if len(formTo) == 0 {
		return pageCSP
	}
	return strings.Replace(pageCSP, "form-action 'self'", "form-action 'self' "+strings.Join(formTo, " "), 1)
}

// New returns the console's handler.
func New(d Deps) (*Handler, error) {
	if d.Accounts == nil {
		return nil, errors.New("console: Accounts is required")
	}
	u, err := url.Parse(d.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("console: BaseURL must be an http or https URL")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	h := &Handler{d: d, acc: d.Accounts, log: d.Log, clientIP: d.ClientIP, pages: map[string]*template.Template{},
		recon: &reconciler{now: d.Now}}
	h.recon.reconcile = func(context.Context) (*ledger.Report, error) { return nil, errors.New("console: no ledger to check") }
	if d.Ledger != nil {
		h.recon.reconcile = d.Ledger.Reconcile
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	// D15: Secure except on plain-http localhost, where a browser would
	// not send a Secure cookie back. A Secure cookie takes the __Host-
	// prefix, so a sibling subdomain cannot plant one.
	h.secure = !(u.Scheme == "http" && isLoopback(u.Hostname()))
	h.cookie = "drip_session"
	if h.secure {
		h.cookie = "__Host-drip_session"
	}
	entries, err := files.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+e.Name())
		if err != nil {
			return nil, err
		}
		h.pages[name] = t
	}
	for _, a := range assets { // a missing file fails here, not on a page
		if _, err := files.ReadFile(a.file); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	h.routes(mux)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusForbidden, "problem", &page{Title: "Refused",
			Error: "This form was sent from another site, so it was refused. Open the page on this site and send it again."}, nil)
	}))
	if d.Merchant != nil {
		// The payment form is posted by the buyer's browser from the
		// merchant's site, any site (spec 4.4): the one POST the
		// cross-origin check lets through (D15). It is safe to admit
		// because it creates nothing but an unpaid checkout from the
		// form's own fields, and reads no session: a forged one makes a
		// page to review and no more. Money moves only on the checkout
		// page's Pay, a same-origin POST the check still guards.
		cop.AddInsecureBypassPattern("POST " + WebscrPath)
	}
	h.next = cop.Handler(mux)
	return h, nil
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	// event reads a security log kind as words: "second_factor_passed"
	// is "second factor passed".
	"event": func(kind string) string { return strings.ReplaceAll(kind, "_", " ") },
	// hasPrefix tells a login for a checkout (next) from any other.
	"hasPrefix": strings.HasPrefix,
	// payouts is a count of payouts in words: "1 payout", "2 payouts".
	"payouts": payoutCount,
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.next.ServeHTTP(w, r) }

func (h *Handler) routes(mux *http.ServeMux) {
	for _, a := range assets {
		mux.HandleFunc("GET "+a.path, serveAsset(a.file, a.ctype))
	}
	mux.HandleFunc("GET /signup", h.signUpPage)
	mux.HandleFunc("POST /signup", h.signUp)
	mux.HandleFunc("GET /signup/sent", h.signUpSent)
	mux.HandleFunc("POST /verify/resend", h.resend)
	mux.HandleFunc("GET /verify", h.verifyPage)
	mux.HandleFunc("POST /verify", h.verify)
	mux.HandleFunc("GET /login", h.loginPage)
	mux.HandleFunc("POST /login", h.login)
	mux.HandleFunc("GET /login/code", h.codePage)
	mux.HandleFunc("POST /login/code", h.code)
	mux.HandleFunc("POST /logout", h.logout)
	mux.HandleFunc("GET /forgot", h.forgotPage)
	mux.HandleFunc("POST /forgot", h.forgot)
	mux.HandleFunc("GET /reset", h.resetPage)
	mux.HandleFunc("POST /reset", h.reset)
	mux.Handle("GET /account", h.auth(h.securityPage))
	mux.Handle("POST /account/totp", h.auth(h.beginTOTP))
	mux.Handle("POST /account/totp/confirm", h.auth(h.confirmTOTP))
	mux.Handle("POST /account/totp/disable", h.auth(h.disableTOTP))
	mux.Handle("POST /account/recovery-codes", h.auth(h.newRecoveryCodes))
	mux.Handle("GET /account/password", h.auth(h.sensitivePage("password")))
	mux.Handle("POST /account/password", h.auth(h.changePassword))
	mux.Handle("GET /account/email", h.auth(h.sensitivePage("email")))
	mux.Handle("POST /account/email", h.auth(h.changeEmail))
	mux.Handle("GET /account/confirm", h.auth(h.confirmPage))
	mux.Handle("POST /account/confirm", h.auth(h.confirm))
	mux.Handle("POST /account/sessions/{id}/end", h.auth(h.endSession))
	mux.Handle("POST /account/sessions/others/end", h.auth(h.endOtherSessions))
	h.keysRoutes(mux)
	h.webhooksRoutes(mux)
	h.manageRoutes(mux)
	h.walletRoutes(mux)
	h.operatorRoutes(mux)
	h.merchantRoutes(mux)
	mux.HandleFunc("GET /{$}", h.home)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.render(w, r, http.StatusNotFound, "problem", &page{Title: "Not found", Error: "There is no such page."}, nil)
	})
}

// home is the console's front door: the wallet for a logged-in visitor,
// the login page for anyone else.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	if _, err := h.acc.Authenticate(r.Context(), h.token(r)); err == nil {
		redirect(w, r, "/wallet")
		return
	}
	redirect(w, r, "/login")
}

// serveAsset serves an embedded file, cached for an hour.
func serveAsset(file, ctype string) http.HandlerFunc {
	body, _ := files.ReadFile(file) // New checked that it is there
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "public, max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(body)
	}
}

// page is what every template gets.
type page struct {
	Title  string
	User   *drip.User        // the logged-in user, for the header; nil when none
	Nav    string            // the header's section to mark: wallet, manage, operator or account
	Wide   bool              // a page of tables, in the wider column
	Flash  string            // a fixed notice ("Your password was changed.")
	Error  string            // an error about the whole form
	Fields map[string]string // errors next to their fields, by field name
	Form   map[string]string // what the user typed, to fill in again (never a password or code)
	Rules  []string          // the password rules, shown before submitting
	Data   any               // the page's own
	// FormTo are origins besides drip's own that the page's forms may
	// end at, through a redirect (csp).
	FormTo []string
}

// render writes a page whole, or a clean 500 if it fails to render.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page, err error) {
	if p.Form == nil {
		p.Form = map[string]string{}
	}
	if p.Nav == "" {
		p.Nav = section(r.URL.Path)
	}
	var body bytes.Buffer
	t, ok := h.pages[name]
	if !ok {
		h.log.ErrorContext(r.Context(), "console: no such template", "page", name)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	if rerr := t.Execute(&body, p); rerr != nil {
		h.log.ErrorContext(r.Context(), "console: page failed to render", "page", name, "err", rerr)
		http.Error(w, "Internal error.", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", csp(p.FormTo))
	hd.Set("Referrer-Policy", "no-referrer") // a /reset?token= page must not pass its token on
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	var de *drip.Error
	if errors.As(err, &de) && de.RetryAfter > 0 {
		hd.Set("Retry-After", strconv.Itoa(int((de.RetryAfter+time.Second-1)/time.Second)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body.Bytes())
}

// section is the header's section of a path.
func section(path string) string {
	for _, s := range []string{"wallet", "manage", "operator", "account"} {
		if path == "/"+s || strings.HasPrefix(path, "/"+s+"/") {
			return s
		}
	}
	return ""
}

// statuses is the one table from an error's code to the page's status.
var statuses = map[drip.Code]int{
	drip.CodeInvalid:         http.StatusUnprocessableEntity,
	drip.CodeUnauthenticated: http.StatusUnauthorized,
	drip.CodeForbidden:       http.StatusForbidden,
	drip.CodeRateLimited:     http.StatusTooManyRequests,
	drip.CodeNotFound:        http.StatusNotFound,
	drip.CodeConflict:        http.StatusConflict,
	drip.CodeUnavailable:     http.StatusServiceUnavailable,
}

// fields tells which field an account error is about, by the start of
// its message; an error of no field is shown above the form.
var fields = []fieldPrefix{
	{"Invalid username", "username"},
	{"Invalid email", "email"},
	{"This is already your email", "email"},
	{"Invalid password", "password"},
	{"Your current password", "current"},
	{"Wrong password", "password"},
	{"Wrong code", "code"},
	{"Enter the code", "code"},
}

// fieldPrefix names the field of the errors whose message starts with
// prefix.
type fieldPrefix struct{ prefix, field string }

// toField moves the error above p's form next to its field, when its
// message starts with a prefix of table: the one rule of where an error
// goes, for each area's table.
func toField(p *page, table []fieldPrefix) {
	for _, f := range table {
		if p.Error != "" && strings.HasPrefix(p.Error, f.prefix) {
			if p.Fields == nil {
				p.Fields = map[string]string{}
			}
			p.Fields[f.field], p.Error = p.Error, ""
			return
		}
	}
}

// failure puts err on p, next to its field or above the form, and returns
// the page's status. An error without a code is "Internal error." and is
// logged once, here (D25).
func (h *Handler) failure(r *http.Request, p *page, err error) int {
	var de *drip.Error
	if !errors.As(err, &de) {
		h.log.ErrorContext(r.Context(), "console: request failed", "path", r.URL.Path, "err", err)
		p.Error = "Internal error: try again later."
		return http.StatusInternalServerError
	}
	status, ok := statuses[de.Code]
	if !ok {
		// A refusal of what was typed (an amount, a currency, a balance
		// too low) is the user's to fix: never a 500.
		status = http.StatusUnprocessableEntity
		if de.Code.Fault() {
			status = http.StatusInternalServerError
		}
	}
	p.Error = de.Message
	toField(p, fields)
	return status
}

// ip is the caller's address for the security log.
func (h *Handler) ip(r *http.Request) string {
	if h.clientIP != nil {
		return h.clientIP(r).String()
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// setSession gives the browser a session's token; "" ends it.
func (h *Handler) setSession(w http.ResponseWriter, token string) {
	c := &http.Cookie{Name: h.cookie, Value: token, Path: "/", HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode}
	if token == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

func (h *Handler) token(r *http.Request) string {
	c, err := r.Cookie(h.cookie)
	if err != nil {
		return ""
	}
	return c.Value
}

func redirect(w http.ResponseWriter, r *http.Request, to string) {
	http.Redirect(w, r, to, http.StatusSeeOther)
}
