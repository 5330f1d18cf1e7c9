// Package docs holds drip's design documents; this test keeps them whole.
// Code, tests and documents cite design decisions by number and the
// interface specification by section; decisions.md must define every one
// of them, so that a clone of the repository is enough to look them up.
package docs

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the repository, seen from this package's directory.
const root = ".."

var (
	// decisionRE finds a decision citation: a capital D and one to three
	// digits as a word of its own, so hex (0xD1), identifiers (DCaro1) and
	// longer numbers do not count. A range (D20-D27) cites every number in
	// it.
	decisionRE = regexp.MustCompile(`\bD(\d{1,3})(?:[-–]D(\d{1,3}))?\b`)
	// specRE finds a citation of the specification: "spec 4.2", "spec
	// section 7.1", "Spec 5", and lists or ranges after one "spec" ("spec
	// 2.1-2.6, 4.1, 5"). Sections are one digit, optionally with one
	// sub-digit, so "spec 4.2, 200" stops at 4.2.
	specRE     = regexp.MustCompile(`(?i)\bspec(?:ification)?\s+(?:section\s+)?(\d(?:\.\d)?)\b((?:\s*(?:,|-|–|and)\s*\d(?:\.\d)?\b)*)`)
	specItemRE = regexp.MustCompile(`(\d(?:\.\d)?)\b(?:\s*[-–]\s*(\d(?:\.\d)?)\b)?`)

	// Headings in decisions.md that define what can be cited.
	decisionHeadingRE = regexp.MustCompile(`(?m)^## D(\d+) \S`)
	specHeadingRE     = regexp.MustCompile(`(?m)^### spec (\d(?:\.\d)?) \S`)
)

// citation is one cited decision or section and where it was cited.
type citation struct {
	id    string // "D21" or "spec 4.2"
	where string // path:line
}

// scanned reports whether the file at rel (slash-separated, relative to
// the repository) is read for citations: source, SQL, documents, JSON
// (the OpenAPI document) and the scripts of scripts/ and .ci/.
func scanned(rel string) bool {
	if strings.HasPrefix(rel, "scripts/") || strings.HasPrefix(rel, ".ci/") {
		return true
	}
	switch filepath.Ext(rel) {
	case ".go", ".md", ".sql", ".json", ".sh", ".yaml", ".yml", ".html", ".txt":
		return true
	}
	return false
}

// skippedDir reports whether a directory is left out: git's own files,
// test data (fuzz corpora and golden pages, whose text is arbitrary),
// local data directories and tools' caches.
func skippedDir(name string) bool {
	switch name {
	case ".git", "testdata", "node_modules", "drip-data", "vendor":
		return true
	case ".ci":
		return false
	}
	return strings.HasPrefix(name, ".") && name != "."
}

// citations returns the decision and spec citations in text, found in the
// file named where.
func citations(where, text string) []citation {
	var out []citation
	line := func(offset int) string {
		return where + ":" + strconv.Itoa(1+strings.Count(text[:offset], "\n"))
	}
	for _, m := range decisionRE.FindAllStringSubmatchIndex(text, -1) {
		lo, _ := strconv.Atoi(text[m[2]:m[3]])
		hi := lo
		if m[4] >= 0 {
			hi, _ = strconv.Atoi(text[m[4]:m[5]])
		}
		if hi < lo || hi-lo > 20 { // not a range: cite the two ends
			out = append(out, citation{"D" + strconv.Itoa(lo), line(m[0])}, citation{"D" + strconv.Itoa(hi), line(m[0])})
			continue
		}
		for n := lo; n <= hi; n++ {
			out = append(out, citation{"D" + strconv.Itoa(n), line(m[0])})
		}
	}
	for _, m := range specRE.FindAllStringSubmatchIndex(text, -1) {
		before := strings.ToLower(text[max(0, m[0]-12):m[0]])
		if strings.Contains(before, "openapi") || strings.Contains(before, "mcp") {
			continue // another specification's sections
		}
		for _, item := range specItemRE.FindAllStringSubmatch(text[m[2]:m[1]], -1) {
			for _, s := range specRange(item[1], item[2]) {
				out = append(out, citation{"spec " + s, line(m[0])})
			}
		}
	}
	return out
}

// specRange expands "2.1"-"2.6" into each section; a section alone, or a
// range across top-level sections, is its ends.
func specRange(from, to string) []string {
	if to == "" {
		return []string{from}
	}
	fa, fb, okF := strings.Cut(from, ".")
	ta, tb, okT := strings.Cut(to, ".")
	if !okF || !okT || fa != ta || fb >= tb {
		return []string{from, to}
	}
	var out []string
	for c := fb[0]; c <= tb[0]; c++ {
		out = append(out, fa+"."+string(c))
	}
	return out
}

// defined returns the decisions and spec sections decisions.md defines,
// failing the test on a heading defined twice.
func defined(t *testing.T) map[string]bool {
	t.Helper()
	body, err := os.ReadFile("decisions.md")
	if err != nil {
		t.Fatalf("read decisions.md: %v", err)
	}
	def := map[string]bool{}
	add := func(id string) {
		if def[id] {
			t.Errorf("decisions.md defines %s twice", id)
		}
		def[id] = true
	}
	for _, m := range decisionHeadingRE.FindAllStringSubmatch(string(body), -1) {
		n, _ := strconv.Atoi(m[1])
		add("D" + strconv.Itoa(n))
	}
	for _, m := range specHeadingRE.FindAllStringSubmatch(string(body), -1) {
		add("spec " + m[1])
	}
	return def
}

// repositoryCitations walks the repository and returns every citation in
// the files it reads.
func repositoryCitations(t *testing.T) []citation {
	t.Helper()
	var out []citation
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skippedDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !scanned(rel) {
			return nil
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(body, 0) >= 0 {
			return nil // binary
		}
		files++
		out = append(out, citations(rel, string(body))...)
		return nil
	})
	if err != nil {
		t.Fatalf("walk the repository: %v", err)
	}
	// The walk must have reached the code, or the check below proves nothing.
	if files < 50 {
		t.Fatalf("read %d files from %s; want the whole repository", files, root)
	}
	return out
}

// TestEveryCitationIsDefined fails when code, tests or documents cite a
// decision (D21) or a spec section (spec 4.2) that decisions.md does not
// define with a heading of its own.
func TestEveryCitationIsDefined(t *testing.T) {
	def := defined(t)
	missing := map[string][]string{}
	for _, c := range repositoryCitations(t) {
		if !def[c.id] {
			missing[c.id] = append(missing[c.id], c.where)
		}
	}
	ids := make([]string, 0, len(missing))
	for id := range missing {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		where := missing[id]
		more := ""
		if len(where) > 5 {
			more = fmt.Sprintf(" and %d more", len(where)-5)
			where = where[:5]
		}
		heading := "## " + id + " <title>"
		if strings.HasPrefix(id, "spec ") {
			heading = "### " + id + " <title>"
		}
		t.Errorf("%s is cited but docs/decisions.md does not define it (add %q): %s%s",
			id, heading, strings.Join(where, ", "), more)
	}
}

// TestCitationsFound keeps the scanner honest: it must find what a
// citation looks like and ignore what only resembles one. The cited text
// is assembled, so that this file itself cites nothing.
func TestCitationsFound(t *testing.T) {
	d := func(n string) string { return "D" + n }
	text := strings.Join([]string{
		"order of " + d("21") + ", see " + d("1") + "-" + d("3") + " and " + d("40") + "/" + d("24") + ".",
		"spec 2.1-2.3, 4.1, 5 and Spec section 7.1; (spec 8, " + d("26") + "); spec 7.1, 200 OK",
		"not citations: 0x" + d("1") + ", " + d("Caro1") + ", " + d("1234") + ", d21, OpenAPI spec 3.1",
	}, "\n")
	var got []string
	for _, c := range citations("f", text) {
		got = append(got, c.id+"@"+c.where)
	}
	want := []string{
		d("21") + "@f:1", d("1") + "@f:1", d("2") + "@f:1", d("3") + "@f:1", d("40") + "@f:1", d("24") + "@f:1",
		d("26") + "@f:2",
		"spec 2.1@f:2", "spec 2.2@f:2", "spec 2.3@f:2", "spec 4.1@f:2", "spec 5@f:2",
		"spec 7.1@f:2", "spec 8@f:2", "spec 7.1@f:2",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("citations:\n got %v\nwant %v", got, want)
	}
}
