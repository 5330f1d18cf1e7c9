// Package mail sends drip's plain-text notification emails (D43) over SMTP,
// or writes them to the log when no SMTP server is configured.
package mail

import (
	"context"
	"errors"
	"log/slog"
)

// Message is one plain-text email to one recipient.
type Message struct {
	To      string
	Subject string
	Body    string
}

// Sender delivers a Message. A nil error means the receiving server (or the
// log) accepted the message; it says nothing about final delivery.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// ErrInvalidMessage is wrapped by Send when the message itself is at fault
// (bad recipient address, CR or LF in a header). Sending it again cannot
// succeed, so callers should not retry.
var ErrInvalidMessage = errors.New("mail: invalid message")

// Log is the Sender used when no SMTP server is configured: operators of a
// development or small installation still see what would have been sent.
type Log struct {
	log *slog.Logger
}

// NewLog returns a Sender that writes each message to log at info level.
func NewLog(log *slog.Logger) Sender {
	return &Log{log: log}
}

// Send logs m and returns nil.
func (l *Log) Send(ctx context.Context, m Message) error {
	l.log.InfoContext(ctx, "mail not sent: no SMTP server configured",
		slog.String("to", m.To),
		slog.String("subject", m.Subject),
		slog.String("body", m.Body),
	)
	return nil
}
