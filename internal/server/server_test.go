package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRecoverPanicsAnswersInTheInterfacesEnvelope: a panic is logged and
// answered 500 "Internal error." in the envelope of the interface asked,
// never with a stack trace, and the process goes on.
func TestRecoverPanicsAnswersInTheInterfacesEnvelope(t *testing.T) {
	t.Parallel()
	h := recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	for path, want := range map[string]map[string]any{
		"/api/v1/send": {"status": 500.0, "message": "Internal error."},
		"/api/v2/send": {"success": false, "status": 500.0, "message": "Internal error.", "data": nil,
			"error": map[string]any{"code": "internal", "v1_status": nil}},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, nil))
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
		if rec.Code != 500 || !jsonEqual(got, want) {
			t.Errorf("%s: HTTP %d %v, want 500 %v", path, rec.Code, got, want)
		}
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
