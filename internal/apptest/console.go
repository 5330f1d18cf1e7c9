package apptest

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/user"
)

// Password is the password of the members Member creates.
const Password = "correct horse battery"

// Member creates a verified, active user with Password; name must be
// unique in the env. operator gives the operator role.
func (e *Env) Member(t testing.TB, username string, operator bool) *drip.User {
	t.Helper()
	u, err := e.App.Users.Create(context.Background(), user.CreateParams{
		Username: username, Email: username + "@example.com", Password: Password, Verified: true, Operator: operator,
	})
	if err != nil {
		t.Fatalf("create member %s: %v", username, err)
	}
	return u
}

// Browser is one visitor of the console (Options.Console): it keeps its
// cookies and does not follow redirects, so a test sees each one.
type Browser struct {
	env    *Env
	client *http.Client
}

// Page is a console reply.
type Page struct {
	Status   int
	Location string // where a redirect goes
	Header   http.Header
	Body     string
}

// Browser starts a visitor with no cookies.
func (e *Env) Browser(t testing.TB) *Browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Browser{env: e, client: c}
}

// LogIn logs the browser in as username with Password (a member without
// a second factor) and fails the test unless it lands in the console.
func (b *Browser) LogIn(t testing.TB, username string) *Browser {
	t.Helper()
	p := b.Post(t, "/login", "identifier", username, "password", Password)
	if p.Status != http.StatusSeeOther {
		t.Fatalf("log in as %s: status %d\n%s", username, p.Status, p.Body)
	}
	return b
}

// Get fetches a console path.
func (b *Browser) Get(t testing.TB, path string) *Page {
	t.Helper()
	return b.Do(t, http.MethodGet, path, nil)
}

// Post sends a form (key, value, key, value...) to a console path, as
// the console's own page would: same origin.
func (b *Browser) Post(t testing.TB, path string, kv ...string) *Page {
	t.Helper()
	form := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	return b.Do(t, http.MethodPost, path, form)
}

// Do sends a request with an optional form.
func (b *Browser) Do(t testing.TB, method, path string, form url.Values) *Page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.env.Server.URL+path, body)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.env.Server.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	return &Page{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Header: resp.Header, Body: string(raw)}
}
