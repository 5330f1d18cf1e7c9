package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/key"
)

// Key mints a v2 key of faucet f with the given scopes (D14).
func (e *Env) Key(t testing.TB, f *drip.Faucet, scopes ...drip.Scope) string {
	t.Helper()
	return e.KeyWith(t, key.MintParams{FaucetID: f.ID, Scopes: scopes})
}

// KeyWith mints a v2 key as p says.
func (e *Env) KeyWith(t testing.TB, p key.MintParams) string {
	t.Helper()
	_, secret, err := e.App.Keys.Mint(context.Background(), p)
	if err != nil {
		t.Fatalf("mint key: %v", err)
	}
	return secret
}

// V2Reply is a v2 reply: HTTP status, headers, raw body and the envelope.
type V2Reply struct {
	HTTPStatus int
	Header     http.Header
	Raw        string
	Envelope   struct {
		Success bool            `json:"success"`
		Status  int             `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
		Error   *struct {
			Code     string `json:"code"`
			V1Status *int   `json:"v1_status"`
		} `json:"error"`
	}
}

// Code is the reply's error code, or "" for a success.
func (r *V2Reply) Code() string {
	if r.Envelope.Error == nil {
		return ""
	}
	return r.Envelope.Error.Code
}

// Data decodes the reply's data into dst, failing the test if it cannot.
func (r *V2Reply) Data(t testing.TB, dst any) {
	t.Helper()
	if err := json.Unmarshal(r.Envelope.Data, dst); err != nil {
		t.Fatalf("decode data: %v\n%s", err, r.Raw)
	}
}

// V2 POSTs body (marshalled to JSON unless it is a string or nil) to a v2
// path ("/send") with the Bearer key ("" for none).
func (e *Env) V2(t testing.TB, bearerKey, path string, body any) *V2Reply {
	t.Helper()
	return e.V2Do(t, http.MethodPost, bearerKey, path, body, nil)
}

// V2Do sends any request to a v2 path. Every reply is checked against the
// OpenAPI document (D39), so the document cannot drift from the code.
func (e *Env) V2Do(t testing.TB, method, bearerKey, path string, body any, header http.Header) *V2Reply {
	t.Helper()
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			t.Fatalf("marshal body: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.Server.URL+apiv2.Prefix+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearerKey != "" {
		req.Header.Set("Authorization", "Bearer "+bearerKey)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := e.Server.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read reply: %v", err)
	}
	r := &V2Reply{HTTPStatus: resp.StatusCode, Header: resp.Header, Raw: string(got)}
	if err := json.Unmarshal(got, &r.Envelope); err != nil {
		t.Fatalf("%s %s: reply is not a v2 envelope: %v\n%s", method, path, err, got)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	if r.Envelope.Status != resp.StatusCode || r.Envelope.Success != (resp.StatusCode == http.StatusOK) {
		t.Errorf("%s %s: envelope status %d success %v, HTTP status %d", method, path, r.Envelope.Status, r.Envelope.Success, resp.StatusCode)
	}
	if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, got)
	}
	validateV2(t, req, raw, resp, got)
	return r
}
