package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile writes a file in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestConfigFilePrecedence: a flag on the command line wins over its
// environment variable, which wins over the --config file (TOML or
// YAML), which wins over the default; DRIP_CONFIG names the file unless
// --config does. drip migrate shows which --data-dir won by where it
// creates the database.
func TestConfigFilePrecedence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		file    string // TOML file: data-dir = "file"; YAML file: data-dir: yamlfile
		args    []string
		env     []string
		winner  string
		message string
	}{
		{name: "default", winner: "drip-data"},
		{name: "TOML file", args: []string{"--config", "drip.toml"}, winner: "file"},
		{name: "YAML file", args: []string{"--config", "drip.yaml"}, winner: "yamlfile"},
		{name: "YML file by DRIP_CONFIG", env: []string{"DRIP_CONFIG=drip.yml"}, winner: "ymlfile"},
		{name: "--config wins over DRIP_CONFIG", args: []string{"--config", "drip.toml"}, env: []string{"DRIP_CONFIG=drip.yaml"}, winner: "file"},
		{name: "environment over file", args: []string{"--config", "drip.toml"}, env: []string{"DRIP_DATA_DIR=env"}, winner: "env"},
		{name: "flag over environment and file", args: []string{"--config", "drip.toml", "--data-dir", "flag"},
			env: []string{"DRIP_DATA_DIR=env"}, winner: "flag"},
		{name: "flag over environment", args: []string{"--data-dir", "flag"}, env: []string{"DRIP_DATA_DIR=env"}, winner: "flag"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			// Keys of other commands (serve's listen) are allowed in a file migrate reads.
			writeFile(t, dir, "drip.toml", "# drip\ndata-dir = \"file\"\nlisten = \"0.0.0.0:8080\"\nrate-burst = 200\naccess-log = false\n")
			writeFile(t, dir, "drip.yaml", "data-dir: yamlfile\nrequest-timeout: 10s\n")
			writeFile(t, dir, "drip.yml", "data-dir: ymlfile\n")
			code, stdout, stderr := runDrip(t, dir, tt.env, append([]string{"migrate"}, tt.args...)...)
			if code != 0 || !strings.Contains(stdout, "migrations applied") {
				t.Fatalf("exit %d: %s %s", code, stdout, stderr)
			}
			var made []string
			for _, d := range []string{"drip-data", "file", "yamlfile", "ymlfile", "env", "flag"} {
				if _, err := os.Stat(filepath.Join(dir, d, "drip.db")); err == nil {
					made = append(made, d)
				}
			}
			if len(made) != 1 || made[0] != tt.winner {
				t.Errorf("databases made in %v, want only in %s", made, tt.winner)
			}
		})
	}
}

// TestConfigFileTypes: each kind of flag is set from its type in the
// file: a boolean (admin --json), an integer and a duration (serve's
// checks of --rate-burst and --request-timeout see the file's values).
func TestConfigFileTypes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	asJSON := writeFile(t, dir, "json.toml", "json = true\ndata-dir = \""+data+"\"\n")
	if code, stdout, stderr := runDrip(t, dir, nil, "admin", "coin", "list", "--config", asJSON); code != 0 || !strings.HasPrefix(stdout, "[") {
		t.Errorf("json = true: exit %d, stdout %q %s; want a JSON list", code, stdout, stderr)
	}
	if code, stdout, _ := runDrip(t, dir, []string{"DRIP_JSON=false"}, "admin", "coin", "list", "--config", asJSON); code != 0 || strings.HasPrefix(stdout, "[") {
		t.Errorf("DRIP_JSON=false over json = true: exit %d, stdout %q; want the plain list", code, stdout)
	}
	for _, tt := range []struct{ file, content, want string }{
		{"burst.toml", "rate-burst = 0\n", "--rate-burst must be positive"},
		{"timeout.yaml", "request-timeout: 1s\n", "--request-timeout must be at least"},
		{"rate.toml", "ip-rate-per-minute = -1.5\n", "--ip-rate-per-minute must be 0 (off) or positive"},
	} {
		path := writeFile(t, dir, tt.file, tt.content)
		code, _, stderr := runDrip(t, dir, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--config", path)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", tt.content, code, stderr, tt.want)
		}
	}
}

// TestConfigFileErrors: a key that is no flag, a value of the wrong type,
// a file drip cannot read: exit 2, naming the file and the key.
func TestConfigFileErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ file, content, want string }{
		{"typo.toml", "listne = \"0.0.0.0:8080\"\n", `typo.toml: unknown key "listne"`},
		{"typo.yaml", "redis_url: redis://x\n", `typo.yaml: unknown key "redis_url"`},
		{"hidden.toml", "bench-noop = true\n", `unknown key "bench-noop"`},
		{"self.toml", "config = \"other.toml\"\n", `unknown key "config"`},
		{"string.toml", "listen = 8080\n", "string.toml: listen must be a string, not the integer 8080"},
		{"int.toml", "rate-burst = \"120\"\n", `int.toml: rate-burst must be an integer, not the string "120"`},
		{"float.yaml", "rate-burst: 1.5\n", "float.yaml: rate-burst must be an integer, not the number 1.5"},
		{"bool.yaml", "demo: \"yes\"\n", `bool.yaml: demo must be true or false, not the string "yes"`},
		{"duration.toml", "request-timeout = 10\n", `duration.toml: request-timeout must be a duration string such as "5s", not the integer 10`},
		{"badduration.toml", "request-timeout = \"ten\"\n", `badduration.toml: request-timeout: invalid value "ten"`},
		{"table.toml", "[listen]\nhost = \"x\"\n", "table.toml: listen must be a string, not a table"},
		{"list.yaml", "trusted-proxies: [10.0.0.1]\n", "list.yaml: trusted-proxies must be a string, not a list"},
		{"broken.toml", "listen = \n", "broken.toml: toml:"},
		{"twice.yaml", "listen: a\nlisten: b\n", "twice.yaml: yaml:"},
		{"drip.ini", "listen=x\n", "--config: drip.ini: name a .toml, .yaml or .yml file"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := writeFile(t, dir, tt.file, tt.content)
			code, stdout, stderr := runDrip(t, dir, nil, "serve", "--listen", "127.0.0.1:0", "--data-dir", dir, "--config", filepath.Base(path))
			if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, stdout, stderr, tt.want)
			}
		})
	}
	code, _, stderr := runDrip(t, t.TempDir(), []string{"DRIP_CONFIG=missing.toml"}, "migrate")
	if code != 2 || !strings.Contains(stderr, "--config: open missing.toml") {
		t.Errorf("a missing DRIP_CONFIG file: exit %d %q, want 2 naming it", code, stderr)
	}
	code, _, stderr = runDrip(t, t.TempDir(), []string{"DRIP_RATE_BURST=many"}, "serve", "--listen", "127.0.0.1:0")
	if code != 2 || !strings.Contains(stderr, "DRIP_RATE_BURST") {
		t.Errorf("a bad environment value: exit %d %q, want 2 naming DRIP_RATE_BURST", code, stderr)
	}
}

// TestReadmeConfigExample: the README's example config file is one drip
// serve takes: every key a flag, every value of its type (serve is
// stopped before serving by a --request-timeout too short, checked after
// the file).
func TestReadmeConfigExample(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```toml\n# /etc/drip/drip.toml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 || !strings.Contains(block, "listen") {
		t.Fatal("the README has no example drip.toml")
	}
	dir := t.TempDir()
	path := writeFile(t, dir, "drip.toml", block)
	code, _, stderr := runDrip(t, dir, nil, "serve", "--config", path, "--request-timeout", "1s")
	if code != 2 || !strings.Contains(stderr, "--request-timeout must be at least") {
		t.Errorf("serve --config with the README's file: exit %d %q; want it past the file, stopped by --request-timeout", code, stderr)
	}
}
