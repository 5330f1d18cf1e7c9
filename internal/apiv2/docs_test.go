package apiv2_test

import (
	"encoding/json"
	"html/template"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apiv2"
	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// TestDocsPage: /api/v2/docs renders, from the served OpenAPI document,
// every path and method with its scope, every request field, and every
// error code, and loads nothing from anywhere: no src, href or CSS url
// naming another host, and a policy that forbids it anyway.
func TestDocsPage(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{})
	resp, err := env.Server.Client().Get(env.Server.URL + apiv2.DocsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	page := string(raw)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s\n%.500s", apiv2.DocsPath, resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q, want default-src 'none'", csp)
	}

	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas struct {
				ErrorCode struct {
					Enum []string `json:"enum"`
				} `json:"ErrorCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(apiv2.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, path := range slices.Sorted(maps.Keys(doc.Paths)) {
		for method, raw := range doc.Paths[path] {
			ops++
			var op struct {
				Scope       string `json:"x-scope"`
				Summary     string `json:"summary"`
				RequestBody struct {
					Content map[string]struct {
						Schema struct {
							Properties map[string]json.RawMessage `json:"properties"`
						} `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatal(err)
			}
			id := method + strings.ReplaceAll(path, "/", "-")
			section := sectionOf(page, id)
			if section == "" {
				t.Errorf("%s %s: no section id=%q", method, path, id)
				continue
			}
			want := []string{strings.ToUpper(method), "<code>" + apiv2.Prefix + path + "</code>", template.HTMLEscapeString(op.Summary)}
			if op.Scope != "" {
				want = append(want, "scope: "+op.Scope)
			}
			for field := range op.RequestBody.Content["application/json"].Schema.Properties {
				want = append(want, "<code>"+field+"</code>")
			}
			for _, w := range want {
				if !strings.Contains(section, w) {
					t.Errorf("%s %s: the section lacks %q", method, path, w)
				}
			}
		}
	}
	if ops < 25 {
		t.Fatalf("the document has %d operations; expected every v2 path", ops)
	}
	errors := sectionOf(page, "errors")
	for _, code := range doc.Components.Schemas.ErrorCode.Enum {
		if !strings.Contains(errors, "<code>"+code+"</code>") {
			t.Errorf("the error table lacks %s", code)
		}
	}
	// The send section names its reply fields and their constraints.
	send := sectionOf(page, "post-send")
	for _, w := range []string{"<code>data.payout_id</code>", "<code>idempotency_key</code> <span class=\"required\">required</span>", "length ≤ 255"} {
		if !strings.Contains(send, w) {
			t.Errorf("the send section lacks %q", w)
		}
	}

	external := regexp.MustCompile(`(?i)(?:src|href|action|srcset|poster|data)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:|//)|url\(|@import`)
	if m := external.FindAllString(page, -1); len(m) > 0 {
		t.Errorf("the page refers to other resources: %q", m)
	}
	if n := strings.Count(page, "href="); n < ops {
		t.Errorf("%d links; want at least one per operation (%d) in the contents", n, ops)
	}
}

// sectionOf is the HTML of the <section> with the given id, or "".
func sectionOf(page, id string) string {
	i := strings.Index(page, `<section class="op" id="`+id+`"`)
	if i < 0 {
		i = strings.Index(page, `<section id="`+id+`"`)
	}
	if i < 0 {
		return ""
	}
	end := strings.Index(page[i:], "</section>")
	return page[i : i+end]
}
