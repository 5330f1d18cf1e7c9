package mail

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLogSendLogsMessage(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	s := NewLog(slog.New(slog.NewJSONHandler(&buf, nil)))

	m := Message{To: "ann@example.com", Subject: "Solde bas ₿", Body: "line one\nline two"}
	if err := s.Send(t.Context(), m); err != nil {
		t.Fatalf("Send = %v, want nil", err)
	}

	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("log output %q is not one JSON record: %v", buf.String(), err)
	}
	delete(got, "time")
	want := map[string]any{
		"level":   "INFO",
		"msg":     "mail not sent: no SMTP server configured",
		"to":      "ann@example.com",
		"subject": "Solde bas ₿",
		"body":    "line one\nline two",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log record (-want +got):\n%s", diff)
	}
}
