package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dripfaucet/drip/internal/bench"
	"github.com/dripfaucet/drip/internal/version"
)

// command is one command of drip's command line as its help and the
// shell completion describe it. What it runs is dispatched by run and
// admin; its flags are what it registers (flagsOf).
type command struct {
	name    string // "serve", "admin key mint"
	args    string // what follows the name in its usage line
	summary string
	details string // more help, after the summary
	config  bool   // reads the --config file
}

// topCommands are drip's commands, in the order the usage lists them.
var topCommands = []command{
	{name: "serve", args: "[flags]", summary: "run the HTTP service (--demo for a ready-to-try setup)", config: true},
	{name: "migrate", args: "[flags]", summary: "apply database migrations", config: true},
	{name: "admin", args: "<command> [flags]", summary: "operate users, faucets, keys, deposits, coins, listings; reconcile the ledger"},
	{name: "bench", args: "[flags]", summary: "measure payout throughput and latency of a real drip serve (--short for CI)",
		details: "Runs a real drip serve (this binary) and measures v1 and v2 sends against the no-op\n" +
			"ceiling of the same server. Exits 1 if a correctness gate fails.\n\nScenarios:\n" + indent(bench.ScenarioHelp)},
	{name: "version", summary: "print the version, commit, build date and Go version (also: drip --version)"},
	{name: "completion", args: "bash|zsh|fish", summary: "print a shell completion script: source <(drip completion bash)"},
	{name: "help", args: "[command]", summary: "print a command's help (also: drip <command> --help)"},
}

// leafCommands are the commands that run: the top ones but admin, and
// each admin command.
func leafCommands() []command {
	var out []command
	for _, c := range topCommands {
		if c.name != "admin" {
			out = append(out, c)
		}
	}
	names := make([]string, 0, len(adminCmds))
	for name := range adminCmds {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		out = append(out, command{name: "admin " + name, args: "[flags] [--json]", summary: adminCmds[name].summary, config: true})
	}
	return out
}

// commandNamed is the command of that name ("admin key mint").
func commandNamed(name string) command {
	for _, c := range leafCommands() {
		if c.name == name {
			return c
		}
	}
	return command{name: name, args: "[flags]"}
}

func usage() string {
	var b strings.Builder
	b.WriteString("drip: a self-hostable faucet payout service\n\nUsage:\n")
	for _, c := range topCommands {
		fmt.Fprintf(&b, "  drip %-10s %-18s %s\n", c.name, c.args, c.summary)
	}
	b.WriteString(`
Every flag has an environment variable: --database-url is DRIP_DATABASE_URL.
serve, migrate and admin also read flags from a TOML or YAML file named by
--config or DRIP_CONFIG, its keys the flags' names (listen = "0.0.0.0:8080").
The command line wins over the environment, which wins over the file.
Run "drip <command> --help" for a command's flags.
`)
	return b.String()
}

// isHelp tells the arguments that ask for help.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// printVersion is drip version.
func printVersion(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("drip version", flag.ContinueOnError)
	if err := parseFlags(ctx, fs, args, stdout, noConfig); err != nil {
		return err
	}
	_, err := fmt.Fprint(stdout, version.Get())
	return err
}
