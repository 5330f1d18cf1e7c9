package client

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// eachEngine runs fn against the real application on every test engine
// (SQLite always, PostgreSQL when DRIP_TEST_POSTGRES_URL is set).
func eachEngine(t *testing.T, opts apptest.Options, fn func(t *testing.T, e *apptest.Env)) {
	t.Helper()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, apptest.New(t, eng.Open(t), opts))
		})
	}
}

// recorder is an http.RoundTripper that checks every v2 exchange the
// client makes against the OpenAPI document (D39): each reply always, and
// each request unless drip refused it as malformed (400), which some
// tests provoke on purpose. It also notes which paths were called and
// which request members were sent, so a test can tell that the client
// covers the whole document.
type recorder struct {
	t    testing.TB
	next http.RoundTripper

	mu      sync.Mutex
	members map[string]map[string]bool // v2 path -> members sent in its bodies
}

func newRecorder(t testing.TB, next http.RoundTripper) *recorder {
	if next == nil {
		next = http.DefaultTransport
	}
	return &recorder{t: t, next: next, members: map[string]map[string]bool{}}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		reqBody, _ = io.ReadAll(b)
	}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))

	path, isV2 := strings.CutPrefix(req.URL.Path, v2Prefix)
	if !isV2 {
		return resp, nil
	}
	if err := apptest.ValidateV2Exchange(req, reqBody, resp.StatusCode, resp.Header, body); err != nil {
		r.t.Errorf("%s %s: HTTP %d does not match the OpenAPI document: %v\nrequest %s\nreply %s", req.Method, req.URL.Path, resp.StatusCode, err, reqBody, body)
	}
	if resp.StatusCode != http.StatusBadRequest {
		if err := apptest.ValidateV2Request(req.Method, path, reqBody); err != nil {
			r.t.Errorf("%s %s: the client sent a request the OpenAPI document refuses: %v\n%s", req.Method, req.URL.Path, err, reqBody)
		}
	}
	var sent map[string]json.RawMessage
	_ = json.Unmarshal(reqBody, &sent)
	r.mu.Lock()
	if r.members[path] == nil {
		r.members[path] = map[string]bool{}
	}
	for m := range sent {
		r.members[path][m] = true
	}
	r.mu.Unlock()
	return resp, nil
}

// called is the v2 paths called so far, sorted.
func (r *recorder) called() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.members))
}

// sent tells whether a request to path carried member.
func (r *recorder) sent(path, member string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.members[path][member]
}

// testPolicy retries quickly, so tests of retries stay fast.
func testPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 5, MaxElapsed: 20 * time.Second, BaseDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond}
}

// newClient is a strict v2 client of base whose exchanges rec checks.
func newClient(t testing.TB, base, key string, rec *recorder, opts ...Option) *Client {
	t.Helper()
	opts = append([]Option{WithHTTPClient(&http.Client{Transport: rec, Timeout: 60 * time.Second}), WithRetryPolicy(testPolicy())}, opts...)
	c, err := New(base, key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c.strict = true
	return c
}

// newV1 is a strict v1 client of base.
func newV1(t testing.TB, base, apiKey string) *V1 {
	t.Helper()
	v, err := NewV1(base, apiKey)
	if err != nil {
		t.Fatal(err)
	}
	v.strict = true
	return v
}
