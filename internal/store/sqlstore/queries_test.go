package sqlstore

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestStatementsAreSingle: every statement, as each engine loads it, is
// one statement with nothing after it. A comment left after a statement's
// ";" made SQLite's driver parse the batch's debit and events insert again
// on every batch, as a script, instead of running them prepared.
func TestStatementsAreSingle(t *testing.T) {
	for _, file := range []string{"../sqlite/queries.sql", "../postgres/queries.sql"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		q, err := loadQueries(string(src), func(s string) string { return s })
		if err != nil {
			t.Fatal(err)
		}
		v := reflect.ValueOf(q).Elem()
		for i := 0; i < v.NumField(); i++ {
			s := v.Field(i).Interface().(stmt)
			var code []string
			for _, line := range strings.Split(s.sql, "\n") {
				if !strings.HasPrefix(strings.TrimSpace(line), "--") {
					code = append(code, line)
				}
			}
			if strings.Contains(strings.Join(code, "\n"), ";") {
				t.Errorf("%s, %s: more than one statement, or text after the statement:\n%s", file, s.name, s.sql)
			}
		}
	}
}

func TestStatementBody(t *testing.T) {
	for in, want := range map[string]string{
		"\nSELECT 1;\n":                                "SELECT 1",
		"\nSELECT 1;\n\n-- The next group.\n":          "SELECT 1",
		"\n-- Why.\nSELECT 1;\n\n-- Next.\n-- More.\n": "-- Why.\nSELECT 1",
		"\nSELECT 1":                                   "SELECT 1",
	} {
		if got := statementBody(in); got != want {
			t.Errorf("statementBody(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRowsJSON: the JSON of an engine without arrays is what
// encoding/json makes of the same rows, strings escaped.
func TestRowsJSON(t *testing.T) {
	cols := []column{ints("id", []int64{1, -9007199254740993}), texts("to_given", []string{`a"b\c`, "ü\n\u2028<>&"})}
	got, err := rowsJSON(cols, 2)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID      int64  `json:"id"`
		ToGiven string `json:"to_given"`
	}
	want, _ := json.Marshal([]row{{1, `a"b\c`}, {-9007199254740993, "ü\n\u2028<>&"}})
	if string(got) != string(want) {
		t.Errorf("rowsJSON = %s\nwant %s", got, want)
	}
}

// appendJSONString writes every string as encoding/json does: each ASCII
// byte alone and amid others, and strings past ASCII (valid or not).
func TestAppendJSONString(t *testing.T) {
	values := []string{"", `{"payout_id":1,"amount":"0.00000001"}`, "ü", "a\xffb", "\u2028", "x\u00e9\ty"}
	for c := range 128 {
		values = append(values, string(rune(c)), "a"+string(rune(c))+"b")
	}
	for _, v := range values {
		got, err := appendJSONString([]byte("prefix"), v)
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		want, _ := json.Marshal(v)
		if string(got) != "prefix"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", v, got[len("prefix"):], want)
		}
	}
}
