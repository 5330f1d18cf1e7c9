package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/faucet"
	"github.com/dripfaucet/drip/internal/listing"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/web"
)

const cost = 100_000

// env is the application over a fresh store with the directory served in
// front of it, and the directory's log.
type env struct {
	*apptest.Env
	engine  string
	listing *listing.Service
	dir     *httptest.Server
	log     *logtest.Buffer
}

func newEnv(t *testing.T, engine string, st store.Store) *env {
	t.Helper()
	a := apptest.New(t, st, apptest.Options{})
	e := &env{Env: a, engine: engine, listing: listing.NewService(st, a.App.Coins, a.Clock.Now), log: &logtest.Buffer{}}
	e.serve(t, e.listing)
	if err := e.listing.SetCost(context.Background(), "BTC", cost); err != nil {
		t.Fatal(err)
	}
	return e
}

// serve puts a directory over svc in front of the test.
func (e *env) serve(t *testing.T, svc *listing.Service) {
	e.dir = httptest.NewServer(web.NewDirectory(svc, slog.New(slog.NewTextHandler(e.log, nil))))
	t.Cleanup(e.dir.Close)
}

// forEachEngine runs fn as a parallel subtest on every engine (D31).
func forEachEngine(t *testing.T, fn func(t *testing.T, e *env)) {
	t.Parallel()
	for _, engine := range storetest.Engines(t) {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newEnv(t, engine.Name, engine.Open(t)))
		})
	}
}

// site is a faucet to create, with its settings (nil: the defaults) and
// how its listing request ends.
type site struct {
	settings *faucet.SettingsChange
	outcome  drip.ListingStatus
}

// add creates the faucet, asks for its listing and decides as s says.
func (e *env) add(t *testing.T, s site) *drip.Faucet {
	t.Helper()
	ctx := context.Background()
	f, _ := e.Faucet(t, map[string]int64{"BTC": cost})
	if s.settings != nil {
		var err error
		if f, err = e.App.Faucets.UpdateSettings(ctx, f.ID, *s.settings); err != nil {
			t.Fatalf("UpdateSettings: %v", err)
		}
	}
	r, err := e.listing.Request(ctx, f, "BTC")
	if err != nil {
		t.Fatalf("Request: %v", err)
	}
	switch s.outcome {
	case drip.ListingApproved:
		_, err = e.listing.Approve(ctx, r.ID)
	case drip.ListingRejected:
		_, err = e.listing.Reject(ctx, r.ID)
	}
	if err != nil {
		t.Fatalf("decide: %v", err)
	}
	return f
}

func list(s ...string) *[]string { return &s }

// Hostile content an owner may set: the page must show it as text.
const (
	hostileName = `<script>alert("name")</script>`
	hostileURL  = `https://evil.example.com/?q="><script>alert(1)</script>`
	hostileDesc = `</p><img src=x onerror=alert(1)> & "more"`
)

// populate lists three faucets (one hostile, one with default settings)
// and leaves one pending and one rejected, and returns the listed ones'
// entries in list order.
func (e *env) populate(t *testing.T) []web.Entry {
	t.Helper()
	moon := e.add(t, site{outcome: drip.ListingApproved, settings: &faucet.SettingsChange{
		Name: "Moon BTC", Domain: "moon.example.com", URL: "https://moon.example.com/claim",
		Description: "Claim satoshis every hour.\nNo sign-up needed.", TimerMinutes: 60,
		Currencies: list("BTC", "DOGE"), Categories: list("bitcoin", "games"),
	}})
	evil := e.add(t, site{outcome: drip.ListingApproved, settings: &faucet.SettingsChange{
		Name: hostileName, Domain: "evil.example.com", URL: hostileURL, Description: hostileDesc, TimerMinutes: 90,
		Currencies: list("LTC"), Categories: list("other"),
	}})
	e.add(t, site{outcome: drip.ListingPending, settings: &faucet.SettingsChange{
		Name: "Waiting Room", Domain: "wait.example.com", URL: "https://wait.example.com/", TimerMinutes: 5,
	}})
	e.add(t, site{outcome: drip.ListingRejected, settings: &faucet.SettingsChange{
		Name: "Turned Down", Domain: "no.example.com", URL: "https://no.example.com/", TimerMinutes: 5,
	}})
	plain := e.add(t, site{outcome: drip.ListingApproved})
	return []web.Entry{
		{ID: moon.ID, Name: "Moon BTC", URL: "https://moon.example.com/claim", Domain: "moon.example.com",
			Description: "Claim satoshis every hour.\nNo sign-up needed.", TimerMinutes: 60,
			Currencies: []string{"BTC", "DOGE"}, Categories: []string{"bitcoin", "games"}},
		{ID: evil.ID, Name: hostileName, URL: hostileURL, Domain: "evil.example.com", Description: hostileDesc,
			TimerMinutes: 90, Currencies: []string{"LTC"}, Categories: []string{"other"}},
		{ID: plain.ID, Name: plain.Name, URL: plain.URL, Domain: plain.Domain, TimerMinutes: 60,
			Currencies: []string{}, Categories: []string{}},
	}
}

// get fetches a path of the directory and returns the reply and its body.
func (e *env) do(t *testing.T, method, path, contentType, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, e.dir.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.dir.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(raw)
}

func TestFaucetPageListsApprovedFaucets(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		e.populate(t)
		resp, body := e.do(t, http.MethodGet, web.DirectoryPath, "", "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d\n%s", web.DirectoryPath, resp.StatusCode, body)
		}
		for header, want := range map[string]string{
			"Content-Type":            "text/html; charset=utf-8",
			"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		} {
			if got := resp.Header.Get(header); got != want {
				t.Errorf("%s: %q, want %q", header, got, want)
			}
		}
		golden(t, "faucets.html", body, e.engine == "sqlite")
		for _, unlisted := range []string{"Waiting Room", "Turned Down"} {
			if strings.Contains(body, unlisted) {
				t.Errorf("the page shows %q, whose listing is not approved", unlisted)
			}
		}
	})
}

func TestFaucetPageEscapesHostileContent(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		e.populate(t)
		_, body := e.do(t, http.MethodGet, web.DirectoryPath, "", "")
		for _, raw := range []string{"<script", "<img", `"><`, "onerror=alert(1)>"} {
			if strings.Contains(body, raw) {
				t.Errorf("page contains %q unescaped", raw)
			}
		}
		for _, escaped := range []string{
			"&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;",                // the name, as text
			"&lt;/p&gt;&lt;img src=x onerror=alert(1)&gt; &amp; &#34;more&#34;", // the description
			`href="https://evil.example.com/?q=%22%3e%3cscript%3ealert%281%29%3c/script%3e"`,
		} {
			if !strings.Contains(body, escaped) {
				t.Errorf("page lacks %s", escaped)
			}
		}
		if n := strings.Count(body, `rel="nofollow noopener"`); n != 3 {
			t.Errorf("%d links with rel=\"nofollow noopener\", want one per listed faucet (3)", n)
		}
	})
}

func TestFaucetPageEmptyState(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		e.add(t, site{outcome: drip.ListingPending})
		resp, body := e.do(t, http.MethodGet, web.DirectoryPath, "", "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d", resp.StatusCode)
		}
		golden(t, "faucets_empty.html", body, e.engine == "sqlite")
		if !strings.Contains(body, "No faucets are listed yet.") || strings.Contains(body, `class="faucet"`) {
			t.Errorf("empty page does not say so:\n%s", body)
		}
	})
}

// listReply is the JSON faucet list as clients decode it.
type listReply struct {
	Status  int         `json:"status"`
	Message string      `json:"message"`
	Faucets []web.Entry `json:"faucets"`
}

// listRequests are the ways existing clients ask for the list.
var listRequests = []struct{ method, path, contentType, body string }{
	{http.MethodGet, web.ListPath, "", ""},
	{http.MethodPost, web.ListPath, "application/x-www-form-urlencoded", "api_key=anything"},
	{http.MethodGet, web.ListPathV1, "", ""},
	{http.MethodPost, web.ListPathV1, "application/json", `{"api_key":"anything"}`},
	{http.MethodPost, web.ListPathV1, "", ""},
}

func TestFaucetListJSON(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		want := listReply{Status: 200, Message: "OK", Faucets: e.populate(t)}
		for _, r := range listRequests {
			resp, body := e.do(t, r.method, r.path, r.contentType, r.body)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s %s: HTTP %d, Content-Type %q; want 200 application/json", r.method, r.path, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			var got listReply
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("%s %s: %v\n%s", r.method, r.path, err, body)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", r.method, r.path, diff)
			}
		}
		// Lists are [] in JSON, never null, for a faucet without settings.
		_, body := e.do(t, http.MethodGet, web.ListPath, "", "")
		if !strings.Contains(body, `"timer_minutes":60,"currencies":[],"categories":[]}`) {
			t.Errorf("empty lists are not []:\n%s", body)
		}
	})
}

func TestFaucetListEmptyIsAnEmptyArray(t *testing.T) {
	forEachEngine(t, func(t *testing.T, e *env) {
		e.add(t, site{outcome: drip.ListingRejected})
		for _, r := range listRequests {
			resp, body := e.do(t, r.method, r.path, r.contentType, r.body)
			if want := `{"status":200,"message":"OK","faucets":[]}` + "\n"; resp.StatusCode != 200 || body != want {
				t.Errorf("%s %s: HTTP %d %q, want 200 %q", r.method, r.path, resp.StatusCode, body, want)
			}
		}
	})
}

func TestFaucetListRefusesOtherMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "sqlite", storetest.OpenSQLite(t))
	for _, path := range []string{web.ListPath, web.ListPathV1} {
		for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			resp, body := e.do(t, method, path, "", "")
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD, POST" {
				t.Errorf("%s %s: HTTP %d Allow %q, want 405 with Allow: GET, HEAD, POST", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
			if resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"status":405`) {
				t.Errorf("%s %s: %q %s, want a JSON envelope with status 405", method, path, resp.Header.Get("Content-Type"), body)
			}
		}
	}
	if resp, _ := e.do(t, http.MethodPost, web.DirectoryPath, "", ""); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: HTTP %d, want 405", web.DirectoryPath, resp.StatusCode)
	}
	if resp, body := e.do(t, http.MethodHead, web.ListPath, "", ""); resp.StatusCode != http.StatusOK || body != "" {
		t.Errorf("HEAD %s: HTTP %d %q, want 200 without a body", web.ListPath, resp.StatusCode, body)
	}
}

// brokenStore fails the read the directory makes.
type brokenStore struct{ store.Store }

func (brokenStore) FaucetListListed(context.Context) ([]drip.Faucet, error) {
	return nil, errors.New("disk on fire")
}

func TestDirectoryFailureIsInternalAndLogged(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	e := newEnv(t, "sqlite", st)
	e.serve(t, listing.NewService(brokenStore{st}, e.App.Coins, e.Clock.Now))

	resp, body := e.do(t, http.MethodGet, web.ListPath, "", "")
	if resp.StatusCode != http.StatusInternalServerError || body != `{"status":500,"message":"Internal error."}`+"\n" {
		t.Errorf("list: HTTP %d %q, want 500 Internal error.", resp.StatusCode, body)
	}
	resp, body = e.do(t, http.MethodGet, web.DirectoryPath, "", "")
	if resp.StatusCode != http.StatusInternalServerError || strings.Contains(body, "disk on fire") {
		t.Errorf("page: HTTP %d %q, want 500 without the cause", resp.StatusCode, body)
	}
	if n := strings.Count(e.log.String(), "disk on fire"); n != 2 {
		t.Errorf("the cause is logged %d times, want once per request (2):\n%s", n, e.log)
	}
}
