package mail

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var testNow = time.Date(2026, 3, 14, 15, 9, 26, 0, time.FixedZone("", 2*3600))

func TestSMTPSendDeliversMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		subject string
		body    string
	}{
		{"ascii", "Low balance: BTC", "Your faucet balance is 0.00001 BTC.\nTop it up."},
		{"non-ascii subject and body", "Solde bas — Ünïcødé ₿ 🚰", "Le solde est bas: 0,5 €.\nМало средств.\n日本語のテキスト\n"},
		{"long lines get soft breaks", strings.Repeat("long subject ", 10) + "end", strings.Repeat("0123456789", 30) + "\n" + strings.Repeat("é", 200)},
		{"lines starting with a dot survive", "dots", ".\n..hidden\n.\r\nend"},
		{"text that looks encoded stays as written", "a=b ?= =?utf-8?q?x?= " + strings.Repeat("=?", 40), "x = y\ttrailing tab\t\ntrailing space \n=3D literally\n"},
		{"empty body", "empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, rec := startServer(t, serverConfig{})
			s := mustSMTP(t, "smtp://"+addr+"?from=Drip%20Faucet%20%3Cdrip@faucet.example%3E")
			s.now = func() time.Time { return testNow }

			err := s.Send(t.Context(), Message{To: "Ann Owner <ann@example.com>", Subject: tt.subject, Body: tt.body})
			if err != nil {
				t.Fatalf("Send: %v", err)
			}

			msgs := rec.messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages, want 1", len(msgs))
			}
			got := msgs[0]
			if diff := cmp.Diff(received{From: "drip@faucet.example", To: []string{"ann@example.com"}}, got, cmpEnvelope); diff != "" {
				t.Errorf("envelope (-want +got):\n%s", diff)
			}
			msg, err := mail.ReadMessage(bytes.NewReader(got.Data))
			if err != nil {
				t.Fatalf("server received an unparsable message: %v\n%s", err, got.Data)
			}
			wantHeaders := map[string]string{
				"From":                      `"Drip Faucet" <drip@faucet.example>`,
				"To":                        `"Ann Owner" <ann@example.com>`,
				"Date":                      "Sat, 14 Mar 2026 15:09:26 +0200",
				"Mime-Version":              "1.0",
				"Content-Type":              "text/plain; charset=utf-8",
				"Content-Transfer-Encoding": "quoted-printable",
			}
			gotHeaders := map[string]string{}
			for k := range wantHeaders {
				gotHeaders[k] = msg.Header.Get(k)
			}
			if diff := cmp.Diff(wantHeaders, gotHeaders); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			if id := msg.Header.Get("Message-Id"); !regexp.MustCompile(`^<[0-9a-f]{32}@faucet\.example>$`).MatchString(id) {
				t.Errorf("Message-ID = %q, want <32 hex digits@faucet.example>", id)
			}

			rawSubject := msg.Header.Get("Subject")
			if !isASCII(rawSubject) {
				t.Errorf("Subject header %q is not ASCII: non-ASCII must be RFC 2047 encoded", rawSubject)
			}
			subject, err := new(mime.WordDecoder).DecodeHeader(rawSubject)
			if err != nil {
				t.Fatalf("decode Subject %q: %v", rawSubject, err)
			}
			if subject != tt.subject {
				t.Errorf("Subject decodes to %q, want %q (raw %q)", subject, tt.subject, rawSubject)
			}

			for i, line := range strings.Split(string(got.Data), "\r\n") {
				if len(line) > 78 && !strings.HasPrefix(line, "Subject:") {
					t.Errorf("line %d is %d bytes long, want at most 78: %q", i, len(line), line)
				}
				if !isASCII(line) {
					t.Errorf("line %d is not ASCII: %q", i, line)
				}
			}
			body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
			if err != nil {
				t.Fatalf("decode body: %v", err)
			}
			if diff := cmp.Diff(wantBody(tt.body), string(body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

// wantBody is body as it should arrive: CRLF line endings, and a non-empty
// body ends with one.
func wantBody(body string) string {
	b := strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n")
	if b != "" && !strings.HasSuffix(b, "\r\n") {
		b += "\r\n"
	}
	return b
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] > 0x7e || (s[i] < 0x20 && s[i] != '\t') {
			return false
		}
	}
	return true
}

// cmpEnvelope compares what the server saw of the SMTP session, not the
// message text.
var cmpEnvelope = cmp.FilterPath(func(p cmp.Path) bool {
	return p.String() == "Data"
}, cmp.Ignore())

func TestSMTPSendAuthenticates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		server    serverConfig
		userinfo  string
		want      []received // envelope only
		wantErr   string
		wantAuths int
	}{
		{
			name:      "correct credentials in the clear to loopback",
			server:    serverConfig{user: "drip", pass: "p@ss:w/rd", insecureAuth: true},
			userinfo:  "drip:p%40ss%3Aw%2Frd@",
			want:      []received{{From: "drip@example.com", To: []string{"ann@example.com"}, AuthUser: "drip"}},
			wantAuths: 1,
		},
		{
			name:      "wrong password",
			server:    serverConfig{user: "drip", pass: "right", insecureAuth: true},
			userinfo:  "drip:wrong@",
			wantErr:   "535",
			wantAuths: 1,
		},
		{
			name:     "server that does not offer AUTH",
			server:   serverConfig{user: "drip", pass: "right"}, // no TLS, insecure auth off
			userinfo: "drip:right@",
			wantErr:  "does not offer AUTH",
		},
		{
			name:    "server that requires AUTH, none configured",
			server:  serverConfig{user: "drip", pass: "right", insecureAuth: true},
			wantErr: "MAIL FROM",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, rec := startServer(t, tt.server)
			s := mustSMTP(t, "smtp://"+tt.userinfo+addr+"?from=drip@example.com")

			err := s.Send(t.Context(), Message{To: "ann@example.com", Subject: "s", Body: "b"})
			checkErr(t, err, tt.wantErr)
			if tt.server.pass != "" && err != nil && strings.Contains(err.Error(), tt.server.pass) {
				t.Errorf("error %q contains the password", err)
			}
			if diff := cmp.Diff(tt.want, rec.messages(), cmpEnvelope); diff != "" {
				t.Errorf("received (-want +got):\n%s", diff)
			}
			if got := rec.auths(); got != tt.wantAuths {
				t.Errorf("server saw %d AUTH commands, want %d", got, tt.wantAuths)
			}
		})
	}
}

func TestSMTPSendTLS(t *testing.T) {
	t.Parallel()
	const host = "mail.example.com"
	serverTLS, trusted := newCert(t, host)
	tests := []struct {
		name      string
		scheme    string
		server    serverConfig
		trust     bool
		want      []received
		wantErr   string
		wantAuths int
	}{
		{
			name:      "STARTTLS upgrade before AUTH",
			scheme:    "smtp",
			server:    serverConfig{user: "drip", pass: "s3cret", startTLS: serverTLS},
			trust:     true,
			want:      []received{{From: "drip@example.com", To: []string{"ann@example.com"}, AuthUser: "drip", TLS: true}},
			wantAuths: 1,
		},
		{
			name:      "implicit TLS",
			scheme:    "smtps",
			server:    serverConfig{user: "drip", pass: "s3cret", implicitTLS: serverTLS},
			trust:     true,
			want:      []received{{From: "drip@example.com", To: []string{"ann@example.com"}, AuthUser: "drip", TLS: true}},
			wantAuths: 1,
		},
		{
			name:    "STARTTLS with an untrusted certificate",
			scheme:  "smtp",
			server:  serverConfig{user: "drip", pass: "s3cret", startTLS: serverTLS},
			wantErr: "certificate",
		},
		{
			name:    "implicit TLS with an untrusted certificate",
			scheme:  "smtps",
			server:  serverConfig{user: "drip", pass: "s3cret", implicitTLS: serverTLS},
			wantErr: "certificate",
		},
		{
			name:    "no STARTTLS: password not sent to a remote host",
			scheme:  "smtp",
			server:  serverConfig{user: "drip", pass: "s3cret", insecureAuth: true},
			wantErr: "refusing to send the password unencrypted",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr, rec := startServer(t, tt.server)
			s := mustSMTP(t, tt.scheme+"://drip:s3cret@"+host+"?from=drip@example.com")
			s.dial = dialTo(addr)
			if tt.trust {
				s.rootCAs = trusted
			}

			err := s.Send(t.Context(), Message{To: "ann@example.com", Subject: "s", Body: "b"})
			checkErr(t, err, tt.wantErr)
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q contains the password", err)
			}
			if diff := cmp.Diff(tt.want, rec.messages(), cmpEnvelope); diff != "" {
				t.Errorf("received (-want +got):\n%s", diff)
			}
			if got := rec.auths(); got != tt.wantAuths {
				t.Errorf("server saw %d AUTH commands, want %d", got, tt.wantAuths)
			}
		})
	}
}

func TestSMTPSendRejectedRecipient(t *testing.T) {
	t.Parallel()
	addr, rec := startServer(t, serverConfig{rejectRcpt: true})
	s := mustSMTP(t, "smtp://"+addr+"?from=drip@example.com")

	err := s.Send(t.Context(), Message{To: "nobody@example.com", Subject: "s", Body: "b"})
	var perr *textproto.Error
	if !errors.As(err, &perr) || perr.Code != 550 {
		t.Fatalf("Send = %v, want a *textproto.Error with code 550", err)
	}
	if !strings.Contains(err.Error(), "RCPT TO") {
		t.Errorf("error %q does not say which command failed", err)
	}
	if got := rec.messages(); len(got) != 0 {
		t.Errorf("server received %d messages, want none", len(got))
	}
}

func TestSMTPSendGivesUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		addr    func(t *testing.T) string
		ctx     func(t *testing.T) context.Context
		timeout time.Duration
		wantIs  error
	}{
		{
			name: "nothing listening",
			addr: closedAddr,
			ctx:  func(t *testing.T) context.Context { return t.Context() },
		},
		{
			name:   "silent server, caller's deadline",
			addr:   startSilentServer,
			ctx:    withTimeout(300 * time.Millisecond),
			wantIs: context.DeadlineExceeded,
		},
		{
			name:    "silent server, no caller deadline: the send timeout",
			addr:    startSilentServer,
			ctx:     func(t *testing.T) context.Context { return t.Context() },
			timeout: 300 * time.Millisecond,
			wantIs:  context.DeadlineExceeded,
		},
		{
			name: "silent server, caller cancels",
			addr: startSilentServer,
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithCancel(t.Context())
				time.AfterFunc(300*time.Millisecond, cancel)
				return ctx
			},
			wantIs: context.Canceled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustSMTP(t, "smtp://"+tt.addr(t)+"?from=drip@example.com")
			if tt.timeout != 0 {
				s.timeout = tt.timeout
			}

			start := time.Now()
			err := s.Send(tt.ctx(t), Message{To: "ann@example.com", Subject: "s", Body: "b"})
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("Send = nil, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("Send = %v, want it to wrap %v", err, tt.wantIs)
			}
			if elapsed > 5*time.Second {
				t.Errorf("Send took %v, want it to give up promptly", elapsed)
			}
		})
	}
}

func withTimeout(d time.Duration) func(t *testing.T) context.Context {
	return func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		t.Cleanup(cancel)
		return ctx
	}
}

func TestSMTPSendRejectsInvalidMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		msg     Message
		wantErr string
	}{
		{"CRLF in To", Message{To: "ann@example.com\r\nBcc: all@example.com", Subject: "s"}, "To contains a line break"},
		{"LF in To", Message{To: "ann@example.com\nBcc: all@example.com", Subject: "s"}, "To contains a line break"},
		{"CR in Subject", Message{To: "ann@example.com", Subject: "hi\rBcc: all@example.com"}, "Subject contains a line break"},
		{"LF in Subject", Message{To: "ann@example.com", Subject: "hi\n\nforged body"}, "Subject contains a line break"},
		{"To is not an address", Message{To: "ann", Subject: "s"}, `To "ann"`},
		{"To is empty", Message{Subject: "s"}, "To"},
		{"To is two addresses", Message{To: "ann@example.com, bob@example.com", Subject: "s"}, "To"},
		{"Subject too long", Message{To: "ann@example.com", Subject: strings.Repeat("x", 1000)}, "Subject is too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustSMTP(t, "smtp://mail.example.com?from=drip@example.com")
			s.dial = func(context.Context, string, string) (net.Conn, error) {
				t.Error("Send connected to the server with an invalid message")
				return nil, errDialled
			}

			err := s.Send(t.Context(), tt.msg)
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("Send = %v, want ErrInvalidMessage", err)
			}
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestNewSMTP(t *testing.T) {
	t.Parallel()
	type config struct {
		Addr     string
		Host     string
		Implicit bool
		User     string
		Pass     string
		HasAuth  bool
		From     string
	}
	tests := []struct {
		url  string
		want config
	}{
		{"smtp://mail.example.com?from=drip@example.com", config{Addr: "mail.example.com:587", Host: "mail.example.com", From: "<drip@example.com>"}},
		{"smtps://mail.example.com?from=drip@example.com", config{Addr: "mail.example.com:465", Host: "mail.example.com", Implicit: true, From: "<drip@example.com>"}},
		{"smtp://mail.example.com:25/?from=drip@example.com", config{Addr: "mail.example.com:25", Host: "mail.example.com", From: "<drip@example.com>"}},
		{"smtp://[::1]:2525?from=drip@example.com", config{Addr: "[::1]:2525", Host: "::1", From: "<drip@example.com>"}},
		{"smtp://user%40example.com:p%2Fw%3Fx%23y@mail.example.com?from=drip@example.com", config{Addr: "mail.example.com:587", Host: "mail.example.com", User: "user@example.com", Pass: "p/w?x#y", HasAuth: true, From: "<drip@example.com>"}},
		{"smtp://mail.example.com?from=Drip%20%3Cdrip@example.com%3E", config{Addr: "mail.example.com:587", Host: "mail.example.com", From: `"Drip" <drip@example.com>`}},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			s, err := NewSMTP(tt.url)
			if err != nil {
				t.Fatalf("NewSMTP: %v", err)
			}
			got := config{Addr: s.addr, Host: s.host, Implicit: s.implicit, User: s.user, Pass: s.pass, HasAuth: s.hasAuth, From: s.from.String()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NewSMTP(%q) (-want +got):\n%s", tt.url, diff)
			}
		})
	}
}

func TestNewSMTPRejectsBadURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		wantErr string
		secret  string // must not appear in the error
	}{
		{"missing from", "smtp://drip:s3cret@mail.example.com", "missing ?from=", "s3cret"},
		{"empty from", "smtp://drip:s3cret@mail.example.com?from=", "missing ?from=", "s3cret"},
		{"from is not an address", "smtp://mail.example.com?from=drip", `from "drip"`, ""},
		{"from with a line break", "smtp://mail.example.com?from=drip@example.com%0D%0ABcc:x@example.com", "line break", ""},
		{"two from", "smtp://mail.example.com?from=a@example.com&from=b@example.com", "more than one from", ""},
		{"unknown parameter", "smtp://mail.example.com?from=drip@example.com&tls=none", `unknown parameter "tls"`, ""},
		{"unknown scheme", "http://drip:s3cret@mail.example.com?from=drip@example.com", `unknown scheme "http"`, "s3cret"},
		{"no scheme", "mail.example.com:587", "scheme", ""},
		{"no scheme, host only", "mail.example.com", "missing scheme", ""},
		{"opaque", "smtp:mail.example.com?from=drip@example.com", "want smtp://host", ""},
		{"missing host", "smtp://?from=drip@example.com", "missing host", ""},
		{"port not a number", "smtp://drip:s3cret@mail.example.com:abc?from=drip@example.com", "invalid port", "s3cret"},
		{"port 0", "smtp://mail.example.com:0?from=drip@example.com", "port is not a number in 1-65535", ""},
		{"port too big", "smtp://mail.example.com:65536?from=drip@example.com", "port is not a number in 1-65535", ""},
		{"empty port", "smtp://mail.example.com:?from=drip@example.com", "empty port", ""},
		{"path", "smtp://mail.example.com/inbox?from=drip@example.com", "unexpected path", ""},
		{"user without password", "smtp://drip@mail.example.com?from=drip@example.com", "both a user and a password", ""},
		{"password without user", "smtp://:s3cret@mail.example.com?from=drip@example.com", "both a user and a password", "s3cret"},
		{"empty password", "smtp://drip:@mail.example.com?from=drip@example.com", "both a user and a password", ""},
		{"unescaped / in the password", "smtp://drip:s3cret/x@mail.example.com?from=drip@example.com", "invalid port", "s3cret"},
		{"unescaped / in a numeric password", "smtp://drip:99999/s3cret@mail.example.com?from=drip@example.com", "port is not a number", "99999"},
		{"unescaped / after a valid-port password", "smtp://drip:2525/s3cret@mail.example.com?from=drip@example.com", "unexpected path", "s3cret"},
		{"unescaped ? in the password", "smtp://drip:s3?cret@mail.example.com?from=drip@example.com", "invalid port", "s3"},
		{"unescaped # in the password", "smtp://drip:25#s3cret@mail.example.com?from=drip@example.com", "unexpected '#'", "s3cret"},
		{"space in the password", "smtp://drip:s3 cret@mail.example.com?from=drip@example.com", "malformed", "s3"},
		{"control character", "smtp://drip:s3cret@mail.example.com\x7f?from=drip@example.com", "malformed", "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := NewSMTP(tt.url)
			if err == nil {
				t.Fatalf("NewSMTP(%q) = %+v, want an error", tt.url, s)
			}
			checkErr(t, err, tt.wantErr)
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q reveals %q", err, tt.secret)
			}
		})
	}
}

func TestSMTPRedacted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url  string
		want string
	}{
		{"smtp://drip:s3cret@mail.example.com?from=drip@example.com", "smtp://drip:xxxxx@mail.example.com?from=drip@example.com"},
		{"smtps://drip:p%40ss%2Fw@mail.example.com:2465?from=drip@example.com", "smtps://drip:xxxxx@mail.example.com:2465?from=drip@example.com"},
		{"smtp://127.0.0.1:25?from=drip@example.com", "smtp://127.0.0.1:25?from=drip@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			if got := mustSMTP(t, tt.url).Redacted(); got != tt.want {
				t.Errorf("Redacted() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"localhost":        true,
		"LOCALHOST":        true,
		"127.0.0.1":        true,
		"127.1.2.3":        true,
		"::1":              true,
		"10.0.0.1":         false,
		"mail.example.com": false,
		"localhost.evil":   false,
		"::ffff:8.8.8.8":   false,
		"":                 false,
	}
	for host, want := range tests {
		if got := isLoopback(host); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// checkErr fails the test unless err is nil and wantErr empty, or err
// mentions wantErr.
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("error = %v, want nil", err)
	case wantErr != "" && err == nil:
		t.Fatalf("error = nil, want one containing %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("error = %q, want it to contain %q", err, wantErr)
	}
}
