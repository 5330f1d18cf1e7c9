// Package client is a Go client for drip's HTTP interfaces: v2 (JSON,
// scoped Bearer keys, spec 4.2) through Client, the FaucetPay-style v1
// (form-encoded, one key per faucet, spec 4.1) through V1, and the
// verification of signed webhook bodies (spec 6.1).
//
// It has its own wire types, so it can be imported by anyone; the tests
// check them against the server's OpenAPI document (/api/v2/openapi.json),
// which is the contract.
//
// A v2 Send carries an idempotency key, generated when the caller gives
// none, and is retried on transport errors and on 503 "unavailable" or
// "outcome_unknown" with the same key, so a retry never pays twice (D35).
// v1 has no idempotency keys: V1.Send is never retried.
//
// Amounts are int64 in the coin's smallest unit (1 BTC = 100000000); the
// whole-coin decimals (balance_bitcoin and the like) are json.Number,
// exact as the server wrote them.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Option adjusts a Client or a V1.
type Option func(*conn)

// WithHTTPClient sends requests through hc instead of a client with a
// 30-second timeout.
func WithHTTPClient(hc *http.Client) Option { return func(c *conn) { c.hc = hc } }

// WithRetryPolicy replaces DefaultRetryPolicy() for the calls that retry
// (v2 Send and the v2 reads).
func WithRetryPolicy(p RetryPolicy) Option { return func(c *conn) { c.retry = p } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *conn) { c.userAgent = ua } }

// conn is what Client and V1 share: where the server is and how to reach it.
type conn struct {
	base      string // scheme://host[:port][/prefix], without a trailing slash
	hc        *http.Client
	retry     RetryPolicy
	userAgent string
	auth      http.Header // v2's Authorization; nil for v1
	// strict refuses reply members the wire types lack; the tests set it,
	// so that the server cannot answer a field the client drops. A client
	// in production ignores them, as servers may add fields.
	strict bool
}

func newConn(baseURL string, opts []Option) (*conn, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http(s)://host[:port]", baseURL)
	}
	c := &conn{
		base:      strings.TrimSuffix(u.String(), "/"),
		hc:        &http.Client{Timeout: 30 * time.Second},
		retry:     DefaultRetryPolicy(),
		userAgent: "drip-go-client",
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// maxReply bounds a reply body read into memory.
const maxReply = 16 << 20

// exchange is one HTTP request's reply.
type exchange struct {
	status int
	header http.Header
	body   []byte
}

// post sends one POST and reads its whole reply. A transport error, or a
// reply body that cannot be read, is returned as is.
func (c *conn) post(ctx context.Context, path, contentType string, body []byte, header http.Header) (*exchange, error) {
	var r io.Reader = http.NoBody
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, r)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	return c.do(req)
}

// do sends req, asking for JSON as the client, and reads its whole reply.
func (c *conn) do(req *http.Request) (*exchange, error) {
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReply))
	if err != nil {
		// Said as the transport says its failures, so that a reply cut
		// short is retried as a dropped connection is.
		return nil, &url.Error{Op: "read reply of", URL: req.URL.String(), Err: err}
	}
	return &exchange{status: resp.StatusCode, header: resp.Header, body: raw}, nil
}

// decode reads raw JSON into out, refusing unknown members when strict.
func (c *conn) decode(raw []byte, out any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	if c.strict {
		d.DisallowUnknownFields()
	}
	if err := d.Decode(out); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// Client calls drip's v2 interface (spec 4.2) with one Bearer key. It is
// safe for concurrent use.
type Client struct{ *conn }

// New returns a v2 client of the server at baseURL (for example
// "https://drip.example.com") with a v2 key minted by `drip admin key
// mint`.
func New(baseURL, key string, opts ...Option) (*Client, error) {
	c, err := newConn(baseURL, opts)
	if err != nil {
		return nil, err
	}
	if key == "" {
		return nil, errors.New("client: empty key")
	}
	return &Client{conn: c}, c.setKey(key)
}

// v2Prefix is where v2 is mounted.
const v2Prefix = "/api/v2"

// setKey is kept on the conn's header set; a key never appears in errors.
func (c *conn) setKey(key string) error {
	if strings.ContainsAny(key, "\r\n") {
		return errors.New("client: key contains a line break")
	}
	c.auth = http.Header{"Authorization": {"Bearer " + key}}
	return nil
}

// envelope is every v2 reply (D32).
type envelope struct {
	Success bool            `json:"success"`
	Status  int             `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Error   *struct {
		Code     string `json:"code"`
		V1Status *int   `json:"v1_status"`
	} `json:"error"`
}

// once makes one v2 call: it POSTs in (as JSON, none when nil) to path
// and decodes the reply's data into out. It returns the reply's headers.
func (c *Client) once(ctx context.Context, path string, body []byte, out any) (http.Header, error) {
	x, err := c.post(ctx, v2Prefix+path, "application/json", body, c.auth)
	if err != nil {
		return nil, err
	}
	var env envelope
	if jerr := json.Unmarshal(x.body, &env); jerr != nil || (x.status != http.StatusOK && env.Error == nil) {
		// Not drip's envelope: a proxy or load balancer answered.
		return x.header, &Error{HTTPStatus: x.status, Message: snippet(x.body), RetryAfter: retryAfter(x.header), Path: v2Prefix + path}
	}
	if x.status != http.StatusOK || !env.Success {
		e := &Error{HTTPStatus: x.status, Message: env.Message, RetryAfter: retryAfter(x.header), Path: v2Prefix + path}
		if env.Error != nil {
			e.Code = env.Error.Code
			if env.Error.V1Status != nil {
				e.V1Status = *env.Error.V1Status
			}
		}
		return x.header, e
	}
	if out != nil {
		if err := c.decode(env.Data, out); err != nil {
			return x.header, fmt.Errorf("client: %s: decode reply data: %w", path, err)
		}
	}
	return x.header, nil
}

// call is once with body marshalled from in (nil: no body).
func (c *Client) call(ctx context.Context, path string, in, out any) (http.Header, error) {
	body, err := marshal(in)
	if err != nil {
		return nil, err
	}
	return c.once(ctx, path, body, out)
}

// read is call retried as the retry policy says: a read changes nothing,
// so repeating it is always safe.
func (c *Client) read(ctx context.Context, path string, in, out any) error {
	body, err := marshal(in)
	if err != nil {
		return err
	}
	_, _, err = c.retry.do(ctx, func() (http.Header, error) { return c.once(ctx, path, body, out) })
	return err
}

func marshal(in any) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("client: encode request: %w", err)
	}
	return body, nil
}

// snippet is the start of a reply body that is not drip's, for an error
// message.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return "empty reply"
	}
	return s
}
