package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/dripfaucet/drip/internal/apiv2"
)

// validateV2 checks a v2 exchange against the OpenAPI document (D39).
func validateV2(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	if err := ValidateV2Exchange(req, reqBody, resp.StatusCode, resp.Header, body); err != nil {
		t.Errorf("%s %s: HTTP %d does not match the OpenAPI document: %v\n%s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
}

// v2Spec is the OpenAPI document of v2, loaded and validated once, with
// a router over its paths.
type v2Spec struct {
	doc    *openapi3.T
	router routers.Router
}

// loadV2Spec parses the document once for every test of the process: it is
// embedded in the binary and never changes while tests run.
var loadV2Spec = sync.OnceValues(func() (*v2Spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(apiv2.OpenAPI())
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, fmt.Errorf("validate: %w", err)
	}
	// The server URL is relative ("/api/v2"), so the router matches the
	// path under it whatever host and scheme the test server has.
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &v2Spec{doc: doc, router: router}, nil
})

// V2Document is the parsed and validated OpenAPI document of v2.
func V2Document() (*openapi3.T, error) {
	s, err := loadV2Spec()
	if err != nil {
		return nil, err
	}
	return s.doc, nil
}

// ValidateV2Exchange checks one v2 exchange against the OpenAPI document:
// the reply always (its status must be documented for the operation, and
// its headers and body must match), the request only when the reply is a
// success, since tests send bad requests on purpose. A path the document
// does not list must answer 404, and a method it does not list for a path
// 405 with Allow naming the documented methods, each with the error
// envelope. reqBody is the body req carried.
func ValidateV2Exchange(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	spec, err := loadV2Spec()
	if err != nil {
		return fmt.Errorf("OpenAPI document: %w", err)
	}
	ctx := context.Background()
	r := req.Clone(ctx)
	// v2 routes on the decoded path (apiv2 ServeHTTP), and so does the
	// router once the raw form is dropped: "/bal%61nce" is "/balance".
	r.URL.RawPath = ""
	// v2 reads the body as JSON whatever its Content-Type says (apiv2
	// readInput), and a blank body as none.
	r.Header.Del("Content-Type")
	r.Body, r.ContentLength = http.NoBody, 0
	if len(bytes.TrimSpace(reqBody)) > 0 {
		r.Header.Set("Content-Type", "application/json")
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(reqBody)), int64(len(reqBody))
	}

	route, params, err := spec.router.FindRoute(r)
	switch {
	case errors.Is(err, routers.ErrPathNotFound):
		return spec.checkUnrouted(r, http.StatusNotFound, header, body)
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return spec.checkUnrouted(r, http.StatusMethodNotAllowed, header, body)
	case err != nil:
		return fmt.Errorf("find route: %w", err)
	}

	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	var errs []error
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			errs = append(errs, fmt.Errorf("request: %w", err))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		errs = append(errs, fmt.Errorf("reply: %w", err))
	}
	return errors.Join(errs...)
}

// checkUnrouted checks the reply to a request the document has no
// operation for: the status v2 must answer it with, and the error envelope.
func (s *v2Spec) checkUnrouted(r *http.Request, want int, header http.Header, body []byte) error {
	var errs []error
	if status := statusOf(body); status != want {
		errs = append(errs, fmt.Errorf("%s %s is not in the document: want status %d, the reply says %d", r.Method, r.URL.Path, want, status))
	}
	if want == http.StatusMethodNotAllowed {
		if got, documented := header.Get("Allow"), s.methods(r.URL.Path); !sameMethods(got, documented) {
			errs = append(errs, fmt.Errorf("header Allow %q, the document gives %v", got, documented))
		}
	}
	if ct := header.Get("Content-Type"); ct != "application/json" {
		errs = append(errs, fmt.Errorf("Content-Type %q, want application/json", ct))
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		errs = append(errs, fmt.Errorf("reply is not JSON: %w", err))
	} else if err := s.errorSchema(want).VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		errs = append(errs, fmt.Errorf("reply does not match the document's %d reply: %w", want, err))
	}
	return errors.Join(errs...)
}

// errorSchema is the schema of the document's error reply with status,
// which no operation lists (404, 405): components.responses holds it.
func (s *v2Spec) errorSchema(status int) *openapi3.Schema {
	for _, r := range s.doc.Components.Responses {
		schema := r.Value.Content.Get("application/json").Schema.Value
		for _, part := range schema.AllOf {
			if st := part.Value.Properties["status"]; part.Ref == "" && st != nil && st.Value.Const == float64(status) {
				return schema
			}
		}
	}
	return s.doc.Components.Schemas["ErrorEnvelope"].Value
}

// statusOf is the status member of a reply's envelope, or 0.
func statusOf(body []byte) int {
	var e struct {
		Status int `json:"status"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Status
}

// methods are the methods the document gives the v2 path of urlPath.
func (s *v2Spec) methods(urlPath string) []string {
	item := s.doc.Paths.Value(strings.TrimPrefix(urlPath, apiv2.Prefix))
	if item == nil {
		return nil
	}
	var out []string
	for m := range item.Operations() {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// sameMethods reports whether an Allow header lists exactly methods.
func sameMethods(allow string, methods []string) bool {
	var got []string
	for m := range strings.SplitSeq(allow, ",") {
		if m = strings.TrimSpace(m); m != "" {
			got = append(got, m)
		}
	}
	slices.Sort(got)
	return len(methods) > 0 && slices.Equal(got, methods)
}

// ValidateV2Request tells whether the OpenAPI document allows a request:
// method on path (with its query) and, for a POST, body. It is the
// document's side of the property test of v2 (issue 10 item 2).
func ValidateV2Request(method, path string, body []byte) error {
	spec, err := loadV2Spec()
	if err != nil {
		return fmt.Errorf("OpenAPI document: %w", err)
	}
	r, err := http.NewRequest(method, "http://127.0.0.1:1"+apiv2.Prefix+path, http.NoBody)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		r.Header.Set("Content-Type", "application/json")
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	route, params, err := spec.router.FindRoute(r)
	if err != nil {
		return fmt.Errorf("find route: %w", err)
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}
