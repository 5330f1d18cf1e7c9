package mail

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// serverConfig describes the SMTP server a test talks to.
type serverConfig struct {
	user, pass   string      // non-empty: AUTH PLAIN with these, required before MAIL
	insecureAuth bool        // offer AUTH without TLS
	startTLS     *tls.Config // offer STARTTLS
	implicitTLS  *tls.Config // TLS from the first byte (smtps)
	rejectRcpt   bool        // answer every RCPT TO with 550
}

// received is one message as the server took it.
type received struct {
	From     string
	To       []string
	Data     []byte
	AuthUser string
	TLS      bool // the message came over TLS
}

// recorder is the server's backend: it keeps what arrived.
type recorder struct {
	cfg serverConfig

	mu           sync.Mutex
	msgs         []received
	authAttempts int
}

func (r *recorder) NewSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{r: r, conn: c}, nil
}

func (r *recorder) messages() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.msgs...)
}

func (r *recorder) auths() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.authAttempts
}

type session struct {
	r        *recorder
	conn     *smtp.Conn
	authUser string
	msg      received
}

func (s *session) AuthMechanisms() []string {
	if s.r.cfg.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(string) (sasl.Server, error) {
	s.r.mu.Lock()
	s.r.authAttempts++
	s.r.mu.Unlock()
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != s.r.cfg.user || pass != s.r.cfg.pass {
			return smtp.ErrAuthFailed
		}
		s.authUser = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.r.cfg.user != "" && s.authUser == "" {
		return smtp.ErrAuthRequired
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.msg = received{From: from, AuthUser: s.authUser, TLS: isTLS}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.r.cfg.rejectRcpt {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.msg.To = append(s.msg.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.msg.Data = b
	s.r.mu.Lock()
	s.r.msgs = append(s.r.msgs, s.msg)
	s.r.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.msg = received{} }
func (s *session) Logout() error { return nil }

// startServer runs a real SMTP server on a loopback port for the life of the
// test and returns its address and what it received.
func startServer(t *testing.T, cfg serverConfig) (string, *recorder) {
	t.Helper()
	rec := &recorder{cfg: cfg}
	srv := smtp.NewServer(rec)
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = cfg.insecureAuth
	srv.TLSConfig = cfg.startTLS
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.implicitTLS != nil {
		l = tls.NewListener(l, cfg.implicitTLS)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), rec
}

// startSilentServer accepts connections and never says a word, like a
// server that has hung.
func startSilentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// newCert returns a self-signed server certificate for host and a pool that
// trusts it.
func newCert(t *testing.T, host string) (*tls.Config, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: host},
		DNSNames:              []string{host},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, pool
}

// dialTo makes an SMTP sender connect to addr whatever host its URL names,
// so tests can use a non-loopback name (and its certificate) locally.
func dialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}

// mustSMTP parses rawURL or fails the test.
func mustSMTP(t *testing.T, rawURL string) *SMTP {
	t.Helper()
	s, err := NewSMTP(rawURL)
	if err != nil {
		t.Fatalf("NewSMTP(%q): %v", rawURL, err)
	}
	return s
}

var errDialled = errors.New("test: dialled")
