package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/dripfaucet/drip/internal/user"
)

// chromiumPath finds a Chromium for the browser tests: DRIP_CHROMIUM, or
// chromium or chromium-headless-shell on PATH; else the test is skipped.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DRIP_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-headless-shell", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: set DRIP_CHROMIUM or put chromium (Debian: apt-get install chromium) on PATH to run the browser tests")
	return ""
}

// consoleServer is drip serve --demo, its printed demo logins, and its
// log (where, without --smtp-url, the emails are).
type consoleServer struct {
	base, ownerPassword, alicePassword string
	log                                *logtest.Buffer
	stop                               func()
	done                               chan struct{}
}

var (
	ownerLine = regexp.MustCompile(`owner:\s+demo_owner\s+password (\S+)`)
	aliceLine = regexp.MustCompile(`recipient:\s+alice\s+password (\S+)`)
)

func startConsole(t *testing.T, dataDir string, args ...string) *consoleServer {
	t.Helper()
	cmd := exec.Command(dripBin, append([]string{"serve", "--demo", "--listen", "127.0.0.1:0", "--data-dir", dataDir}, args...)...)
	cmd.Env = append(os.Environ(), "DRIP_LOG_LEVEL=info")
	s := &consoleServer{log: &logtest.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = s.log
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			<-done
			logs := bytes.NewBufferString(s.log.String()) // checked for secrets when the suite ends
			noteLog(logs)
			close(s.done)
		})
	}
	t.Cleanup(s.stop)
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if m := ownerLine.FindStringSubmatch(line); m != nil {
				s.ownerPassword = m[1]
			}
			if m := aliceLine.FindStringSubmatch(line); m != nil {
				s.alicePassword = m[1]
			}
			if m := curlLine.FindStringSubmatch(line); m != nil && s.base == "" {
				s.base = m[1]
				close(found)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case <-found:
	case err := <-done:
		t.Fatalf("drip serve exited early: %v\n%s", err, s.log)
	case <-time.After(60 * time.Second):
		t.Fatalf("drip serve printed no curl line\n%s", s.log)
	}
	if s.ownerPassword == "" || s.alicePassword == "" {
		t.Fatal("drip serve --demo printed no console logins")
	}
	noteSecret("the demo owner's password", s.ownerPassword)
	noteSecret("alice's demo password", s.alicePassword)
	return s
}

var verifyLink = regexp.MustCompile(`(http://127\.0\.0\.1:\d+/verify\?token=[A-Za-z0-9_-]{43})`)

// shotsDir is where a browser test saves its screenshots: the directory
// the environment variable env names, or name in the temporary directory.
func shotsDir(t *testing.T, env, name string) string {
	dir := os.Getenv(env)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// TestBrowserConsoleAccounts walks the account pages in a real Chromium
// against the real drip serve: sign up, verify by the link emailed to a
// real SMTP server (the test's, through --smtp-url), log
// in, enrol TOTP with codes computed from the secret on the page, log out
// and in with a code, refused with the same code again, in with a
// recovery code, refused with it again, change the password, log in as
// the demo owner. Each page is saved as a PNG at desktop and phone width.
func TestBrowserConsoleAccounts(t *testing.T) {
	t.Parallel()
	in := startInbox(t)
	s := startConsole(t, t.TempDir(), "--smtp-url", in.URL())
	c := newChrome(t, s.base)

	const pw, newPW = "a long browser password", "another long password"
	noteSecret("a browser test password", pw)
	noteSecret("a browser test password", newPW)

	// Sign up: the rules show before submitting; a weak password is
	// refused next to its field.
	c.run("sign-up page", chromedp.Navigate(s.base+"/signup"), title("Sign up"))
	c.shot("01-signup")
	c.run("weak password", fill("#username", "browser_user"), fill("#email", "browser@example.com"), fill("#password", "short"),
		submit("form.card button"), chromedp.WaitVisible(chromedp.CSS("#password-error")))
	c.shot("02-signup-error")
	c.run("sign up", fill("#password", pw), submit("form.card button"), title("Check your email"))
	c.shot("03-check-your-email")

	c.run("verify page", chromedp.Navigate(in.link(t, "browser@example.com", verifyLink)), title("Confirm your email"))
	c.shot("04-verify")
	c.run("verify", submit("form.card button"), title("Log in"))
	if got := c.text(".flash"); got != "Your email address is confirmed." {
		t.Errorf("after verifying: %q", got)
	}
	c.shot("05-login")

	c.login("browser_user", pw)
	c.run("account page", title("Wallet"), chromedp.Navigate(s.base+"/account"), title("Account security"))
	c.noteCookies()
	c.shot("06-account")

	// Enrol TOTP with a code computed from the secret the page shows.
	c.run("enrol", submit(`form[action="/account/totp"] button`), title("Turn on two-factor authentication"))
	c.shot("07-enrol-totp")
	secret := c.text("#totp-secret")
	noteSecret("the TOTP secret", secret)
	code := func(at time.Time) string {
		c, err := totp.GenerateCode(secret, at)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	enrolled := time.Now()
	c.run("confirm TOTP", fill("#code", code(enrolled)), submit(`form[action="/account/totp/confirm"] button`), title("Your recovery codes"))
	recovery := strings.Fields(c.text("#recovery-codes"))
	if len(recovery) != 10 {
		t.Fatalf("recovery codes: %q", recovery)
	}
	for _, c := range recovery {
		noteSecret("a recovery code", c)
	}
	c.shot("08-recovery-codes")
	c.run("saved", chromedp.Click(chromedp.CSS(`a.button`)), title("Account security"))
	c.shot("09-account-2fa-on")
	c.logout()
	c.shot("10-logged-out")

	// Log in with a code (the next step's: the current one confirmed the
	// enrolment, and each step is taken once), then refused with it again.
	next := code(enrolled.Add(30 * time.Second))
	c.login("browser_user", pw)
	c.run("second factor page", title("Two-factor authentication"))
	c.shot("11-second-factor")
	c.run("code", fill("#code", next), submit("form.card button"), title("Wallet"))
	c.noteCookies()
	c.logout()
	c.login("browser_user", pw)
	c.run("reused code", fill("#code", next), submit("form.card button"), chromedp.WaitVisible(chromedp.CSS("#code-error")))
	if got := c.text("#code-error"); !strings.Contains(got, "already used") {
		t.Errorf("a reused code: %q", got)
	}
	c.shot("12-second-factor-reused")

	// A recovery code logs in; the second factor just passed counts as
	// recent, so the password changes without another code.
	c.run("recovery code", fill("#code", recovery[0]), submit("form.card button"), title("Wallet"), chromedp.Navigate(s.base+"/account"), title("Account security"))
	if !strings.Contains(c.text("#two-factor"), "Recovery codes left: 9") {
		t.Errorf("two-factor section: %q", c.text("#two-factor"))
	}
	c.run("password page", chromedp.Click(chromedp.CSS(`a[href="/account/password"]`)), title("Change your password"))
	c.shot("13-change-password")
	c.run("change password", fill("#current", pw), fill("#password", newPW), submit("form.card button"), title("Account security"))
	c.shot("14-password-changed")
	c.run("email page", chromedp.Navigate(s.base+"/account/email"), title("Change your email address"))
	c.shot("15-change-email")
	c.run("confirm page", chromedp.Navigate(s.base+"/account/confirm?next=email"), title("Confirm it is you"))
	c.shot("16-confirm-it-is-you")
	c.logout()

	// The new password, and the recovery code again: refused. (Five code
	// attempts in 15 minutes are all an account gets.)
	c.login("browser_user", newPW)
	c.run("reused recovery code", fill("#code", recovery[0]), submit("form.card button"), chromedp.WaitVisible(chromedp.CSS("#code-error")))
	if got := c.text("#code-error"); !strings.Contains(got, "already used") {
		t.Errorf("a reused recovery code: %q", got)
	}

	// The pages before a login.
	c.run("log out pending", submit(`form[action="/logout"] button`), title("Log in"))
	c.run("forgot page", chromedp.Navigate(s.base+"/forgot"), title("Forgot your password"))
	c.shot("17-forgot-password")
	c.run("forgot", fill("#email", "browser@example.com"), submit("form.card button"), chromedp.WaitVisible(chromedp.CSS(".flash")))
	c.shot("18-forgot-sent")
	c.run("reset page", chromedp.Navigate(s.base+"/reset?token=not-a-real-token"), title("Choose a new password"))
	c.shot("19-reset-password")
	c.run("bad reset link", fill("#password", "yet another long password"), submit("form.card button"), chromedp.WaitVisible(chromedp.CSS(".form-error")))
	c.shot("20-reset-bad-link")
	c.run("login error", chromedp.Navigate(s.base+"/login"), fill("#identifier", "browser_user"), fill("#password", "wrong password"),
		submit("form.card button"), chromedp.WaitVisible(chromedp.CSS(".form-error")))
	c.shot("21-login-refused")

	// The demo owner logs in with the password serve --demo printed.
	c.login("demo_owner", s.ownerPassword)
	c.run("demo owner's account", title("Wallet"), chromedp.Navigate(s.base+"/account"), title("Account security"))
	c.noteCookies()
	c.shot("22-demo-owner-account")
	c.logout()
	c.login("alice", s.alicePassword)
	c.run("alice's account", title("Wallet"), chromedp.Navigate(s.base+"/account"), title("Account security"))
	c.noteCookies()
	c.logout()
}

// TestConsoleDemoLogins: serve --demo prints logins that work, keeps them
// in the data directory readable by its owner only, and a restart prints
// the same ones.
func TestConsoleDemoLogins(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	s := startConsole(t, dataDir)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ user, password string }{{"demo_owner", s.ownerPassword}, {"alice", s.alicePassword}} {
		res, err := client.PostForm(s.base+"/login", url.Values{"identifier": {c.user}, "password": {c.password}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/wallet" || len(res.Cookies()) != 1 {
			t.Fatalf("%s's demo login: %d to %q", c.user, res.StatusCode, res.Header.Get("Location"))
		}
		noteSecret("a session token", res.Cookies()[0].Value)
	}
	fi, err := os.Stat(filepath.Join(dataDir, "demo-logins"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("demo-logins: %v, mode %v, want 0600", err, fi.Mode())
	}
	s.stop()
	again := startConsole(t, dataDir)
	if again.ownerPassword != s.ownerPassword || again.alicePassword != s.alicePassword {
		t.Error("a restart printed other demo passwords")
	}
}

// TestConsoleTwoNodes: two drip serve processes on one PostgreSQL and one
// Redis share the console's sessions (log in on one, act on the other,
// log out on the other) and its login throttle.
func TestConsoleTwoNodes(t *testing.T) {
	fx := newNodesFixture(t, "Console")
	const pw = "a password for two nodes"
	if _, err := fx.app.Users.Create(context.Background(), user.CreateParams{Username: "carol", Email: "carol@example.com",
		Password: pw, Verified: true}); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("drip:test:%d:", time.Now().UnixNano())
	args := []string{"--database-url", fx.dbURL, "--redis-url", fx.redisURL, "--redis-prefix", prefix}
	a, b := startNode(t, args...), startNode(t, args...)
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, url string, form url.Values, cookie *http.Cookie) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cookie != nil {
			req.AddCookie(cookie)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	login := do("POST", a+"/login", url.Values{"identifier": {"carol"}, "password": {pw}}, nil)
	if login.StatusCode != http.StatusSeeOther || len(login.Cookies()) != 1 {
		t.Fatalf("login on node A: %d", login.StatusCode)
	}
	cookie := login.Cookies()[0]
	noteSecret("a session token", cookie.Value)
	if res := do("GET", b+"/account", nil, cookie); res.StatusCode != http.StatusOK {
		t.Fatalf("the session on node B: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res := do("POST", b+"/logout", nil, cookie); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout on node B: %d", res.StatusCode)
	}
	if res := do("GET", a+"/account", nil, cookie); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("node A after the logout on B: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	// Five wrong passwords spread over both nodes use the account's five
	// attempts: the sixth, right or not, is refused on either.
	for i := range 5 {
		do("POST", []string{a, b}[i%2]+"/login", url.Values{"identifier": {"carol"}, "password": {"wrong password " + strconv.Itoa(i)}}, nil)
	}
	if res := do("POST", a+"/login", url.Values{"identifier": {"carol"}, "password": {pw}}, nil); res.StatusCode != http.StatusTooManyRequests ||
		res.Header.Get("Retry-After") == "" {
		t.Fatalf("the sixth login attempt: %d, Retry-After %q; want 429 with Retry-After", res.StatusCode, res.Header.Get("Retry-After"))
	}
}
