package apiv2

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/operation"
)

// maxBody bounds a v2 request body; the largest real one (anti-fraud lists
// of 1,000 entries) is well below it.
const maxBody = 256 << 10

// maxBatchBody bounds the body of /send/batch: 500 sends with every field
// at its longest (D61).
const maxBatchBody = 1 << 20

// bodyLimit is the largest body op takes.
func bodyLimit(op *operation.Op, ops *operation.Service) int64 {
	if op == ops.SendBatch {
		return maxBatchBody
	}
	return maxBody
}

// input is a request's parameters: a JSON object from a POST body, or the
// query of a GET (read paths only, D33).
type input struct {
	body        []byte     // the JSON object; nil for a GET or an empty body
	query       url.Values // a GET's parameters
	replyHeader http.Header
}

func readInput(w http.ResponseWriter, r *http.Request, limit int64) (*input, error) {
	in := &input{replyHeader: http.Header{}}
	if r.Method == http.MethodGet {
		in.query = r.URL.Query()
		return in, nil
	}
	// The body is read as JSON whatever its Content-Type says: clients
	// such as curl -d label JSON as a form, and the JSON decoder is strict.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, drip.Errorf(drip.CodeMalformed, "Request body too large: the limit is %d KiB.", limit>>10)
	}
	if err != nil {
		return nil, drip.Errorf(drip.CodeMalformed, "The request body could not be read.")
	}
	if len(bytes.TrimSpace(body)) > 0 {
		in.body = body
	}
	return in, nil
}

// decode reads the parameters into dst, a pointer to a struct with json
// tags: unknown fields, repeated members, wrong types and trailing data are
// refused with a message naming the field; an absent body leaves dst as it
// is.
func (in *input) decode(dst any) error {
	if in.query != nil {
		return decodeQuery(in.query, dst)
	}
	if in.body == nil {
		return nil
	}
	if decodeFlat(in.body, dst) {
		return nil
	}
	return decodeStrict(in.body, dst)
}

// decodeStrict is decode's whole check of a JSON body, which decodeFlat
// skips for the bodies it can read alone.
func decodeStrict(body []byte, dst any) error {
	if !utf8.Valid(body) {
		return drip.Errorf(drip.CodeMalformed, "The request body is not valid UTF-8.")
	}
	if bytes.Contains(body, []byte(`\u0000`)) && escapedNUL.Match(body) {
		return errNUL
	}
	if json.Valid(body) && bytes.TrimSpace(body)[0] != '{' {
		// null, a list, a string or a number: a body that means no
		// parameters is empty or {} (a null taken as {} once flipped
		// /anti-fraud/toggle).
		return drip.Errorf(drip.CodeMalformed, "The request body must be a JSON object.")
	}
	if err := checkMembers(body, reflect.TypeOf(dst).Elem()); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return drip.Errorf(drip.CodeMalformed, "Malformed JSON: data after the object.")
	}
	return nil
}

// escapedNUL finds a \u0000 escape that is not itself escaped (an odd run
// of backslashes before the u). No field takes a NUL character, PostgreSQL
// stores none, and a value carrying one must not be read as its clean part.
var escapedNUL = regexp.MustCompile(`(^|[^\\])(\\\\)*\\u0000`)

var errNUL = drip.Errorf(drip.CodeInvalid, "Strings must not contain NUL characters.")

// maxDepth is the nesting encoding/json accepts: json.Valid refuses a
// deeper body, which checkMembers then leaves to the decoder.
const maxDepth = 10000

// checkMembers enforces the two rules on member names of a JSON body, in
// one pass over it:
//
//   - a member repeated in an object, at any depth (an object in a list
//     too, such as a ratelimits item), is refused with 400
//     malformed_request naming the member and its object (issue 9 item 5),
//     rather than read as its last occurrence as encoding/json would.
//     Names are compared as decoded, so "a" and "\u0061" are the same
//     member.
//   - a member that names no field of t (the type decoded into; nil for
//     none) exactly is an unknown field, even where encoding/json would
//     match it to a field in another case: {"Currency": ...} is refused
//     as the OpenAPI document says, at any depth ({"ratelimits":
//     [{"CURRENCY": ...}]} too). A repeat anywhere is reported before an
//     unknown field.
//
// A body that is not well-formed JSON is left to the strict decode, which
// says what is wrong with it. The walk is linear in the body, which
// readInput caps at maxBody; it was three passes through encoding/json
// (a token stream, then maps of raw members), a tenth of a v2 send's CPU.
func checkMembers(body []byte, t reflect.Type) error {
	if !json.Valid(body) {
		return nil
	}
	w := memberWalk{body: body}
	if err := w.value(t); err != nil {
		return err
	}
	return w.unknown
}

// memberWalk reads a well-formed JSON body (json.Valid said so, which
// lets it skip what it does not look at without checking it again).
type memberWalk struct {
	body    []byte
	i       int          // the next byte to read
	path    []memberStep // from the body to the value being read
	unknown error        // the first unknown field met, if any
}

// memberStep is one step of a path: a member's name, or a list's index.
type memberStep struct {
	name  string
	index int // when name is ""
	list  bool
}

// value reads the value at w.i, decoded into t (nil: not decoded into a
// type whose names are checked).
func (w *memberWalk) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	w.space()
	switch w.body[w.i] {
	case '{':
		return w.object(t)
	case '[':
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		w.i++
		for n := 0; ; n++ {
			w.space()
			if w.body[w.i] == ']' {
				w.i++
				return nil
			}
			if w.body[w.i] == ',' {
				w.i++
			}
			w.path = append(w.path, memberStep{index: n, list: true})
			err := w.value(elem)
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	case '"':
		w.str()
	default: // a number, true, false or null
		for w.i < len(w.body) && !endsScalar(w.body[w.i]) {
			w.i++
		}
	}
	return nil
}

func (w *memberWalk) object(t reflect.Type) error {
	var fields map[string]reflect.Type // a struct's, by exact name
	var elem reflect.Type              // a map's values
	if t != nil {
		switch t.Kind() {
		case reflect.Struct:
			fields = structFields(t)
		case reflect.Map:
			elem = t.Elem()
		}
	}
	var seen map[string]bool
	w.i++
	for {
		w.space()
		if w.body[w.i] == '}' {
			w.i++
			return nil
		}
		if w.body[w.i] == ',' {
			w.i++
			w.space()
		}
		name := w.str()
		w.space()
		w.i++ // the colon
		if seen[name] {
			return drip.Errorf(drip.CodeMalformed, "Member %q appears more than once in %s: send each member once.", name, w.where("the request body"))
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[name] = true
		ft := elem
		if fields != nil {
			var ok bool
			if ft, ok = fields[name]; !ok && w.unknown == nil {
				if where := w.where(""); where != "" {
					w.unknown = drip.Errorf(drip.CodeInvalid, "Unknown field %q in %s.", name, where)
				} else {
					w.unknown = drip.Errorf(drip.CodeInvalid, "Unknown field %q.", name)
				}
			}
		}
		w.path = append(w.path, memberStep{name: name})
		err := w.value(ft)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
	}
}

// str reads the string at w.i and returns it decoded.
func (w *memberWalk) str() string {
	start, escaped := w.i, false
	for w.i++; w.body[w.i] != '"'; w.i++ {
		if w.body[w.i] == '\\' {
			escaped = true
			w.i++
		}
	}
	w.i++
	if !escaped {
		return string(w.body[start+1 : w.i-1])
	}
	var s string
	_ = json.Unmarshal(w.body[start:w.i], &s) // well-formed: it decodes
	return s
}

func endsScalar(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func (w *memberWalk) space() { w.i = skipSpace(w.body, w.i) }

// skipSpace is the index of the first byte of b from i on that is not JSON
// whitespace (len(b) if none is): the member walk's and decodeFlat's.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// where names the value w.path leads to as a client wrote it, such as
// "ratelimits[0]"; top when it is the body itself.
func (w *memberWalk) where(top string) string {
	if len(w.path) == 0 {
		return top
	}
	var b strings.Builder
	for _, s := range w.path {
		if s.list {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return b.String()
}

// structFields maps the JSON names of a struct's fields to their types,
// once a type: the types decoded into are few and fixed.
func structFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		fields[name] = t.Field(i).Type
	}
	fieldCache.Store(t, fields)
	return fields
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return drip.Errorf(drip.CodeInvalid, "Invalid %s: expected %s.", typeErr.Field, typeName(typeErr.Type))
	case errors.As(err, &typeErr):
		return drip.Errorf(drip.CodeMalformed, "The request body must be a JSON object.")
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return drip.Errorf(drip.CodeMalformed, "Malformed JSON in the request body.")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return drip.Errorf(drip.CodeInvalid, "Unknown field %s.", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	var fieldErr *operation.FieldError
	if errors.As(err, &fieldErr) {
		return drip.Errorf(drip.CodeInvalid, "Invalid %s: %s", fieldErr.Field, fieldErr.Problem)
	}
	return drip.Errorf(drip.CodeMalformed, "Malformed JSON in the request body.")
}

func typeName(t reflect.Type) string {
	if t == reflect.TypeFor[operation.Amount]() {
		return "a whole number"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "a whole number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// decodeQuery reads GET parameters into the string, integer and optional
// integer fields of dst; read paths take no others. A parameter given more
// than once is refused with 400 malformed_request, as a repeated member of
// a JSON body is (issue 9 item 5, see uniqueMembers), unless its field is
// a list; no read path takes a list in its query today.
func decodeQuery(q url.Values, dst any) error {
	v := reflect.ValueOf(dst).Elem()
	fields := map[string]reflect.Value{}
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		fields[name] = v.Field(i)
	}
	for name, values := range q {
		f, ok := fields[name]
		if !ok {
			return drip.Errorf(drip.CodeInvalid, "Unknown parameter %q.", name)
		}
		if len(values) > 1 && f.Kind() != reflect.Slice {
			return drip.Errorf(drip.CodeMalformed, "Parameter %q appears %d times in the query: give it once.", name, len(values))
		}
		s := values[0]
		if !utf8.ValidString(s) {
			return drip.Errorf(drip.CodeInvalid, "Invalid %s: not valid UTF-8.", name)
		}
		if strings.ContainsRune(s, 0) {
			return errNUL
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(s)
		case reflect.Pointer:
			n, err := strconv.Atoi(s)
			if err != nil {
				return drip.Errorf(drip.CodeInvalid, "Invalid %s: expected a whole number.", name)
			}
			f.Set(reflect.ValueOf(&n))
		case reflect.Int:
			n, err := strconv.Atoi(s)
			if err != nil {
				return drip.Errorf(drip.CodeInvalid, "Invalid %s: expected a whole number.", name)
			}
			f.SetInt(int64(n))
		default:
			return drip.Errorf(drip.CodeInvalid, "Parameter %q must be sent in a POST body.", name)
		}
	}
	return nil
}
