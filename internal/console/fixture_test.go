package console

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/dripfaucet/drip/internal/account"
	"github.com/dripfaucet/drip/internal/clocktest"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
)

// t0 is 5 s into a TOTP step.
var t0 = time.Date(2026, 11, 25, 9, 0, 5, 0, time.UTC)

// outbox keeps the emails sent.
type outbox struct {
	mu   sync.Mutex
	msgs []mail.Message
}

func (o *outbox) Send(_ context.Context, m mail.Message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, m)
	return nil
}

var linkRE = regexp.MustCompile(`/(verify|reset)\?token=([A-Za-z0-9_-]{43})`)

// link is the token of the latest link to the address.
func (o *outbox) link(t testing.TB, to string) string {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.msgs) - 1; i >= 0; i-- {
		if m := linkRE.FindStringSubmatch(o.msgs[i].Body); o.msgs[i].To == to && m != nil {
			return m[2]
		}
	}
	t.Fatalf("no link emailed to %s", to)
	return ""
}

type fixture struct {
	t       *testing.T
	st      store.Store
	clock   *clocktest.Clock
	mail    *outbox
	logs    *logtest.Buffer
	acc     *account.Service
	h       *Handler
	secrets map[string]string // what must never be logged, by what it is
}

const password = "correct horse battery"

func newFixture(t *testing.T, st store.Store, baseURL string) *fixture {
	t.Helper()
	f := &fixture{t: t, st: st, clock: clocktest.New(t0), mail: &outbox{}, logs: &logtest.Buffer{}, secrets: map[string]string{}}
	log := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	users, err := user.NewRegistry(ctx, st, f.clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	f.acc, err = account.New(ctx, account.Params{Store: st, Users: users, Mail: f.mail, Log: log, Now: f.clock.Now,
		Config: account.Config{BaseURL: baseURL}})
	if err != nil {
		t.Fatal(err)
	}
	if f.h, err = New(Deps{Accounts: f.acc, Log: log, BaseURL: baseURL}); err != nil {
		t.Fatal(err)
	}
	f.secret("the password", password)
	t.Cleanup(func() {
		logs := f.logs.String()
		for s, what := range f.secrets {
			if strings.Contains(logs, s) {
				t.Errorf("the log holds %s:\n%s", what, logs)
			}
		}
	})
	return f
}

// sqlite is a fixture over a fresh SQLite store served at 127.0.0.1.
func sqlite(t *testing.T) *fixture {
	t.Parallel()
	return newFixture(t, storetest.OpenSQLite(t), "http://127.0.0.1:8080")
}

// secret notes something no log line may hold.
func (f *fixture) secret(what, s string) {
	if s != "" {
		f.secrets[s] = what
	}
}

// browser keeps one visitor's cookies.
type browser struct {
	f       *fixture
	cookies map[string]*http.Cookie
	ua      string
}

func (f *fixture) browser() *browser {
	return &browser{f: f, cookies: map[string]*http.Cookie{}, ua: "TestBrowser/1.0"}
}

type reply struct {
	*http.Response
	body         string
	method, path string
}

func (r *reply) location() string { return r.Header.Get("Location") }

func (b *browser) do(method, path string, form url.Values, header ...string) *reply {
	b.f.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, "http://127.0.0.1:8080"+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("User-Agent", b.ua)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	b.f.h.ServeHTTP(rec, req)
	res := rec.Result()
	for _, c := range res.Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
			b.f.secret("a session token", c.Value)
		}
	}
	return &reply{Response: res, body: rec.Body.String(), method: method, path: path}
}

func (b *browser) get(path string) *reply { return b.do(http.MethodGet, path, nil) }

func (b *browser) post(path string, kv ...string) *reply {
	form := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	return b.do(http.MethodPost, path, form)
}

func (b *browser) token() string {
	if c, ok := b.cookies["drip_session"]; ok {
		return c.Value
	}
	return ""
}

// want checks a reply's status and, for a redirect, where it goes.
func (r *reply) want(t *testing.T, status int, location string) *reply {
	t.Helper()
	if r.StatusCode != status || r.location() != location {
		t.Fatalf("%s %s: status %d to %q, want %d to %q\n%s", r.method, r.path, r.StatusCode, r.location(), status, location, r.body)
	}
	return r
}

// signUp signs a user up through the pages and opens the emailed link.
func (f *fixture) signUp(name string) {
	f.t.Helper()
	b := f.browser()
	b.post("/signup", "username", name, "email", name+"@example.com", "password", password).want(f.t, 303, "/signup/sent")
	token := f.mail.link(f.t, name+"@example.com")
	f.secret("an emailed token", token)
	b.post("/verify", "token", token).want(f.t, 303, "/login?done=verified")
}

// login logs a new browser in as name, without a second factor.
func (f *fixture) login(name string) *browser {
	f.t.Helper()
	b := f.browser()
	b.post("/login", "identifier", name, "password", password).want(f.t, 303, "/wallet")
	return b
}

func (f *fixture) code(secret string) string {
	f.t.Helper()
	c, err := totp.GenerateCodeCustom(secret, f.clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

var (
	secretRE = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)
	codesRE  = regexp.MustCompile(`<li><code>([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})</code></li>`)
)

// enrol turns the second factor on through the pages; it returns the
// secret and the recovery codes, and moves the clock to the next step.
func (f *fixture) enrol(b *browser) (string, []string) {
	f.t.Helper()
	page := b.post("/account/totp").want(f.t, 200, "")
	m := secretRE.FindStringSubmatch(page.body)
	if m == nil {
		f.t.Fatalf("the enrolment page shows no secret:\n%s", page.body)
	}
	secret := m[1]
	f.secret("the TOTP secret", secret)
	otpauth := regexp.MustCompile(`name="otpauth" value="([^"]+)"`).FindStringSubmatch(page.body)[1]
	codes := b.post("/account/totp/confirm", "code", f.code(secret), "otpauth", strings.ReplaceAll(otpauth, "&amp;", "&")).want(f.t, 200, "")
	var out []string
	for _, m := range codesRE.FindAllStringSubmatch(codes.body, -1) {
		out = append(out, m[1])
		f.secret("a recovery code", m[1])
	}
	if len(out) != account.RecoveryCodes {
		f.t.Fatalf("the codes page shows %d recovery codes, want %d:\n%s", len(out), account.RecoveryCodes, codes.body)
	}
	f.clock.Advance(30 * time.Second)
	return secret, out
}

func contains(t *testing.T, what, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, body)
		}
	}
}

func lacks(t *testing.T, what, body string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(body, w) {
			t.Errorf("%s holds %q:\n%s", what, w, body)
		}
	}
}
