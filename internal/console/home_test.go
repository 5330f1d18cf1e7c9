package console_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// consoleEnv is the real application, console on, over a fresh SQLite.
func consoleEnv(t *testing.T) *apptest.Env {
	t.Helper()
	return apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
}

// The front door sends a visitor to log in, and a member to the wallet;
// the header names the sections a member may open, the operator's only
// for operators.
func TestHome(t *testing.T) {
	t.Parallel()
	env := consoleEnv(t)
	env.Member(t, "alice", false)
	env.Member(t, "olga", true)
	b := env.Browser(t)
	if p := b.Get(t, "/"); p.Status != http.StatusSeeOther || p.Location != "/login" {
		t.Fatalf("GET / logged out: %d to %q", p.Status, p.Location)
	}
	b.LogIn(t, "alice")
	if p := b.Get(t, "/"); p.Status != http.StatusSeeOther || p.Location != "/wallet" {
		t.Fatalf("GET / logged in: %d to %q", p.Status, p.Location)
	}
	p := b.Get(t, "/account")
	for _, want := range []string{`href="/wallet"`, `href="/manage"`, `href="/account" aria-current="page"`} {
		if !strings.Contains(p.Body, want) {
			t.Errorf("the header lacks %s", want)
		}
	}
	if strings.Contains(p.Body, `href="/operator"`) {
		t.Error("a member who is not an operator sees the operator's link")
	}
	if p := env.Browser(t).LogIn(t, "olga").Get(t, "/account"); !strings.Contains(p.Body, `href="/operator"`) {
		t.Error("an operator does not see the operator's link")
	}
}
