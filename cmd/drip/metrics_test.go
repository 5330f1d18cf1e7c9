package main

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestServeMetricsListen: /metrics is on the main listener by default;
// with --metrics-listen it is on that address only, and counts what the
// main listener served.
func TestServeMetricsListen(t *testing.T) {
	t.Parallel()
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	t.Run("main listener", func(t *testing.T) {
		t.Parallel()
		s := startDemo(t, "--data-dir", t.TempDir())
		if status, body := get(s.base + "/metrics"); status != http.StatusOK || !strings.Contains(body, "go_goroutines") {
			t.Errorf("GET /metrics on --listen: %d\n%.300s", status, body)
		}
		s.stop(t)
	})

	t.Run("own listener", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		s := startDemo(t, "--data-dir", t.TempDir(), "--metrics-listen", addr)
		if status, body := get(s.base + "/metrics"); status != http.StatusNotFound {
			t.Errorf("GET /metrics on --listen with --metrics-listen: %d, want 404\n%.300s", status, body)
		}
		if status, _ := post(t, s.base+"/api/v1/send", url.Values{"api_key": {s.key}, "to": {"bob"}, "amount": {"1000"}, "currency": {"BTC"}}); status != 200 {
			t.Fatalf("demo send: status %d", status)
		}
		status, body := get("http://" + addr + "/metrics")
		for _, want := range []string{
			`drip_payouts_total{coin="BTC"} 1`,
			`drip_http_requests_total{interface="v1",path="/api/v1/send",status="200"} 1`,
			`drip_http_requests_total{interface="other",path="other",status="404"} 1`, // the /metrics asked on --listen
			"go_goroutines", "process_resident_memory_bytes",
		} {
			if status != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("GET /metrics on --metrics-listen: %d, lacks %q\n%.2000s", status, want, body)
			}
		}
		s.stop(t)
	})
}
