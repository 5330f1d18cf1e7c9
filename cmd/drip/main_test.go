package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dripfaucet/drip/internal/store/storetest"
)

// dripBin is the drip binary built once for the end-to-end tests.
var dripBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drip-e2e-")
	if err != nil {
		panic(err)
	}
	dripBin = filepath.Join(dir, "drip")
	args := []string{"build", "-o", dripBin}
	if raceBuild {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	if err := checkSuiteLogs(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running drip serve process.
type server struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port
	key    string // the demo faucet's v1 key
	banner string // what --demo printed, up to its curl line
	stderr *bytes.Buffer
	done   chan error
}

var (
	keyLine  = regexp.MustCompile(`v1 api_key:\s+([0-9a-f]{40,})`)
	curlLine = regexp.MustCompile(`curl -s (http://[^/\s]+)/api/v1/send`)
)

// startDemo runs drip serve --demo on a free port with the given flags
// (database and others) and waits until it has printed its key and curl line.
func startDemo(t *testing.T, flags ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--demo", "--listen", "127.0.0.1:0"}, flags...)
	cmd := exec.Command(dripBin, args...)
	cmd.Env = append(os.Environ(), "DRIP_LOG_LEVEL=info")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = s.stderr
	noteLog(s.stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-s.done
		}
	})
	found := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			if s.base == "" {
				s.banner += line + "\n"
			}
			if m := keyLine.FindStringSubmatch(line); m != nil {
				s.key = m[1]
			}
			if m := curlLine.FindStringSubmatch(line); m != nil && s.base == "" {
				s.base = m[1]
				close(found)
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() { s.done <- cmd.Wait() }()
	select {
	case <-found:
	case err := <-s.done:
		t.Fatalf("drip serve exited early: %v\n%s", err, s.stderr)
	case <-time.After(60 * time.Second):
		t.Fatalf("drip serve printed no curl line\n%s", s.stderr)
	}
	if s.key == "" {
		t.Fatal("drip serve --demo printed no key")
	}
	noteSecret("a demo v1 key", s.key)
	return s
}

// stop sends SIGTERM and expects a clean exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatalf("drip serve exited with %v after SIGTERM\n%s", err, s.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("drip serve did not stop within 30s of SIGTERM")
	}
	if !strings.Contains(s.stderr.String(), "drip stopped") {
		t.Errorf("no clean-stop log line:\n%s", s.stderr)
	}
}

// post sends a v1 form POST and returns the body's status and members.
func post(t *testing.T, endpoint string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(endpoint, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d", endpoint, resp.StatusCode)
	}
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("POST %s: %v", endpoint, err)
	}
	status, _ := body["status"].(float64)
	return int(status), body
}

// walkthrough is one curl line of the README and the status it promises.
type walkthrough struct {
	line   string
	path   string
	form   url.Values
	status int
}

// readmeWalkthrough parses the curl lines of the README's v1 walk-through.
func readmeWalkthrough(t *testing.T, base, key string) []walkthrough {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^curl -s http://127\.0\.0\.1:8080(/api/v1/\w+)((?: -d [^ ]+)+)\s+# status (\d+)\s*$`)
	var steps []walkthrough
	for _, m := range re.FindAllStringSubmatch(string(readme), -1) {
		form := url.Values{}
		for _, arg := range strings.Fields(strings.ReplaceAll(m[2], "-d ", "")) {
			k, v, _ := strings.Cut(arg, "=")
			form.Add(k, strings.ReplaceAll(v, "$KEY", key))
		}
		status, _ := strconv.Atoi(m[3])
		steps = append(steps, walkthrough{line: m[0], path: base + m[1], form: form, status: status})
	}
	if len(steps) < 8 {
		t.Fatalf("README walk-through has %d curl lines; the pattern no longer matches it", len(steps))
	}
	return steps
}

// runAdmin runs a drip admin command with --json and decodes its output.
func runAdmin(t *testing.T, dbArgs []string, args ...string) map[string]any {
	t.Helper()
	out, err := exec.Command(dripBin, append(append([]string{"admin"}, args...), append(dbArgs, "--json")...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("drip admin %v: %v\n%s", args, err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("drip admin %v: output is not a JSON object: %v\n%s", args, err, out)
	}
	for _, k := range []string{"key", "api_key", "pending_api_key"} { // what admin prints once
		if secret, ok := v[k].(string); ok {
			noteSecret("drip admin "+strings.Join(args[:min(2, len(args))], " ")+" "+k, secret)
		}
	}
	return v
}

// TestServeDemoWalkthrough builds drip, runs serve --demo on a free port,
// performs the README's curl walk-through, operates the running service
// with admin commands, reconciles, and stops it with SIGTERM.
func TestServeDemoWalkthrough(t *testing.T) {
	t.Parallel()
	engines := map[string]func(t *testing.T) []string{
		"sqlite": func(t *testing.T) []string { return []string{"--data-dir", t.TempDir()} },
	}
	if os.Getenv(storetest.PostgresEnv) != "" {
		engines["postgres"] = func(t *testing.T) []string {
			_, u := storetest.OpenPostgresURL(t)
			return []string{"--database-url", u, "--data-dir", t.TempDir()} // where the demo key is kept
		}
	} else {
		t.Logf("%s not set: the walk-through runs on SQLite only", storetest.PostgresEnv)
	}
	for name, dbArgs := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := dbArgs(t)
			s := startDemo(t, db...)
			for _, step := range readmeWalkthrough(t, s.base, s.key) {
				if got, body := post(t, step.path, step.form); got != step.status {
					t.Errorf("%s\n  status %d, README promises %d: %v", step.line, got, step.status, body)
				}
			}

			// Operator commands work against the running service's database.
			owner := runAdmin(t, db, "user", "create", "--username", "ann", "--email", "Ann@Example.com", "--verified")
			if owner["email"] != "ann@example.com" || len(owner["payout_user_hash"].(string)) != 40 {
				t.Errorf("user create: %v", owner)
			}
			created := runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", "Ann", "--domain", "ann.example.com", "--url", "https://ann.example.com/")
			id := strconv.Itoa(int(created["id"].(float64)))
			oldKey := created["api_key"].(string)
			dep := runAdmin(t, db, "deposit", "--faucet", id, "--coin", "LTC", "--amount", "7000")
			if dep["balance"].(float64) != 7000 {
				t.Errorf("deposit: %v", dep)
			}
			send := url.Values{"api_key": {oldKey}, "to": {"bob"}, "amount": {"100"}, "currency": {"LTC"}}
			if got, body := post(t, s.base+"/api/v1/send", send); got != 200 || body["balance"].(float64) != 6900 {
				t.Fatalf("send with the admin-created faucet: %d %v", got, body)
			}

			// D13: the rotated key works beside the old one until confirmed.
			newKey := runAdmin(t, db, "faucet", "rotate-key", "--faucet", id)["pending_api_key"].(string)
			balance := func(key string) int {
				got, _ := post(t, s.base+"/api/v1/getbalance", url.Values{"api_key": {key}, "currency": {"LTC"}})
				return got
			}
			if balance(oldKey) != 200 || balance(newKey) != 200 {
				t.Errorf("before confirmation both keys must work: old %d new %d", balance(oldKey), balance(newKey))
			}
			runAdmin(t, db, "faucet", "confirm-rotation", "--faucet", id)
			if balance(oldKey) != 403 || balance(newKey) != 200 {
				t.Errorf("after confirmation: old %d (want 403) new %d (want 200)", balance(oldKey), balance(newKey))
			}

			if rec := runAdmin(t, db, "reconcile"); rec["ok"] != true {
				t.Errorf("reconcile while serving: %v", rec)
			}
			s.stop(t)

			// A second --demo start prints the same key, kept in the data
			// directory readable by its owner only (issue 14 item 5).
			again := startDemo(t, db...)
			if again.key != s.key || !strings.Contains(again.banner, "the same key as the last start") {
				t.Errorf("second --demo start printed key %s, want the first one %s:\n%s", again.key, s.key, again.banner)
			}
			if got := balanceStatus(t, again.base, s.key); got != 200 {
				t.Errorf("the kept demo key: status %d, want 200", got)
			}
			keyFile := filepath.Join(db[slices.Index(db, "--data-dir")+1], "demo-api-key")
			if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("demo key file %s: %v, mode %v, want 0600", keyFile, err, fi.Mode().Perm())
			}
			again.stop(t)

			// Without the file, a start replaces the key and says so; the
			// old key is dead.
			if err := os.Remove(keyFile); err != nil {
				t.Fatal(err)
			}
			third := startDemo(t, db...)
			if third.key == s.key || !strings.Contains(third.banner, "a NEW key") {
				t.Errorf("--demo start without the key file printed key %s (old %s):\n%s", third.key, s.key, third.banner)
			}
			if got := balanceStatus(t, third.base, s.key); got != 403 {
				t.Errorf("previous demo key: status %d, want 403", got)
			}
			if got := balanceStatus(t, third.base, third.key); got != 200 {
				t.Errorf("new demo key: status %d, want 200", got)
			}
			third.stop(t)
		})
	}
}

func balanceStatus(t *testing.T, base, key string) int {
	got, _ := post(t, base+"/api/v1/getbalance", url.Values{"api_key": {key}, "currency": {"BTC"}})
	return got
}

// TestAdminErrors checks that operator mistakes get a message and a
// non-zero exit, never a stack trace.
func TestAdminErrors(t *testing.T) {
	t.Parallel()
	db := []string{"--data-dir", t.TempDir()}
	// Faucet 1 exists, so the cases naming it fail on the rule they test.
	runAdmin(t, db, "user", "create", "--username", "ann", "--email", "ann@example.com")
	runAdmin(t, db, "faucet", "create", "--owner", "ann", "--name", "A", "--domain", "a.example.com", "--url", "https://a.example.com/")
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"admin", "frobnicate"}, 2, "unknown admin command"},
		{"missing flag", []string{"admin", "user", "create", "--username", "zed"}, 2, "--email is required"},
		{"bad username", []string{"admin", "user", "create", "--username", "Z!", "--email", "z@example.com"}, 1, "Invalid username"},
		{"unknown faucet", []string{"admin", "deposit", "--faucet", "999", "--coin", "BTC", "--amount", "5"}, 1, "No faucet 999"},
		{"no faucet named", []string{"admin", "key", "list"}, 2, "--faucet is required"},
		{"faucet id not positive", []string{"admin", "faucet", "show", "--faucet", "-3"}, 2, "--faucet is required"},
		{"bad amount", []string{"admin", "deposit", "--faucet", "1", "--coin", "BTC", "--amount", "1.5"}, 2, "--amount must be a positive integer"},
		{"bad limits JSON", []string{"admin", "faucet", "set-limits", "--faucet", "1", "--limits", "[{"}, 2, "--limits:"},
		{"limit without a maximum", []string{"admin", "faucet", "set-limits", "--faucet", "1", "--limits", `[{"per":"faucet","window_seconds":60}]`}, 1, "give max_count or max_amount"},
		{"unknown coin", []string{"admin", "deposit", "--faucet", "1", "--coin", "NOPE", "--amount", "5"}, 1, `No coin "NOPE"`},
		{"bad database url", []string{"migrate", "--database-url", "mysql://x"}, 2, "postgres://"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.CommandContext(context.Background(), dripBin, append(c.args, db...)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() == 0 {
				t.Fatalf("exit %v, want a non-zero exit", err)
			}
			if c.code == 2 && ee.ExitCode() != 2 {
				t.Errorf("exit code %d, want 2 (usage)", ee.ExitCode())
			}
			if !strings.Contains(stderr.String(), c.want) || strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("stderr %q, want it to mention %q and hold no stack trace", stderr.String(), c.want)
			}
		})
	}
}

// TestShutdownLetsInFlightPayoutsFinish: SIGTERM while a send is in flight
// (held in the batcher by --batch-wait) answers that send with its committed
// payout, and the process exits cleanly with the ledger reconciled.
func TestShutdownLetsInFlightPayoutsFinish(t *testing.T) {
	t.Parallel()
	db := []string{"--data-dir", t.TempDir()}
	s := startDemo(t, append([]string{"--batch-wait", "2s", "--batch-max", "100"}, db...)...)
	type reply struct {
		body map[string]any
		err  error // the request's own failure: t.Fatal is for the test goroutine only
	}
	done := make(chan reply, 1)
	go func() {
		client := &http.Client{Timeout: 30 * time.Second}
		resp, err := client.PostForm(s.base+"/api/v1/send", url.Values{"api_key": {s.key}, "to": {"bob"}, "amount": {"777"}, "currency": {"BTC"}})
		if err != nil {
			done <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		done <- reply{body: body, err: json.NewDecoder(resp.Body).Decode(&body)}
	}()
	time.Sleep(500 * time.Millisecond) // the send now waits in its batch
	select {
	case r := <-done:
		t.Fatalf("the send was answered before shutdown (%v, %v): --batch-wait did not hold it", r.body, r.err)
	default:
	}
	s.stop(t) // SIGTERM; fails unless the process exits 0
	r := <-done
	if r.err != nil || r.body["status"] != float64(200) || r.body["payout_id"] == nil {
		t.Fatalf("in-flight send across shutdown: %v %v, want status 200 with a payout", r.body, r.err)
	}
	if rec := runAdmin(t, db, "reconcile"); rec["ok"] != true {
		t.Errorf("reconcile after shutdown: %v", rec)
	}
	again := startDemo(t, db...)
	_, body := post(t, again.base+"/api/v1/payouts", url.Values{"api_key": {again.key}, "count": {"1"}})
	rewards, _ := body["rewards"].([]any)
	if len(rewards) != 1 || rewards[0].(map[string]any)["amount"].(float64) != 777 {
		t.Errorf("the payout answered during shutdown is not stored: %v", body)
	}
	again.stop(t)
}
