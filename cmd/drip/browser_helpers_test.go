package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/emersion/go-smtp"
	"github.com/pquerna/otp/totp"

	"github.com/dripfaucet/drip/internal/apptest"
)

// chrome is one Chromium driven through chromedp for a browser test: the
// steps, the checks and the screenshots the tests share.
type chrome struct {
	t    *testing.T
	ctx  context.Context
	base string // drip's address
	dir  string // where the screenshots go
}

// newChrome starts a Chromium for the test, or skips it without one.
func newChrome(t *testing.T, base string) *chrome {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true))
	alloc, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(browser); err != nil { // starts the browser, which lives as long as browser
		t.Fatalf("starting %s: %v", path, err)
	}
	ctx, cancel := context.WithTimeout(browser, 10*time.Minute)
	t.Cleanup(cancel)
	return &chrome{t: t, ctx: ctx, base: base, dir: shotsDir(t, "DRIP_CONSOLE_SHOTS", "console-shots")}
}

// run runs steps, failing the test with the page's text if one fails.
func (c *chrome) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	c.t.Helper()
	step, cancel := context.WithTimeout(c.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(step, steps...); err != nil {
		body, _ := chromedp.Run(c.ctx, chromedp.Text(chromedp.CSS("main")))
		c.t.Fatalf("%s: %v\npage: %s", what, err, body)
	}
}

// title waits for the page whose heading is h1.
func title(h1 string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(`//h1[normalize-space()="` + h1 + `"]`)
}

// fill types into an empty field (the pages never fill in a password or
// a code again).
func fill(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), text)
}

func submit(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }

// choose picks an option of a select by its value.
func choose(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.SetValue(chromedp.CSS(sel), value)
}

// shot saves the page as name-desktop.png and name-phone.png.
func (c *chrome) shot(name string) {
	c.t.Helper()
	for _, v := range []struct {
		suffix string
		w, h   int64
		mobile bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		emulate := chromedp.EmulateViewport(v.w, v.h)
		if v.mobile {
			emulate = chromedp.EmulateViewport(v.w, v.h, chromedp.EmulateMobile)
		}
		c.run("viewport "+v.suffix, emulate)
		step, cancel := context.WithTimeout(c.ctx, 30*time.Second)
		png, err := chromedp.Run(step, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			c.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(c.dir, name+"-"+v.suffix+".png"), png, 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	c.run("desktop again", chromedp.EmulateViewport(1280, 900))
}

// send clicks a form's button and waits for the page that answers it: the
// document the click left marked, so an element of the old page (a
// notice, a heading) cannot be taken for the new one's.
func (c *chrome) send(what, button string) {
	c.t.Helper()
	c.run(what, chromedp.Evaluate[chromedp.Void](`window.dripOld = true`), chromedp.Click(chromedp.CSS(button)))
	// Asked from Go, not polled in the page: the navigation destroys the
	// page's context, which fails an evaluation running in it.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		step, cancel := context.WithTimeout(c.ctx, 5*time.Second)
		done, err := chromedp.Run(step, chromedp.Evaluate[bool](`window.dripOld === undefined && document.readyState === "complete"`))
		cancel()
		if err == nil && done {
			break
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: no new page after the click (last error %v)", what, err)
		}
	}
	c.run(what+": the answer", chromedp.WaitVisible(chromedp.CSS("main h1")))
}

// text is the text of the first element sel finds.
func (c *chrome) text(sel string) string {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		c.t.Fatalf("read %s: %v", sel, err)
	}
	return s
}

// value is the value of a form field.
func (c *chrome) value(sel string) string {
	c.t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Value(chromedp.CSS(sel)))
	if err != nil {
		c.t.Fatalf("read the value of %s: %v", sel, err)
	}
	return s
}

// noteCookies checks the session cookie's attributes and notes its value
// as a secret no log may hold.
func (c *chrome) noteCookies() {
	c.t.Helper()
	res, err := chromedp.Call(c.ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		c.t.Fatalf("cookies: %v", err)
	}
	for _, k := range res.Cookies {
		noteSecret("a session token", k.Value)
		if k.Name == "drip_session" && (!k.HTTPOnly || k.SameSite != network.CookieSameSiteLax) {
			c.t.Errorf("cookie %s: HttpOnly %v SameSite %v", k.Name, k.HTTPOnly, k.SameSite)
		}
	}
}

// login logs in from the login page and waits for the next page (the
// login form gone: its heading would match at once, before the POST's
// answer arrives, and a navigation then would race it).
func (c *chrome) login(user, password string) {
	c.t.Helper()
	c.run("log in as "+user, chromedp.Navigate(c.base+"/login"), title("Log in"), fill("#identifier", user), fill("#password", password),
		submit("form.card button"), chromedp.WaitNotPresent(chromedp.CSS("#identifier")), chromedp.WaitVisible(chromedp.CSS("h1")))
}

// logout logs out with the header's button.
func (c *chrome) logout() {
	c.t.Helper()
	c.run("log out", submit(`header form[action="/logout"] button`), title("Log in"))
}

// inbox is a real SMTP server on a loopback port that keeps what drip
// sends it, for drip serve --smtp-url.
type inbox struct {
	addr string
	mu   sync.Mutex
	msgs []*mail.Message
}

func startInbox(t *testing.T) *inbox {
	t.Helper()
	in := &inbox{}
	srv := smtp.NewServer(in)
	srv.Domain = "localhost"
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	in.addr = l.Addr().String()
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return in
}

// URL is the --smtp-url of the inbox.
func (in *inbox) URL() string { return "smtp://" + in.addr + "?from=drip@example.com" }

func (in *inbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &inboxSession{in: in}, nil }

type inboxSession struct{ in *inbox }

func (s *inboxSession) Mail(string, *smtp.MailOptions) error { return nil }
func (s *inboxSession) Rcpt(string, *smtp.RcptOptions) error { return nil }
func (s *inboxSession) Reset()                               {}
func (s *inboxSession) Logout() error                        { return nil }

func (s *inboxSession) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	s.in.mu.Lock()
	s.in.msgs = append(s.in.msgs, m)
	s.in.mu.Unlock()
	return nil
}

// link waits for a message to the address and returns the first link in
// its body that re matches.
func (in *inbox) link(t *testing.T, to string, re *regexp.Regexp) string {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		in.mu.Lock()
		msgs := append([]*mail.Message(nil), in.msgs...)
		in.mu.Unlock()
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i]
			if !strings.Contains(m.Header.Get("To"), to) {
				continue
			}
			var body io.Reader = m.Body
			if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
				body = quotedprintable.NewReader(m.Body)
			}
			raw, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			m.Body = bytes.NewReader(raw) // read again on the next call
			if l := re.FindString(string(raw)); l != "" {
				return l
			}
		}
	}
	t.Fatalf("no email to %s with a link like %s", to, re)
	return ""
}

// enableTOTP turns two-factor authentication on from the account page of
// the user logged in, noting its secret and recovery codes as secrets, and
// returns a source of its codes on clock: each code moves the clock on,
// since a code is taken once.
func (c *chrome) enableTOTP(clock *apptest.Clock) (code func() string) {
	c.t.Helper()
	c.run("enrol", submit(`form[action="/account/totp"] button`), title("Turn on two-factor authentication"))
	secret := c.text("#totp-secret")
	noteSecret("the TOTP secret", secret)
	code = func() string {
		s, err := totp.GenerateCode(secret, clock.Now())
		if err != nil {
			c.t.Fatal(err)
		}
		clock.Advance(30 * time.Second)
		return s
	}
	c.run("confirm TOTP", fill("#code", code()), submit(`form[action="/account/totp/confirm"] button`), title("Your recovery codes"))
	for _, rc := range strings.Fields(c.text("#recovery-codes")) {
		noteSecret("a recovery code", rc)
	}
	return code
}
