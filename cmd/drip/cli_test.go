package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// runDrip runs the drip binary with args in dir (the test's working
// directory when ""), with env added, and returns its exit code, stdout
// and stderr.
func runDrip(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(dripBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("drip %v: %v", args, err)
	}
	return code, stdout.String(), stderr.String()
}

// commandPaths are every command and command group of drip, as words.
func commandPaths() [][]string {
	paths := [][]string{{}}
	seen := map[string]bool{}
	for _, c := range leafCommands() {
		words := strings.Fields(c.name)
		for i := 1; i <= len(words); i++ {
			if p := strings.Join(words[:i], " "); !seen[p] {
				seen[p] = true
				paths = append(paths, words[:i])
			}
		}
	}
	return paths
}

// TestHelpOnEveryCommand: --help, -h and drip help print the usage of
// every command and group to stdout and exit 0; a command's help lists
// each of its flags with its default and environment variable, and never
// the flags drip gives its own processes.
func TestHelpOnEveryCommand(t *testing.T) {
	t.Parallel()
	paths := commandPaths()
	if len(paths) < 30 {
		t.Fatalf("%d command paths: the table lost commands", len(paths))
	}
	for _, path := range paths {
		name := strings.TrimSpace("drip " + strings.Join(path, " "))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var outs []string
			for _, args := range [][]string{append(slices.Clone(path), "--help"), append(slices.Clone(path), "-h"), append([]string{"help"}, path...)} {
				code, stdout, stderr := runDrip(t, t.TempDir(), nil, args...)
				if code != 0 || stderr != "" {
					t.Errorf("drip %v: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
				}
				outs = append(outs, stdout)
			}
			if outs[0] != outs[1] || outs[0] != outs[2] {
				t.Errorf("--help, -h and drip help differ:\n%s\n---\n%s\n---\n%s", outs[0], outs[1], outs[2])
			}
			help := outs[0]
			usage := "Usage: " + name + " "
			if name == "drip" || name == "drip help" { // drip's usage, which lists drip help
				usage = "Usage:\n  drip serve"
			}
			if !strings.Contains(help, usage) {
				t.Errorf("help has no usage line for %q:\n%s", name, help)
			}
			fs := flagsOf(path...)
			if fs == nil {
				return // a group: its commands are checked on their own
			}
			n := 0
			fs.VisitAll(func(f *flag.Flag) {
				if hidden(f) {
					if strings.Contains(help, "--"+f.Name) {
						t.Errorf("help shows the hidden flag --%s", f.Name)
					}
					return
				}
				n++
				want := fmt.Sprintf("default: %s  env: %s", defaultText(f), envName(f.Name))
				i := strings.Index(help, "\n  --"+f.Name+" ")
				if i < 0 {
					i = strings.Index(help, "\n  --"+f.Name+"\n")
				}
				if i < 0 || !strings.Contains(help[i:], want) {
					t.Errorf("help lacks --%s with %q:\n%s", f.Name, want, help)
				}
			})
			if strings.Count(help, "  env: DRIP_") != n {
				t.Errorf("help lists %d env variables for %d flags", strings.Count(help, "  env: DRIP_"), n)
			}
		})
	}
}

// TestServeHelpShowsDefaultsAndVariables pins a few lines of serve's help
// as an operator reads them.
func TestServeHelpShowsDefaultsAndVariables(t *testing.T) {
	t.Parallel()
	_, help, _ := runDrip(t, "", nil, "serve", "--help")
	for _, want := range []string{
		"Usage: drip serve [flags]",
		"  --listen string\n        address to serve HTTP on\n        default: \"127.0.0.1:8080\"  env: DRIP_LISTEN\n",
		"  --access-log\n",
		"default: true  env: DRIP_ACCESS_LOG",
		"  --log-format string\n",
		"default: \"json\"  env: DRIP_LOG_FORMAT",
		"  --config string\n",
		"env: DRIP_CONFIG",
		"  --request-timeout duration\n",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("serve --help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "bench-noop") {
		t.Errorf("serve --help shows --bench-noop")
	}
}

// TestUsageErrors: a wrong command line exits 2 with a message on stderr
// and nothing on stdout.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "Usage:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"serve", "--bogus"}, "flag provided but not defined: -bogus (see drip serve --help)"},
		{[]string{"migrate", "extra"}, `unexpected argument "extra"`},
		{[]string{"admin", "faucet"}, "drip admin faucet: name one of its commands"},
		{[]string{"admin", "frobnicate", "--help"}, `unknown admin command "frobnicate"`},
		{[]string{"completion"}, "name a shell"},
		{[]string{"completion", "tcsh"}, "name a shell"},
		{[]string{"version", "now"}, `unexpected argument "now"`},
	} {
		code, stdout, stderr := runDrip(t, t.TempDir(), nil, tt.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("drip %v: exit %d, stdout %q, stderr %q; want 2, nothing, and %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
}

// TestVersion: drip version and drip --version say the same, with the Go
// release; a release build's -ldflags, as the README gives them, set the
// version, commit and date.
func TestVersion(t *testing.T) {
	t.Parallel()
	_, a, _ := runDrip(t, "", nil, "version")
	_, b, _ := runDrip(t, "", nil, "--version")
	if a != b || !strings.HasPrefix(a, "drip ") || !strings.Contains(a, "go:     "+runtime.Version()) {
		t.Errorf("drip version %q and --version %q: want the same, with %s", a, b, runtime.Version())
	}
	bin := releaseBuild(t, "v9.9.9-test", "0123abcd", "2026-11-25T00:00:00Z")
	out, err := exec.Command(bin, "version").Output()
	want := "drip v9.9.9-test\ncommit: 0123abcd\nbuilt:  2026-11-25T00:00:00Z\ngo:     " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if err != nil || string(out) != want {
		t.Errorf("release build: %v %q, want %q", err, out, want)
	}
}

// releaseBuild builds drip as a release is built (README, "Versions").
func releaseBuild(t *testing.T, version, commit, date string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "drip")
	const pkg = "github.com/dripfaucet/drip/internal/version"
	ldflags := fmt.Sprintf("-X %s.version=%s -X %s.commit=%s -X %s.date=%s", pkg, version, pkg, commit, pkg, date)
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
