package apiv2

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/dripfaucet/drip/internal/drip"
)

// DocsPath serves v2's reference as one HTML page, rendered on the server
// from the OpenAPI document (D39) with its own small stylesheet: nothing
// is loaded from another site, so it reads the same offline and behind a
// strict proxy.
const DocsPath = Prefix + "/docs"

var (
	//go:embed docs.html
	docsTemplate string
	//go:embed docs.css
	docsCSS string
)

// docsPolicy lets the page load nothing at all besides its inline style.
const docsPolicy = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

func (h *Handler) serveDocs(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		h.fail(w, r, drip.Errorf(drip.CodeMethodNotAllowed, "Method %s not allowed here: use GET.", r.Method))
		return
	}
	page, err := h.docs()
	if err != nil {
		h.fail(w, r, err) // a broken embedded document: internal, logged
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", docsPolicy)
	w.Header().Set("Cache-Control", "public, max-age=300")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(page)
}

// RenderDocs renders the reference page of an OpenAPI 3.1 document.
func RenderDocs(document []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(document, &doc); err != nil {
		return nil, fmt.Errorf("docs: %w", err)
	}
	d := docsReader{components: object(object(doc, "components"), "schemas"),
		responses: object(object(doc, "components"), "responses")}
	info := object(doc, "info")
	page := docsPage{
		Title: str(info, "title"), Version: str(info, "version"), Intro: markdown(str(info, "description")),
		CSS: template.CSS(docsCSS), Base: Prefix,
	}
	if servers, _ := doc["servers"].([]any); len(servers) > 0 {
		if s, ok := servers[0].(map[string]any); ok {
			page.Base = str(s, "url")
		}
	}
	paths := object(doc, "paths")
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		item := object(paths, path)
		for _, method := range []string{"get", "head", "post"} {
			o, ok := item[method].(map[string]any)
			if !ok {
				continue
			}
			page.Ops = append(page.Ops, d.operation(page.Base, path, method, o))
		}
	}
	codes := object(d.components, "ErrorCode")
	page.Errors = markdown(str(codes, "description"))
	var out bytes.Buffer
	if err := docsPageTemplate.Execute(&out, page); err != nil {
		return nil, fmt.Errorf("docs: %w", err)
	}
	return out.Bytes(), nil
}

var docsPageTemplate = template.Must(template.New("docs").Parse(docsTemplate))

type docsPage struct {
	Title, Version, Base string
	Intro, Errors        template.HTML
	CSS                  template.CSS
	Ops                  []docsOp
}

type docsOp struct {
	ID, Method, Path, Summary, Scope string
	Description                      template.HTML
	Query, Body, Reply               []docsField
	Responses                        []docsResponse
}

// docsField is one field of a request or reply; nested fields are named
// by their path (payouts[].amount).
type docsField struct {
	Name, Type, Constraints string
	Required                bool
	Description             template.HTML
}

type docsResponse struct {
	Status      string
	Description template.HTML
}

// docsReader reads the document's shared schemas and error replies.
type docsReader struct{ components, responses map[string]any }

func (d docsReader) operation(base, path, method string, o map[string]any) docsOp {
	op := docsOp{
		ID: method + strings.ReplaceAll(path, "/", "-"), Method: strings.ToUpper(method), Path: base + path,
		Summary: str(o, "summary"), Scope: str(o, "x-scope"), Description: markdown(str(o, "description")),
	}
	if op.ID == method+"-" {
		op.ID = method
	}
	params, _ := o["parameters"].([]any)
	for _, p := range params {
		p, _ := p.(map[string]any)
		f := d.field(str(p, "name"), object(p, "schema"))
		f.Required, _ = p["required"].(bool)
		f.Description = markdown(str(p, "description"))
		op.Query = append(op.Query, f)
	}
	if body := object(object(object(object(o, "requestBody"), "content"), "application/json"), "schema"); body != nil {
		op.Body = d.fields("", d.resolve(body))
	}
	responses := object(o, "responses")
	for _, status := range slices.Sorted(maps.Keys(responses)) {
		r := object(responses, status)
		if ref := str(r, "$ref"); ref != "" {
			name := ref[strings.LastIndexByte(ref, '/')+1:]
			op.Responses = append(op.Responses, docsResponse{Status: status, Description: markdown(d.responseDescription(name))})
			continue
		}
		op.Responses = append(op.Responses, docsResponse{Status: status, Description: markdown(str(r, "description"))})
		if status == "200" {
			op.Reply = d.reply(object(object(object(r, "content"), "application/json"), "schema"))
		}
	}
	return op
}

// responseDescription is a shared error reply's description.
func (d docsReader) responseDescription(name string) string {
	return str(object(d.responses, name), "description")
}

// reply is the fields of a 200 reply's data: the envelope's data member
// when the reply is one (allOf SuccessEnvelope + data), else the schema's.
func (d docsReader) reply(schema map[string]any) []docsField {
	if schema == nil {
		return nil
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, part := range all {
			part, _ := part.(map[string]any)
			if data := object(object(part, "properties"), "data"); data != nil {
				return d.fields("data.", d.resolve(data))
			}
		}
	}
	return d.fields("", d.resolve(schema))
}

// resolve follows a $ref into the components.
func (d docsReader) resolve(s map[string]any) map[string]any {
	for range 8 {
		ref := str(s, "$ref")
		if ref == "" {
			return s
		}
		s = object(d.components, ref[strings.LastIndexByte(ref, '/')+1:])
	}
	return s
}

// fields lists an object schema's properties, required ones first, and
// the fields of objects nested in them.
func (d docsReader) fields(prefix string, s map[string]any) []docsField {
	props := object(s, "properties")
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			required[fmt.Sprint(r)] = true
		}
	}
	names := slices.Sorted(maps.Keys(props))
	slices.SortStableFunc(names, func(a, b string) int {
		switch {
		case required[a] == required[b]:
			return 0
		case required[a]:
			return -1
		}
		return 1
	})
	var out []docsField
	for _, name := range names {
		p := d.resolve(object(props, name))
		f := d.field(prefix+name, p)
		f.Required = required[name]
		f.Description = markdown(str(p, "description"))
		out = append(out, f)
		switch {
		case object(p, "properties") != nil:
			out = append(out, d.fields(prefix+name+".", p)...)
		case object(p, "items") != nil:
			if items := d.resolve(object(p, "items")); object(items, "properties") != nil {
				out = append(out, d.fields(prefix+name+"[].", items)...)
			}
		}
	}
	return out
}

// field is a schema's type and constraints.
func (d docsReader) field(name string, s map[string]any) docsField {
	s = d.resolve(s)
	return docsField{Name: name, Type: d.typeOf(s), Constraints: constraints(s)}
}

func (d docsReader) typeOf(s map[string]any) string {
	var alts []string
	for _, key := range []string{"anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok && s["type"] == nil {
			for _, a := range list {
				a, _ := a.(map[string]any)
				if t := d.typeOf(d.resolve(a)); t != "" {
					alts = append(alts, t)
				}
			}
		}
	}
	if len(alts) > 0 {
		return strings.Join(alts, " | ")
	}
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
	}
	for i, t := range types {
		if t == "array" {
			if items := d.resolve(object(s, "items")); items != nil {
				if it := d.typeOf(items); it != "" {
					types[i] = it + "[]"
				}
			}
		}
	}
	if len(types) == 0 {
		if _, ok := s["const"]; ok {
			return "const"
		}
		if _, ok := s["enum"]; ok {
			return "enum"
		}
	}
	return strings.Join(types, " | ")
}

// constraints says in words what a schema allows besides its type.
func constraints(s map[string]any) string {
	var out []string
	add := func(key, label string) {
		if v, ok := s[key]; ok {
			out = append(out, label+" "+jsonText(v))
		}
	}
	add("const", "=")
	add("enum", "one of")
	add("minimum", "≥")
	add("maximum", "≤")
	add("minLength", "length ≥")
	add("maxLength", "length ≤")
	add("minItems", "items ≥")
	add("maxItems", "items ≤")
	add("pattern", "pattern")
	add("format", "format")
	add("default", "default")
	for _, key := range []string{"anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok {
			for _, a := range list {
				a, _ := a.(map[string]any)
				if c := constraints(a); c != "" {
					out = append(out, "("+c+")")
				}
				if req, ok := a["required"].([]any); ok && s["type"] != nil {
					out = append(out, "requires "+jsonText(req))
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

var (
	inlineCode = regexp.MustCompile("`([^`]+)`")
	bold       = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// markdown renders the little Markdown the document's descriptions use:
// paragraphs, **bold**, `code` and pipe tables. Text is escaped first, so
// nothing in a description becomes markup of its own.
func markdown(text string) template.HTML {
	var b strings.Builder
	for _, block := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if block = strings.TrimSpace(block); block == "" {
			continue
		}
		lines := strings.Split(block, "\n")
		if strings.HasPrefix(lines[0], "|") {
			b.WriteString("<table>")
			for i, line := range lines {
				if i == 1 && strings.Trim(line, "|-: ") == "" {
					continue // the header's rule
				}
				cell := "td"
				if i == 0 {
					cell = "th"
				}
				b.WriteString("<tr>")
				for _, c := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
					fmt.Fprintf(&b, "<%s>%s</%s>", cell, inline(strings.TrimSpace(c)), cell)
				}
				b.WriteString("</tr>")
			}
			b.WriteString("</table>")
			continue
		}
		fmt.Fprintf(&b, "<p>%s</p>", inline(block))
	}
	return template.HTML(b.String())
}

func inline(s string) string {
	s = template.HTMLEscapeString(s)
	s = inlineCode.ReplaceAllString(s, "<code>$1</code>")
	return bold.ReplaceAllString(s, "<strong>$1</strong>")
}

func str(m map[string]any, key string) string {
	v, _ := m[key].(string)
	return v
}
