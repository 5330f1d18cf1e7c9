package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBashCompletion: the bash script is valid bash, and completing in
// bash offers every command below its parent, every flag of every
// command, and files after a flag that takes a value.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	code, script, stderr := runDrip(t, "", nil, "completion", "bash")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	path := filepath.Join(t.TempDir(), "drip.bash")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}

	// Each query is the words typed, the last being completed; the
	// completion's answers come back one query a line.
	type query struct {
		words []string
		want  string // one of the answers
	}
	var queries []query
	for _, c := range leafCommands() {
		words := strings.Fields(c.name)
		for i := range words {
			queries = append(queries, query{append(append([]string{"drip"}, words[:i]...), words[i][:1]), words[i]})
		}
		if fs := flagsOf(words...); fs != nil { // drip help has none
			fs.VisitAll(func(f *flag.Flag) {
				if !hidden(f) {
					queries = append(queries, query{append(append([]string{"drip"}, words...), "--"), "--" + f.Name})
				}
			})
		}
	}
	queries = append(queries,
		query{[]string{"drip", "completion", ""}, "zsh"},
		query{[]string{"drip", "admin", "faucet", ""}, "rotate-key"},
		query{[]string{"drip", "serve", "--config", ""}, "drip.bash"}, // a file of the working directory
	)
	var b strings.Builder
	fmt.Fprintf(&b, "source %s\n", path)
	for _, q := range queries {
		quoted := make([]string, len(q.words))
		for i, w := range q.words {
			quoted[i] = "'" + w + "'"
		}
		fmt.Fprintf(&b, "COMP_WORDS=(%s); COMP_CWORD=%d; COMPREPLY=(); _drip; echo \"${COMPREPLY[*]}\"\n", strings.Join(quoted, " "), len(q.words)-1)
	}
	cmd := exec.Command("bash", "-c", b.String())
	cmd.Dir = filepath.Dir(path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	answers := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(answers) != len(queries) {
		t.Fatalf("%d answers to %d queries:\n%s", len(answers), len(queries), out)
	}
	for i, q := range queries {
		if !strings.Contains(" "+answers[i]+" ", " "+q.want+" ") {
			t.Errorf("completing %q offers %q, want %s among them", strings.Join(q.words, " "), answers[i], q.want)
		}
	}
	if len(queries) < 150 {
		t.Errorf("only %d completions checked: the command table lost commands or flags", len(queries))
	}
}

// TestZshAndFishCompletion: the zsh and fish scripts parse, where those
// shells are installed, and fish offers a command and a flag.
func TestZshAndFishCompletion(t *testing.T) {
	t.Parallel()
	for _, sh := range []struct{ name, check string }{{"zsh", "-n"}, {"fish", "--no-execute"}} {
		code, script, _ := runDrip(t, "", nil, "completion", sh.name)
		if code != 0 || !strings.Contains(script, "rotate-key") || !strings.Contains(script, "database-url") {
			t.Errorf("drip completion %s: exit %d, want a script with the commands and flags", sh.name, code)
			continue
		}
		if _, err := exec.LookPath(sh.name); err != nil {
			t.Logf("%s is not installed: its script is not parsed", sh.name)
			continue
		}
		path := filepath.Join(t.TempDir(), "drip."+sh.name)
		if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(sh.name, sh.check, path).CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", sh.name, sh.check, err, out)
		}
		if sh.name == "fish" {
			out, err := exec.Command("fish", "-c", "source "+path+"; complete -C 'drip admin fa'; complete -C 'drip serve --lis'").Output()
			if err != nil || !strings.Contains(string(out), "faucet\t") || !strings.Contains(string(out), "--listen\t") {
				t.Errorf("fish completes %q (%v), want faucet and --listen", out, err)
			}
		}
	}
}
