package apiv1

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/dripfaucet/drip/internal/drip"
)

// maxBody bounds a v1 request body; real requests are a few hundred bytes.
const maxBody = 64 << 10

// bodies are the buffers form bodies are read into, reused: reading each
// into a new one allocated half a kilobyte a request (BENCHMARKS.md, round
// twenty-six). None grows much past maxBody, which the reader stops at.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readParams decodes a v1 body into values (D20): form-urlencoded (also when
// no Content-Type is given), multipart/form-data, or a JSON object whose
// members are strings, numbers or booleans. Unknown fields are kept and
// ignored by the handlers. Invalid UTF-8 and NUL bytes become U+FFFD, so
// nothing a caller sends can upset the database, and a value carrying them
// ("1000\x00", "alice\x00") is refused like any malformed value, not
// silently read as its clean part. The returned error is
// client-safe and means the key could not be read.
func readParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var values url.Values
	var err error
	switch mediaType {
	case "multipart/form-data":
		if err = r.ParseMultipartForm(maxBody); err == nil {
			values = url.Values(r.MultipartForm.Value)
		}
	case "application/json":
		values, err = readJSON(r.Body)
	default:
		body := bodies.Get().(*bytes.Buffer)
		body.Reset()
		if _, err = body.ReadFrom(r.Body); err == nil {
			// ParseQuery keeps every pair it could decode and reports the
			// first it could not; a broken pair elsewhere must not hide a
			// good api_key, so its error is not fatal.
			values, _ = url.ParseQuery(body.String())
		}
		bodies.Put(body)
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, drip.Errorf(drip.CodeUnauthenticated, "Request body too large (limit 64 KiB); api_key could not be read.")
		}
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Malformed request body; api_key could not be read.")
	}
	// Duplicate parameters, issue 9 item 5: a parameter given more than
	// once is read from its first occurrence, in every body format (form,
	// multipart and JSON alike), and the later ones are dropped here, so no
	// handler can read them. v1 cannot refuse such a request with a 400, its
	// statuses being fixed by spec 7.1, and first-wins is what form parsing
	// (url.Values.Get) already did; readJSON keeps the first of a repeated
	// JSON member the same way.
	for k, vs := range values {
		vs[0] = strings.ReplaceAll(strings.ToValidUTF8(vs[0], "\uFFFD"), "\x00", "\uFFFD")
		values[k] = vs[:1:1] // the later ones unreachable, even by append
	}
	return values, nil
}

// readJSON reads a JSON object into values, keeping of a member written
// more than once its first occurrence (issue 9 item 5, see readParams),
// even when that one is null, which means absent; a decode into a map
// would keep the last. Numbers keep their literal text, so 1e3 stays "1e3"
// and is refused as an amount like its form twin (D27). Arrays and objects
// keep their JSON text, which no field accepts.
func readJSON(body io.Reader) (url.Values, error) {
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if t, err := dec.Token(); err != nil {
		return nil, err
	} else if t != json.Delim('{') {
		return nil, errors.New("the body is not a JSON object")
	}
	values := url.Values{}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, ok := t.(string)
		if !ok {
			return nil, errors.New("a member name is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		var v any
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case nil:
			continue
		case string:
			values.Set(name, v)
		case json.Number:
			values.Set(name, v.String())
		case bool:
			values.Set(name, map[bool]string{true: "true", false: "false"}[v])
		default:
			values.Set(name, string(raw))
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	return values, nil
}
