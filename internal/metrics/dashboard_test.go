package metrics_test

import (
	"encoding/json"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// dashboardFile is the Grafana dashboard shipped with drip.
const dashboardFile = "../../deploy/grafana/drip.json"

// metricName is a metric a PromQL expression reads: drip's, Go's and the
// process's all start so.
var metricName = regexp.MustCompile(`\b(?:drip|go|process)_[a-zA-Z0-9_]+`)

// TestDashboardQueriesExist: the dashboard is valid JSON, each panel has a
// query, and every metric its queries read is in /metrics of a running app
// (after a payout and a refusal, so that every family has a sample).
func TestDashboardQueriesExist(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}

	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{})
	_, key := env.Faucet(t, map[string]int64{"BTC": 10_000})
	env.User(t, "bob")
	env.Post(t, "/send", url.Values{"api_key": {key}, "to": {"bob"}, "amount": {"1000"}, "currency": {"BTC"}})
	env.Post(t, "/send", url.Values{"api_key": {key}, "to": {"nobody"}, "amount": {"1000"}, "currency": {"BTC"}})
	exposed := map[string]bool{}
	for sample := range scrape(t, env) {
		exposed[strings.SplitN(sample, "{", 2)[0]] = true
	}

	families := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			names := metricName.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q reads no metric", p.Title, target.Expr)
			}
			for _, name := range names {
				families[name] = true
				if !exposed[name] {
					t.Errorf("panel %q reads %s, which /metrics does not have", p.Title, name)
				}
			}
		}
	}
	// Each of drip's families has a panel.
	for name := range exposed {
		if !strings.HasPrefix(name, "drip_") {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !slices.ContainsFunc(slices.Collect(maps.Keys(families)), func(f string) bool { return strings.HasPrefix(f, base) }) {
			t.Errorf("no panel shows %s", name)
		}
	}
}
