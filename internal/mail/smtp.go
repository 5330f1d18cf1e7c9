package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// sendTimeout bounds one Send from dial to the server's reply to the message,
// so a stalled server cannot hold a notification worker forever even when the
// caller's context has no deadline.
const sendTimeout = 30 * time.Second

// maxHeaderLine is the longest header line RFC 5322 allows, without CRLF.
const maxHeaderLine = 998

// SMTP sends mail through one SMTP server, configured by URL:
//
//	smtp://[user:pass@]host[:port]?from=drip@example.com
//	smtps://[user:pass@]host[:port]?from=drip@example.com
//
// smtp:// (default port 587) upgrades with STARTTLS whenever the server offers
// it and verifies the server's certificate. Credentials are sent only over
// TLS, or in the clear to a loopback host (a local relay); otherwise Send
// fails rather than leak the password. smtps:// (default port 465) uses TLS
// from the first byte. The user and password are percent-decoded, so a
// password containing '@', ':' or '/' must be written percent-encoded.
//
// from is the envelope sender and the From header; it may carry a display
// name, percent-encoded: from=Drip%20%3Cdrip@example.com%3E.
type SMTP struct {
	u        *url.URL // kept for Redacted
	host     string   // as dialled and as verified in the certificate
	addr     string   // host:port
	implicit bool     // smtps://
	user     string
	pass     string
	hasAuth  bool
	from     *mail.Address
	helo     string

	// Fields below are replaced by tests only.
	timeout time.Duration
	now     func() time.Time
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	rootCAs *x509.CertPool // nil: the system roots
}

var _ Sender = (*SMTP)(nil)

// NewSMTP parses and validates rawURL. Its errors never contain the password.
func NewSMTP(rawURL string) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		// Parse errors quote the URL or pieces of it, and a password with an
		// unescaped '/', '?' or '#' ends up parsed as the host or port: say
		// what is wrong without quoting anything.
		reason := "malformed"
		if strings.Contains(err.Error(), "invalid port") {
			reason = "invalid port"
		}
		return nil, fmt.Errorf("mail: invalid SMTP URL: %s (percent-encode '/', '?', '#', '@' and ':' in the user and password)", reason)
	}
	s := &SMTP{
		u:       u,
		timeout: sendTimeout,
		now:     time.Now,
		dial:    (&net.Dialer{}).DialContext,
	}
	var defaultPort string
	switch u.Scheme {
	case "smtp":
		defaultPort = "587"
	case "smtps":
		defaultPort, s.implicit = "465", true
	case "":
		return nil, errors.New(`mail: invalid SMTP URL: missing scheme, want "smtp://" or "smtps://"`)
	default:
		return nil, fmt.Errorf(`mail: invalid SMTP URL: unknown scheme %q, want "smtp" or "smtps"`, u.Scheme)
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("mail: invalid SMTP URL: want %s://host, not %s:host", u.Scheme, u.Scheme)
	}
	s.host = u.Hostname()
	if s.host == "" {
		return nil, errors.New("mail: invalid SMTP URL: missing host")
	}
	port := u.Port()
	if port == "" {
		if strings.HasSuffix(u.Host, ":") {
			return nil, errors.New("mail: invalid SMTP URL: empty port")
		}
		port = defaultPort
	}
	// The port is not quoted: with a mistyped password it may be part of it.
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, errors.New("mail: invalid SMTP URL: port is not a number in 1-65535")
	}
	s.addr = net.JoinHostPort(s.host, port)
	if u.Path != "" && u.Path != "/" {
		return nil, errors.New("mail: invalid SMTP URL: unexpected path (percent-encode '/' in the password)")
	}
	if u.Fragment != "" || strings.Contains(rawURL, "#") {
		return nil, errors.New("mail: invalid SMTP URL: unexpected '#' (percent-encode it in the password)")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, s.hasAuth = u.User.Password()
		if s.user == "" || !s.hasAuth || s.pass == "" {
			return nil, errors.New("mail: invalid SMTP URL: credentials need both a user and a password (user:pass@host)")
		}
	}

	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("mail: invalid SMTP URL: query: %v", err)
	}
	for k := range q {
		if k != "from" {
			// A typo such as "form=" would otherwise be ignored silently.
			return nil, fmt.Errorf("mail: invalid SMTP URL: unknown parameter %q (only \"from\" is supported)", k)
		}
	}
	switch from := q["from"]; {
	case len(from) == 0 || from[0] == "":
		return nil, errors.New("mail: invalid SMTP URL: missing ?from=sender@example.com")
	case len(from) > 1:
		return nil, errors.New("mail: invalid SMTP URL: more than one from parameter")
	case strings.ContainsAny(from[0], "\r\n"):
		return nil, errors.New("mail: invalid SMTP URL: from contains a line break")
	default:
		s.from, err = mail.ParseAddress(from[0])
		if err != nil {
			return nil, fmt.Errorf("mail: invalid SMTP URL: from %q: %v", from[0], err)
		}
	}

	s.helo = "localhost"
	if h, err := os.Hostname(); err == nil && validHelo(h) {
		s.helo = h
	}
	return s, nil
}

// Redacted returns the URL with the password replaced, for logs.
func (s *SMTP) Redacted() string {
	return s.u.Redacted()
}

// Send delivers m to the server, which must accept it within 30 seconds or
// before ctx ends, whichever comes first. Errors wrap ErrInvalidMessage when m
// is at fault, the context's error when it ended, and the server's
// *textproto.Error when it refused.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	to, msg, err := s.compose(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.send(ctx, to.Address, msg); err != nil {
		// The connection's deadline is the context's, and it can fire a
		// moment before ctx.Err is set: report why, not only the i/o
		// timeout it caused.
		ctxErr := ctx.Err()
		if ctxErr == nil && errors.Is(err, os.ErrDeadlineExceeded) {
			ctxErr = context.DeadlineExceeded
		}
		if ctxErr != nil {
			return fmt.Errorf("mail: send via %s: %w (%v)", s.addr, ctxErr, err)
		}
		return fmt.Errorf("mail: send via %s: %w", s.addr, err)
	}
	return nil
}

func (s *SMTP) send(ctx context.Context, to string, msg []byte) error {
	conn, err := s.dial(ctx, "tcp", s.addr)
	if err != nil {
		return err
	}
	// net/smtp knows nothing of contexts: the deadline and cancellation reach
	// it through the connection.
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	tlsConfig := &tls.Config{ServerName: s.host, RootCAs: s.rootCAs, MinVersion: tls.VersionTLS12}
	if s.implicit {
		tc := tls.Client(conn, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return fmt.Errorf("tls: %w", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		conn.Close()
		return err
	}
	defer c.Close()

	if err := c.Hello(s.helo); err != nil {
		return err
	}
	secure := s.implicit
	if !secure {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConfig); err != nil {
				return fmt.Errorf("starttls: %w", err)
			}
			secure = true
		}
	}
	if s.hasAuth {
		if !secure && !isLoopback(s.host) {
			return fmt.Errorf("server %s does not offer STARTTLS: refusing to send the password unencrypted (use smtps:// or a server with STARTTLS)", s.host)
		}
		ok, mechs := c.Extension("AUTH")
		if !ok {
			return errors.New("credentials given but the server does not offer AUTH")
		}
		if !hasWord(mechs, "PLAIN") {
			return fmt.Errorf("server offers AUTH %s but not PLAIN", mechs)
		}
		if err := c.Auth(plainAuth{user: s.user, pass: s.pass}); err != nil {
			return fmt.Errorf("auth as %q: %w", s.user, err)
		}
	}
	if err := c.Mail(s.from.Address); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	// The server has taken responsibility for the message; a failed QUIT
	// must not make the caller send it twice.
	_ = c.Quit()
	return nil
}

// compose validates m and renders it as an RFC 5322 message with CRLF line
// endings.
func (s *SMTP) compose(m Message) (*mail.Address, []byte, error) {
	if strings.ContainsAny(m.To, "\r\n") {
		return nil, nil, fmt.Errorf("%w: To contains a line break", ErrInvalidMessage)
	}
	if strings.ContainsAny(m.Subject, "\r\n") {
		return nil, nil, fmt.Errorf("%w: Subject contains a line break", ErrInvalidMessage)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: To %q: %v", ErrInvalidMessage, m.To, err)
	}
	subject := encodeSubject(m.Subject)
	if len("Subject: ")+len(subject) > maxHeaderLine {
		return nil, nil, fmt.Errorf("%w: Subject is too long", ErrInvalidMessage)
	}
	id, err := s.messageID()
	if err != nil {
		return nil, nil, err
	}

	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", s.from.String())
	header("To", to.String())
	header("Subject", subject)
	header("Date", s.now().Format(time.RFC1123Z))
	header("Message-ID", id)
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(m.Body)); err != nil {
		return nil, nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, nil, err
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		b.WriteString("\r\n")
	}
	return to, b.Bytes(), nil
}

// encodeSubject returns the Subject header value, RFC 2047 encoded when it
// is not plain ASCII.
func encodeSubject(subject string) string {
	enc := mime.QEncoding.Encode("utf-8", subject)
	if enc != subject || !strings.Contains(subject, "=?") {
		return enc
	}
	// mime leaves printable ASCII alone, but a mail reader would decode
	// ASCII that looks like an encoded word ("=?utf-8?q?...?="): encode it
	// so the subject reads as written.
	const prefix, suffix = "=?utf-8?q?", "?="
	const maxText = 75 - len(prefix) - len(suffix) // RFC 2047 word length
	var words []string
	var w strings.Builder
	for i := range len(subject) {
		var c string
		switch b := subject[i]; {
		case b == ' ':
			c = "_"
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', strings.IndexByte("!*+-/", b) >= 0:
			c = string(b)
		default:
			c = fmt.Sprintf("=%02X", b)
		}
		if w.Len()+len(c) > maxText {
			words = append(words, prefix+w.String()+suffix)
			w.Reset()
		}
		w.WriteString(c)
	}
	return strings.Join(append(words, prefix+w.String()+suffix), " ")
}

func (s *SMTP) messageID() (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	domain := "localhost"
	if at := strings.LastIndexByte(s.from.Address, '@'); at >= 0 {
		domain = s.from.Address[at+1:]
	}
	return "<" + hex.EncodeToString(r[:]) + "@" + domain + ">", nil
}

// plainAuth is AUTH PLAIN (RFC 4616). net/smtp's PlainAuth has its own
// idea of which hosts are local; Send has already decided whether the
// connection is safe for the password.
type plainAuth struct{ user, pass string }

func (a plainAuth) Start(*smtp.ServerInfo) (string, []byte, error) {
	return "PLAIN", []byte("\x00" + a.user + "\x00" + a.pass), nil
}

func (a plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected server challenge")
	}
	return nil, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func hasWord(list, word string) bool {
	for _, w := range strings.Fields(list) {
		if strings.EqualFold(w, word) {
			return true
		}
	}
	return false
}

// validHelo reports whether h can be sent as the EHLO domain as it is.
func validHelo(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}
