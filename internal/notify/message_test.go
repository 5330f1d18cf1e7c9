package notify

import (
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
	"log/slog"
	"testing"

	"github.com/dripfaucet/drip/internal/mail"
)

func TestWorkerChannelDefaultsToSender(t *testing.T) {
	t.Parallel()
	smtpSender, err := mail.NewSMTP("smtp://127.0.0.1:25?from=drip@example.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		sender mail.Sender
		want   string
	}{
		{"no sender logs", nil, "log"},
		{"log sender", mail.NewLog(slog.Default()), "log"},
		{"smtp sender", smtpSender, "smtp"},
	} {
		if got := NewWorker(Config{Mail: tt.sender}).channel; got != tt.want {
			t.Errorf("%s: channel %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSubjectStaysOneLine(t *testing.T) {
	t.Parallel()
	f := &drip.Faucet{ID: 7, Name: "Evil\r\nBcc: all@example.com"}
	m := lowBalanceMessage(f, &drip.User{Username: "ann", Email: "ann@example.com"},
		&drip.Notification{Kind: "low_balance", Coin: "DOGE", Threshold: 100_000_000, Balance: 1})
	if want := `drip: Faucet "Evil  Bcc: all@example.com" is low on DOGE`; m.Subject != want {
		t.Errorf("Subject = %q, want %q", m.Subject, want)
	}
	for _, line := range []string{
		"Balance:   0.00000001 DOGE (1 smallest units)",
		"Threshold: 1 DOGE (100000000 smallest units)",
		`faucet "Evil  Bcc: all@example.com" (id 7)`,
	} {
		if !strings.Contains(m.Body, line) {
			t.Errorf("body lacks %q:\n%s", line, m.Body)
		}
	}
}

// The email of an endpoint disabled for failing (D52) names the faucet
// and the endpoint's URL, each on one line.
func TestWebhookDisabledMessage(t *testing.T) {
	t.Parallel()
	f := &drip.Faucet{ID: 9, Name: "Drops\r\nBcc: all@example.com"}
	m := webhookDisabledMessage(f, &drip.User{Username: "ann", Email: "ann@example.com"},
		&drip.Notification{Kind: drip.NotifyWebhookDisabled, Detail: "https://hooks.example.com/in\nX: y"})
	if want := `drip: A webhook endpoint of faucet "Drops  Bcc: all@example.com" was disabled`; m.Subject != want || m.To != "ann@example.com" {
		t.Errorf("Subject = %q to %q, want %q to ann@example.com", m.Subject, m.To, want)
	}
	for _, line := range []string{"    https://hooks.example.com/in X: y\n", "(id 9) failed every delivery", "enable the endpoint"} {
		if !strings.Contains(m.Body, line) {
			t.Errorf("body lacks %q:\n%s", line, m.Body)
		}
	}
}
