package account

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/logtest"

	"github.com/pquerna/otp/totp"

	"github.com/dripfaucet/drip/internal/clocktest"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/mail"
	"github.com/dripfaucet/drip/internal/store"
	"github.com/dripfaucet/drip/internal/store/storetest"
	"github.com/dripfaucet/drip/internal/user"
)

// t0 is 5 s into a TOTP step, so tests know which step a time falls in.
var t0 = time.Date(2026, 11, 25, 9, 0, 5, 0, time.UTC)

// outbox is a mail.Sender that keeps what it is given; fail makes it
// refuse, as an SMTP server that is down.
type outbox struct {
	mu   sync.Mutex
	msgs []mail.Message
	fail bool
}

func (o *outbox) Send(_ context.Context, m mail.Message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail {
		return errors.New("smtp: 421 service not available")
	}
	o.msgs = append(o.msgs, m)
	return nil
}

// last is the latest message to the address; it fails the test if none.
func (o *outbox) last(t testing.TB, to string) mail.Message {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.msgs) - 1; i >= 0; i-- {
		if o.msgs[i].To == to {
			return o.msgs[i]
		}
	}
	t.Fatalf("no email to %s", to)
	return mail.Message{}
}

func (o *outbox) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.msgs)
}

var linkRE = regexp.MustCompile(`https://drip\.example\.com/(verify|reset)\?token=([A-Za-z0-9_-]{43})\n`)

// link is the token of the latest link emailed to the address, for path
// ("verify" or "reset").
func (o *outbox) link(t testing.TB, to, path string) string {
	t.Helper()
	m := linkRE.FindStringSubmatch(o.last(t, to).Body)
	if m == nil || m[1] != path {
		t.Fatalf("the latest email to %s has no %s link:\n%s", to, path, o.last(t, to).Body)
	}
	return m[2]
}

type fixture struct {
	t     *testing.T
	ctx   context.Context
	st    store.Store
	clock *clocktest.Clock
	mail  *outbox
	logs  *logtest.Buffer
	svc   *Service
	users *user.Registry
	cfg   Config
}

// engines runs fn on a fresh store of each engine, in parallel.
func engines(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Parallel()
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, newFixture(t, e.Open(t), Config{}))
		})
	}
}

func newFixture(t *testing.T, st store.Store, cfg Config) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), st: st, clock: clocktest.New(t0), mail: &outbox{}, logs: &logtest.Buffer{}}
	cfg.BaseURL = "https://drip.example.com/"
	f.cfg = cfg
	var err error
	if f.users, err = user.NewRegistry(f.ctx, st, f.clock.Now); err != nil {
		t.Fatal(err)
	}
	f.svc = f.node()
	return f
}

// node is another Service over the fixture's store: another node of the
// same deployment, with limiters of its own.
func (f *fixture) node() *Service {
	f.t.Helper()
	svc, err := New(f.ctx, Params{Store: f.st, Users: f.users, Mail: f.mail, Now: f.clock.Now, Config: f.cfg,
		Log: slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		f.t.Fatal(err)
	}
	return svc
}

const password = "correct horse battery"

// signUp makes a verified user through the service.
func (f *fixture) signUp(name string) *drip.User {
	f.t.Helper()
	email := name + "@example.com"
	if err := f.svc.SignUp(f.ctx, name, email, password, "198.51.100.1"); err != nil {
		f.t.Fatalf("SignUp(%s): %v", name, err)
	}
	if err := f.svc.VerifyEmail(f.ctx, f.mail.link(f.t, email, "verify"), "198.51.100.1"); err != nil {
		f.t.Fatalf("VerifyEmail(%s): %v", name, err)
	}
	u, err := f.st.UserGetByUsername(f.ctx, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

func (f *fixture) login(name string) (string, *Session) {
	f.t.Helper()
	token, sess, err := f.svc.Login(f.ctx, name, password, "203.0.113.7", "Firefox/140")
	if err != nil {
		f.t.Fatalf("Login(%s): %v", name, err)
	}
	return token, sess
}

// code is the authenticator's code for the secret at the clock's time plus skew.
func (f *fixture) code(secret string, skew time.Duration) string {
	f.t.Helper()
	c, err := totp.GenerateCodeCustom(secret, f.clock.Now().Add(skew), totpOpts)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// enrol turns the second factor on for the session's user; it returns the
// secret and the recovery codes, and moves the clock to the next step, so
// the code used to confirm is not the current one any more.
func (f *fixture) enrol(sess *Session) (string, []string) {
	f.t.Helper()
	e, err := f.svc.BeginTOTP(f.ctx, sess, "203.0.113.7")
	if err != nil {
		f.t.Fatal(err)
	}
	codes, err := f.svc.ConfirmTOTP(f.ctx, sess, f.code(e.Secret, 0), "203.0.113.7")
	if err != nil {
		f.t.Fatal(err)
	}
	f.clock.Advance(30 * time.Second)
	return e.Secret, codes
}

// events is the kinds of the user's security log, oldest first.
func (f *fixture) events(u *drip.User) string {
	f.t.Helper()
	list, err := f.st.SecurityLogList(f.ctx, &store.SecurityLogListParams{UserID: u.ID, Limit: 500})
	if err != nil {
		f.t.Fatal(err)
	}
	kinds := make([]string, len(list))
	for i, e := range list {
		kinds[len(list)-1-i] = e.Kind
	}
	return strings.Join(kinds, " ")
}

func wantCode(t *testing.T, what string, err error, code drip.Code) {
	t.Helper()
	if drip.ErrorCode(err) != code {
		t.Errorf("%s: err = %v, want code %s", what, err, code)
	}
}
