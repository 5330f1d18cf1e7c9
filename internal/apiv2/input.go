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
	if !utf8.Valid(in.body) {
		return drip.Errorf(drip.CodeMalformed, "The request body is not valid UTF-8.")
	}
	if escapedNUL.Match(in.body) {
		return errNUL
	}
	if json.Valid(in.body) && bytes.TrimSpace(in.body)[0] != '{' {
		// null, a list, a string or a number: a body that means no
		// parameters is empty or {} (a null taken as {} once flipped
		// /anti-fraud/toggle).
		return drip.Errorf(drip.CodeMalformed, "The request body must be a JSON object.")
	}
	if err := uniqueMembers(in.body); err != nil {
		return err
	}
	if err := exactFieldNames(in.body, dst); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(in.body))
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

// maxDepth is the nesting encoding/json decodes; uniqueMembers leaves
// deeper bodies to the decoder, which refuses them.
const maxDepth = 10000

// uniqueMembers enforces the rule on duplicate parameters of issue 9 item
// 5 for a JSON body: an object that names a member twice, at any depth
// (an object in a list too, such as a ratelimits item), is refused with
// 400 malformed_request naming the member, rather than read as its last
// occurrence as encoding/json would. Names are compared as decoded, so
// "a" and "\u0061" are the same member. It is one pass over the tokens
// with a stack as deep as the nesting, linear in the body, which
// readInput caps at maxBody. A body that is not well-formed JSON is left
// to the strict decode, which says what is wrong with it.
func uniqueMembers(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // no number is refused for its size here
	var stack []jsonLevel
	for {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		top := len(stack) - 1
		switch {
		case top >= 0 && stack[top].wantName:
			name, ok := t.(string)
			if !ok { // the object's closing brace
				stack = stack[:top]
				break
			}
			if stack[top].names[name] {
				return drip.Errorf(drip.CodeMalformed, "Member %q appears more than once in %s: send each member once.", name, memberPath(stack))
			}
			stack[top].names[name], stack[top].name, stack[top].wantName = true, name, false
			continue
		case t == json.Delim('{'), t == json.Delim('['):
			if len(stack) == maxDepth {
				return nil
			}
			l := jsonLevel{}
			if t == json.Delim('{') {
				l.names, l.wantName = map[string]bool{}, true
			}
			stack = append(stack, l)
			continue
		case t == json.Delim(']'):
			stack = stack[:top]
		}
		// A value has ended: a scalar, or a list or object just closed.
		if len(stack) == 0 {
			return nil
		}
		if l := &stack[len(stack)-1]; l.names != nil {
			l.wantName = true
		} else {
			l.index++
		}
	}
}

// jsonLevel is an object or a list uniqueMembers is inside.
type jsonLevel struct {
	names    map[string]bool // an object's member names so far; nil for a list
	wantName bool            // an object's next token is a member name or its end
	name     string          // an object's member being read
	index    int             // a list's element being read
}

// memberPath names the innermost object of stack as a client wrote it:
// "the request body", or "ratelimits[0]".
func memberPath(stack []jsonLevel) string {
	if len(stack) == 1 {
		return "the request body"
	}
	var b strings.Builder
	for _, l := range stack[:len(stack)-1] {
		if l.names == nil {
			fmt.Fprintf(&b, "[%d]", l.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(l.name)
	}
	return b.String()
}

// exactFieldNames refuses members whose names match a field only when case
// is ignored, as encoding/json would: {"Currency": ...} is an unknown
// field, as the OpenAPI document says, at any depth ({"ratelimits":
// [{"CURRENCY": ...}]} too). Bodies that are not objects are left to the
// decoder's own error.
func exactFieldNames(body []byte, dst any) error {
	return exactNames(body, reflect.TypeOf(dst).Elem(), "")
}

func exactNames(raw json.RawMessage, t reflect.Type, where string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for i, item := range items {
			if err := exactNames(item, t.Elem(), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil
		}
		for name, v := range members {
			if err := exactNames(v, t.Elem(), where+"."+name); err != nil {
				return err
			}
		}
	case reflect.Struct:
		var members map[string]json.RawMessage
		if json.Unmarshal(raw, &members) != nil {
			return nil
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			fields[name] = t.Field(i).Type
		}
		for name, v := range members {
			ft, ok := fields[name]
			if !ok {
				if where == "" {
					return drip.Errorf(drip.CodeInvalid, "Unknown field %q.", name)
				}
				return drip.Errorf(drip.CodeInvalid, "Unknown field %q in %s.", name, strings.TrimPrefix(where, "."))
			}
			if err := exactNames(v, ft, where+"."+name); err != nil {
				return err
			}
		}
	}
	return nil
}

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
