package app_test

import (
	"strings"
	"testing"

	"github.com/dripfaucet/drip/internal/apptest"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

// The console's pages are counted under their own interface: the fixed
// pages by path, the pages under a section (with ids in their paths) as
// the section's "other", so no id becomes a series.
func TestConsoleMetricsLabels(t *testing.T) {
	t.Parallel()
	env := apptest.New(t, storetest.OpenSQLite(t), apptest.Options{Console: true})
	b := env.Browser(t)
	b.Get(t, "/login")
	b.Get(t, "/manage/12345/keys")
	b.Get(t, "/")
	metrics := b.Get(t, "/metrics").Body
	for _, want := range []string{
		`drip_http_requests_total{interface="console",path="/login",status="200"} 1`,
		`drip_http_requests_total{interface="console",path="other",status="303"} 1`,
		`drip_http_requests_total{interface="console",path="/",status="303"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(metrics, "12345") {
		t.Error("an id of a path became a label")
	}
}
