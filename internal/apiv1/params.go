package apiv1

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
)

// maxBody bounds a v1 request body; real requests are a few hundred bytes.
const maxBody = 64 << 10

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
		var body []byte
		if body, err = io.ReadAll(r.Body); err == nil {
			// ParseQuery keeps every pair it could decode and reports the
			// first it could not; a broken pair elsewhere must not hide a
			// good api_key, so its error is not fatal.
			values, _ = url.ParseQuery(string(body))
		}
	}
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, drip.Errorf(drip.CodeUnauthenticated, "Request body too large (limit 64 KiB); api_key could not be read.")
		}
		return nil, drip.Errorf(drip.CodeUnauthenticated, "Malformed request body; api_key could not be read.")
	}
	for k, vs := range values {
		for i, v := range vs {
			vs[i] = strings.ReplaceAll(strings.ToValidUTF8(v, "\uFFFD"), "\x00", "\uFFFD")
		}
		values[k] = vs
	}
	return values, nil
}

// readJSON reads a JSON object into values. Numbers keep their literal text,
// so 1e3 stays "1e3" and is refused as an amount like its form twin (D27).
// Arrays and objects keep their JSON text, which no field accepts.
func readJSON(body io.Reader) (url.Values, error) {
	dec := json.NewDecoder(body)
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	values := url.Values{}
	for k, raw := range obj {
		var v any
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, err
		}
		switch v := v.(type) {
		case nil:
			continue
		case string:
			values.Set(k, v)
		case json.Number:
			values.Set(k, v.String())
		case bool:
			values.Set(k, map[bool]string{true: "true", false: "false"}[v])
		default:
			values.Set(k, string(raw))
		}
	}
	return values, nil
}
