package apiv2

import (
	"bytes"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dripfaucet/drip/internal/operation"
)

// decodeFlat is decode's fast path for the bodies nearly every v2 request
// sends: one object of distinct, known members whose values are strings
// without escapes, numbers or booleans, as {"idempotency_key": ...,
// "to": ..., "amount": 1000, "currency": "BTC"}. It decodes such a body in
// one pass and reports true, having set dst exactly as the strict path
// (checkMembers, then encoding/json) would; given anything else (an
// escape, null, a nested value, an unknown or repeated member, a value of
// the wrong type, malformed JSON) it leaves dst untouched and reports
// false, and decode goes the strict way, which accepts or explains.
//
// Why: the strict path walks the body four times (utf8, json.Valid twice,
// the member walk) and decodes by reflection: 5-6 µs and 27 allocations a
// /send, about a fifth of the v2 handler's CPU (BENCHMARKS.md, round
// thirty-eight). FuzzDecodeFlat holds the two paths to the same result.
func decodeFlat(body []byte, dst any) bool {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	plan := flatPlanOf(v.Elem().Type())
	p := flatParser{body: body}
	var values [maxFlatMembers]flatValue
	var seen uint64
	n := 0
	p.space()
	if !p.byte('{') {
		return false
	}
	p.space()
	if !p.byte('}') {
		for {
			name, ok := p.str()
			if !ok {
				return false
			}
			f, known := plan[string(name)] // no allocation: a map lookup by []byte
			if !known || seen&(1<<f.index) != 0 {
				return false
			}
			seen |= 1 << f.index
			p.space()
			if !p.byte(':') {
				return false
			}
			p.space()
			val, ok := p.value(f.kind)
			if !ok {
				return false
			}
			values[n], n = flatValue{field: f.index, text: val}, n+1
			p.space()
			if p.byte('}') {
				break
			}
			if !p.byte(',') {
				return false
			}
			p.space()
		}
	}
	p.space()
	// Checked last, once the body is known flat: a batch's body (a list)
	// is refused at its first '[' without a pass over the whole of it.
	if p.i != len(body) || !utf8.Valid(body) {
		return false
	}
	s := v.Elem()
	for _, fv := range values[:n] {
		f := s.Field(fv.field)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(fv.text[0] == 't')
		default: // a string, or operation.Amount: a number's text or a string's
			f.SetString(string(fv.text))
		}
	}
	return true
}

// maxFlatMembers bounds the members a flat body may have: one a field of
// the widest type decodeFlat serves, and seen's bits.
const maxFlatMembers = 64

// flatKind is what a field takes from a flat body.
type flatKind uint8

const (
	flatString flatKind = iota + 1 // a string field: a JSON string
	flatBool                       // a bool field: true or false
	flatAmount                     // operation.Amount: a number or a string
)

type flatField struct {
	index int // the struct field's index, below maxFlatMembers
	kind  flatKind
}

type flatValue struct {
	field int
	text  []byte // a string's bytes between its quotes, a number's or literal's text
}

// flatPlanOf maps the JSON names of t's fields that a flat body may set to
// how each is set, once a type. A field of another type (a list, a map, an
// integer, a type with its own decoding) is left out, so a body naming it
// goes the strict way; so is every field of a type with an embedded field
// or more fields than maxFlatMembers.
func flatPlanOf(t reflect.Type) map[string]flatField {
	if p, ok := flatPlans.Load(t); ok {
		return p.(map[string]flatField)
	}
	plan := map[string]flatField{}
	if t.NumField() <= maxFlatMembers {
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Anonymous {
				plan = map[string]flatField{}
				break
			}
			name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
			if !sf.IsExported() || name == "" || name == "-" || (opts != "" && opts != "omitempty") {
				continue
			}
			if k := flatKindOf(sf.Type); k != 0 {
				plan[name] = flatField{index: i, kind: k}
			}
		}
	}
	flatPlans.Store(t, plan)
	return plan
}

var flatPlans sync.Map // reflect.Type -> map[string]flatField

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func flatKindOf(t reflect.Type) flatKind {
	if t == reflect.TypeFor[operation.Amount]() {
		// Its UnmarshalJSON keeps a number's text, or a string's value.
		return flatAmount
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler) {
		return 0
	}
	switch t.Kind() {
	case reflect.String:
		return flatString
	case reflect.Bool:
		return flatBool
	}
	return 0
}

// flatParser reads a flat body; every method reports false at anything a
// flat body does not hold.
type flatParser struct {
	body []byte
	i    int
}

func (p *flatParser) space() { p.i = skipSpace(p.body, p.i) }

func (p *flatParser) byte(c byte) bool {
	if p.i < len(p.body) && p.body[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes and returns the bytes between its
// quotes, which are then its value: no \u0000 can hide in them.
func (p *flatParser) str() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for ; p.i < len(p.body); p.i++ {
		switch c := p.body[p.i]; {
		case c == '"':
			p.i++
			return p.body[start : p.i-1], true
		case c == '\\': // an escape: the strict path decodes it
			return nil, false
		case c < 0x20: // a control character must be escaped in JSON
			return nil, false
		}
	}
	return nil, false
}

// value reads the value of a field of kind k.
func (p *flatParser) value(k flatKind) ([]byte, bool) {
	switch {
	case p.i >= len(p.body):
		return nil, false
	case p.body[p.i] == '"':
		if k == flatBool {
			return nil, false
		}
		return p.str()
	case k == flatBool:
		for _, lit := range []string{"true", "false"} {
			if bytes.HasPrefix(p.body[p.i:], []byte(lit)) {
				p.i += len(lit)
				return p.body[p.i-len(lit) : p.i], true
			}
		}
		return nil, false
	case k == flatAmount:
		return p.number()
	}
	return nil, false
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *flatParser) number() ([]byte, bool) {
	start := p.i
	p.byte('-')
	switch {
	case p.byte('0'):
	case p.digits() == 0:
		return nil, false
	}
	if p.byte('.') && p.digits() == 0 {
		return nil, false
	}
	if p.byte('e') || p.byte('E') {
		if !p.byte('+') {
			p.byte('-')
		}
		if p.digits() == 0 {
			return nil, false
		}
	}
	return p.body[start:p.i], true
}

func (p *flatParser) digits() int {
	start := p.i
	for p.i < len(p.body) && '0' <= p.body[p.i] && p.body[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}
