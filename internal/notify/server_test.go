package notify_test

import (
	"bytes"
	"io"
	"log"
	"mime"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Credentials the test server requires, so tests can check that they never
// reach a notification's error.
const (
	smtpUser = "drip"
	smtpPass = "s3cret-Pa55"
)

// mailbox is a real SMTP server on a loopback port, keeping what it takes.
type mailbox struct {
	addr   string
	reject atomic.Bool // answer RCPT TO with 550

	mu    sync.Mutex
	msgs  []email
	rcpts int // RCPT TO commands seen, accepted or not
}

// email is one message as the server took it, decoded.
type email struct {
	To      []string
	Subject string
	Body    string
}

// startMailbox runs a mailbox for the life of the test.
func startMailbox(t *testing.T) *mailbox {
	t.Helper()
	mb := &mailbox{}
	srv := smtp.NewServer(mb)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true // loopback only
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mb.addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return mb
}

// url is the --smtp-url of the mailbox.
func (mb *mailbox) url() string {
	return "smtp://" + smtpUser + ":" + smtpPass + "@" + mb.addr + "?from=drip@example.com"
}

func (mb *mailbox) messages() []email {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]email(nil), mb.msgs...)
}

// attempts is how many recipients senders tried, delivered or refused.
func (mb *mailbox) attempts() int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return mb.rcpts
}

func (mb *mailbox) NewSession(*smtp.Conn) (smtp.Session, error) {
	return &session{mb: mb}, nil
}

type session struct {
	mb     *mailbox
	authed bool
	to     []string
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != smtpUser || pass != smtpPass {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(string, *smtp.MailOptions) error {
	if !s.authed {
		return smtp.ErrAuthRequired
	}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.mb.mu.Lock()
	s.mb.rcpts++
	s.mb.mu.Unlock()
	if s.mb.reject.Load() {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		return err
	}
	body, err := io.ReadAll(quotedprintable.NewReader(m.Body))
	if err != nil {
		return err
	}
	s.mb.mu.Lock()
	s.mb.msgs = append(s.mb.msgs, email{To: s.to, Subject: subject, Body: string(bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")))})
	s.mb.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.to = nil }
func (s *session) Logout() error { return nil }
