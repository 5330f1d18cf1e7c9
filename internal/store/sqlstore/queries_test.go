package sqlstore

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestStatementsAreSingle: every statement, as each engine loads it, is
// one statement with nothing after it. A comment left after a statement's
// ";" made SQLite's driver parse the batch's debit and events insert again
// on every batch, as a script, instead of running them prepared.
func TestStatementsAreSingle(t *testing.T) {
	for _, file := range []string{"../sqlite/queries.sql", "../postgres/queries.sql"} {
		v := engineQueries(t, file)
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

// engineQueries is the queries struct as the engine whose overrides are
// in file loads it.
func engineQueries(t *testing.T, file string) reflect.Value {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	q, err := loadQueries(string(src), func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	return reflect.ValueOf(q).Elem()
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

// TestOptionalStatementsByEngine: both engines' queries.sql define every
// set form of the batch's per-row locks and debits (a name misspelt on
// either side would leave its batches one statement a row, silently).
// Only SQLite's defines the fan-out of events (D69): there its statements
// make the deliveries, on PostgreSQL a trigger does; and the statements
// of the payouts by recipient in two levels, which only SQLite keeps
// (D71). Only PostgreSQL's defines the horizon of the statistics' fold
// (D73): there payout ids commit out of order.
func TestOptionalStatementsByEngine(t *testing.T) {
	setForms := map[string]bool{"FaucetsLockRows": true, "BalancesLockRows": true, "BalancesDebitRows": true}
	postgresOnly := map[string]bool{"StatsHorizonNext": true, "StatsHorizonSet": true}
	for file, isSQLite := range map[string]bool{"../sqlite/queries.sql": true, "../postgres/queries.sql": false} {
		v := engineQueries(t, file)
		optional := 0
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).Tag.Get("sql") != "optional" {
				continue
			}
			optional++
			s := v.Field(i).Interface().(stmt)
			want := setForms[s.name] || isSQLite
			if postgresOnly[s.name] {
				want = !isSQLite
			}
			if (s.sql != "") != want {
				t.Errorf("%s: %s defined = %v, want %v", file, s.name, s.sql != "", want)
			}
		}
		if optional != 13 {
			t.Errorf("%d optional statements, want the 3 set forms, the fan-out, the 7 of the copies (D71, D72) and the 2 of the statistics' horizon (D73)", optional)
		}
	}
}

// TestEventWritersFanOut: where events fan out by statement (D69), the
// statements that write events are those whose callers run the fan-out
// (EventInsert, EventsInsertRows), and EventProbe, whose transaction
// always rolls back. A new statement writing events would otherwise
// commit them without their webhook deliveries (D50).
func TestEventWritersFanOut(t *testing.T) {
	mayWrite := map[string]bool{"EventInsert": true, "EventsInsertRows": true, "EventProbe": true}
	writes := regexp.MustCompile(`(?i)\b(INSERT|REPLACE)\b[^;]*?\bINTO\s+events\b`)
	v := engineQueries(t, "../sqlite/queries.sql")
	if v.FieldByName("EventsFanoutRows").Interface().(stmt).sql == "" {
		t.Fatal("SQLite defines no EventsFanoutRows")
	}
	found := 0
	for i := 0; i < v.NumField(); i++ {
		s, ok := v.Field(i).Interface().(stmt)
		if !ok || !writes.MatchString(s.sql) {
			continue
		}
		found++
		if !mayWrite[s.name] {
			t.Errorf("%s writes events, and nothing fans them out", s.name)
		}
	}
	if found != len(mayWrite) {
		t.Errorf("%d statements write events, want %d", found, len(mayWrite))
	}
}
