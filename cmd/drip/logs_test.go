package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// suiteLogs gathers the log of every drip serve the suite starts with
// startDemo and every secret the suite saw (keys printed by serve --demo
// and drip admin); TestMain fails the suite if any log holds any secret.
var suiteLogs struct {
	mu      sync.Mutex
	logs    []*bytes.Buffer
	secrets map[string]string // secret -> what it is
}

func noteLog(b *bytes.Buffer) {
	suiteLogs.mu.Lock()
	defer suiteLogs.mu.Unlock()
	suiteLogs.logs = append(suiteLogs.logs, b)
}

func noteSecret(what, secret string) {
	if secret == "" {
		return
	}
	suiteLogs.mu.Lock()
	defer suiteLogs.mu.Unlock()
	if suiteLogs.secrets == nil {
		suiteLogs.secrets = map[string]string{}
	}
	suiteLogs.secrets[secret] = what
}

// checkSuiteLogs runs once every test has ended and its processes with it.
func checkSuiteLogs() error {
	suiteLogs.mu.Lock()
	defer suiteLogs.mu.Unlock()
	var leaks []string
	for _, b := range suiteLogs.logs {
		for _, line := range strings.Split(b.String(), "\n") {
			for secret, what := range suiteLogs.secrets {
				if i := secretIn(line, secret); i != "" {
					leaks = append(leaks, fmt.Sprintf("%s (%s) in: %s", what, i, line))
				}
			}
		}
	}
	if len(leaks) > 0 {
		sort.Strings(leaks)
		return fmt.Errorf("secrets in the logs of the suite's drip serve processes (%d secrets, %d logs checked):\n%s",
			len(suiteLogs.secrets), len(suiteLogs.logs), strings.Join(leaks, "\n"))
	}
	return nil
}

// secretIn tells whether line holds secret, or the part of it that is
// not its loggable prefix (a v2 key's "drip_<8>_", a v1 key's first 6
// characters): "" if neither.
func secretIn(line, secret string) string {
	if strings.Contains(line, secret) {
		return "whole"
	}
	tail := secret[min(6, len(secret)):]
	if strings.HasPrefix(secret, "drip_") && len(secret) > 14 {
		tail = secret[14:]
	}
	if len(tail) >= 16 && strings.Contains(line, tail) {
		return "its secret part"
	}
	return ""
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestLogsNeverHoldSecrets runs drip serve --demo at debug level and uses
// it as faucets do, with every kind of secret: v1 keys (the demo's, an
// admin-made faucet's, a rotation's pending key, a guessed one, in forms
// and JSON), v2 keys (good, admin-scoped, guessed), a user's password,
// and a marker in request bodies that are refused. No log line may hold
// any of them. It also checks the access log lines as an operator reads
// them, the request id, and the version the replies carry.
func TestLogsNeverHoldSecrets(t *testing.T) {
	t.Parallel()
	db := []string{"--data-dir", t.TempDir()}
	s := startDemo(t, append(db, "--log-level", "debug", "--log-format", "json")...)
	base := s.base
	password := "pw-" + randomHex(24)
	runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com", "--verified", "--password", password)
	created := runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", "Ann", "--domain", "ann.example.com", "--url", "https://ann.example.com/")
	faucetKey := created["api_key"].(string)
	id := strconv.Itoa(int(created["id"].(float64)))
	runAdmin(t, db, "deposit", "--faucet", id, "--coin", "BTC", "--amount", "100000")
	pending := runAdmin(t, db, "faucet", "rotate-key", "--faucet", id)["pending_api_key"].(string)
	v2Key := runAdmin(t, db, "key", "mint", "--faucet", "1", "--scopes", "read,send,manage")["key"].(string)
	adminKey := runAdmin(t, db, "key", "mint", "--faucet", "1", "--scopes", "admin")["key"].(string)
	guessV1, guessV2, marker := randomHex(48), "drip_zzzzzzzz_"+randomHex(32), "marker-"+randomHex(32)
	secrets := map[string]string{"the demo v1 key": s.key, "a faucet's v1 key": faucetKey, "a pending v1 key": pending,
		"a v2 key": v2Key, "an admin v2 key": adminKey, "a guessed v1 key": guessV1, "a guessed v2 key": guessV2,
		"a password": password, "a body's marker": marker}

	client := &http.Client{Timeout: 30 * time.Second}
	requests := 0
	do := func(method, path, contentType, body string, header ...string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		requests++
		return resp, string(raw)
	}
	form := "application/x-www-form-urlencoded"
	v1 := func(path string, v url.Values, header ...string) (*http.Response, string) {
		return do(http.MethodPost, "/api/v1"+path, form, v.Encode(), header...)
	}
	v2 := func(method, path, key, body string) (*http.Response, string) {
		return do(method, "/api/v2"+path, "application/json", body, "Authorization", "Bearer "+key)
	}

	// v1, as the README's walk-through and faucet scripts use it.
	for _, step := range readmeWalkthrough(t, base, s.key) {
		v1(strings.TrimPrefix(step.path, base+"/api/v1"), step.form)
	}
	for _, key := range []string{faucetKey, pending, guessV1} {
		v1("/getbalance", url.Values{"api_key": {key}, "currency": {"BTC"}})
	}
	v1("/send", url.Values{"api_key": {s.key}, "to": {marker}, "amount": {"1000"}, "currency": {"BTC"}})
	do(http.MethodPost, "/api/v1/send", "application/json", `{"api_key":"`+s.key+`","to":"bob","amount":"1x`+marker+`","currency":"BTC"}`)
	do(http.MethodPost, "/api/v1/send?api_key="+s.key, form, "api_key="+s.key+"&api_key="+guessV1+"&to=bob&amount=10&currency=BTC")
	resp, _ := v1("/send", url.Values{"api_key": {s.key}, "to": {"bob"}, "amount": {"99000000000"}, "currency": {"BTC"}}, "X-Request-Id", "trace-42")
	if got := resp.Header.Get("X-Request-Id"); got != "trace-42" {
		t.Errorf("X-Request-Id echoed %q, want trace-42", got)
	}

	// v2: reads, an idempotent send and its retry, a reused key, refusals.
	send := `{"idempotency_key":"order-1","to":"bob","amount":1000,"currency":"BTC"}`
	for _, c := range []struct {
		method, path, key, body string
		status                  int
	}{
		{http.MethodGet, "/balances", v2Key, "", 200},
		{http.MethodPost, "/send", v2Key, send, 200},
		{http.MethodPost, "/send", v2Key, send, 200},
		{http.MethodPost, "/send", v2Key, strings.Replace(send, "1000", "2000", 1), 409},
		{http.MethodPost, "/send", v2Key, `{"idempotency_key":"` + marker + `","to":"` + marker + `","amount":1,"currency":"BTC"}`, 400},
		{http.MethodPost, "/send", v2Key, `{"to":"bob","` + marker + `":1}`, 400},
		{http.MethodPost, "/faucet/update", v2Key, `{"faucet_name":` + marker, 400},
		{http.MethodGet, "/balances", guessV2, "", 401},
		{http.MethodGet, "/balances", guessV1, "", 401},
		{http.MethodPost, "/faucet/create", adminKey, `{"faucet_name":"Two","faucet_domain":"two.example.com","faucet_url":"https://two.example.com/"}`, 200},
	} {
		resp, body := v2(c.method, c.path, c.key, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("v2 %s %s: %d %s, want %d", c.method, c.path, resp.StatusCode, body, c.status)
		}
	}

	// The tool server, with a key and with a guessed one.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	mcpHeaders := func(key string) []string {
		return []string{"Authorization", "Bearer " + key, "Accept", "application/json, text/event-stream"}
	}
	_, mcpBody := do(http.MethodPost, "/mcp", "application/json", initialize, mcpHeaders(v2Key)...)
	do(http.MethodPost, "/mcp", "application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_balance","arguments":{"currency":"`+marker+`"}}}`, mcpHeaders(v2Key)...)
	do(http.MethodPost, "/mcp", "application/json", initialize, mcpHeaders(guessV2)...)
	healthz, _ := do(http.MethodGet, "/healthz", "", "")

	// One version everywhere: drip version, v2's header, the tool server.
	out, err := exec.Command(dripBin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "drip ")
	resp, _ = v2(http.MethodGet, "/balances", guessV2, "")
	var init struct {
		Result struct {
			ServerInfo struct{ Version string } `json:"serverInfo"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(mcpBody), &init)
	if version == "" || resp.Header.Get("Drip-Version") != version || init.Result.ServerInfo.Version != version {
		t.Errorf("drip version %q, v2 Drip-Version %q, tool server %q: want one version", version, resp.Header.Get("Drip-Version"), init.Result.ServerInfo.Version)
	}
	s.stop(t)

	var access []map[string]any
	lines := strings.Split(strings.TrimSpace(s.stderr.String()), "\n")
	for _, line := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("not a JSON log line: %q", line)
			continue
		}
		if m["msg"] == "request" {
			access = append(access, m)
		}
		for what, secret := range secrets {
			if i := secretIn(line, secret); i != "" {
				t.Errorf("%s (%s) is in the log: %s", what, i, line)
			}
		}
		if strings.Contains(line, "Bearer") {
			t.Errorf("an Authorization header is in the log: %s", line)
		}
	}
	if len(access) != requests {
		t.Errorf("%d access lines for %d requests", len(access), requests)
	}
	byID := map[string]map[string]any{}
	for _, a := range access {
		byID[fmt.Sprint(a["request_id"])] = a
	}
	got := byID["trace-42"]
	ms, _ := got["duration_ms"].(float64)
	delete(got, "time")
	delete(got, "duration_ms")
	want := map[string]any{"level": "INFO", "msg": "request", "method": "POST", "path": "/api/v1/send", "status": 200.0, "v1_status": 402.0,
		"client_ip": "127.0.0.1", "key_prefix": s.key[:6], "request_id": "trace-42"}
	if fmt.Sprint(got) != fmt.Sprint(want) || ms <= 0 {
		t.Errorf("access line of the 402 send:\n got %v (duration_ms %v)\nwant %v", got, ms, want)
	}
	probe := byID[healthz.Header.Get("X-Request-Id")]
	if probe == nil || probe["level"] != "DEBUG" {
		t.Errorf("the /healthz access line %v, want one at DEBUG", probe)
	}
	prefixes := map[any]bool{}
	for _, a := range access {
		prefixes[a["key_prefix"]] = true
	}
	for _, p := range []string{v2Key[:13], adminKey[:13], faucetKey[:6], pending[:6], guessV1[:6], "drip_zzzzzzzz"} {
		if !prefixes[p] {
			t.Errorf("no access line with key_prefix %s: %v", p, prefixes)
		}
	}
}

// TestServeLogFormatText: --log-format text writes key=value lines, the
// access log among them; an unknown format is refused.
func TestServeLogFormatText(t *testing.T) {
	t.Parallel()
	s := startDemo(t, "--data-dir", t.TempDir(), "--log-format", "text")
	balanceStatus(t, s.base, s.key)
	s.stop(t)
	log := s.stderr.String()
	if !strings.Contains(log, `msg="drip serving"`) || !strings.Contains(log, "msg=request method=POST path=/api/v1/getbalance status=200") {
		t.Errorf("text log lacks the serving and access lines:\n%s", log)
	}
	code, _, stderr := runDrip(t, t.TempDir(), nil, "serve", "--listen", "127.0.0.1:0", "--log-format", "xml")
	if code != 2 || !strings.Contains(stderr, "--log-format must be json or text") {
		t.Errorf("--log-format xml: exit %d %q, want 2", code, stderr)
	}
}
