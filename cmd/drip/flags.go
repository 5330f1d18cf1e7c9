package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Where a flag's value comes from, first found wins: the command line, its
// environment variable (DRIP_ and the flag's name, --database-url is
// DRIP_DATABASE_URL), the --config file under the flag's name, the
// default.

// configFile says whether a command reads the --config file. drip bench
// does not: it starts a drip serve of its own on a fresh database, which a
// deployment's file must not point elsewhere.
type configFile bool

const (
	withConfig configFile = true
	noConfig   configFile = false
)

// errHelp is a command line that asked for help, which was printed: exit 0.
var errHelp = errors.New("help printed")

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return "DRIP_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags sets fs's flags from args, the environment and, with
// withConfig, the --config file (registered here). -h or --help prints
// the command's help to stdout and returns errHelp. Errors are usage
// errors naming the flag, variable or file key at fault.
func parseFlags(ctx context.Context, fs *flag.FlagSet, args []string, stdout io.Writer, cf configFile) error {
	fs.SetOutput(io.Discard) // errors are returned, help printed below
	fs.Usage = func() {}
	var configPath *string
	if cf {
		configPath = fs.String("config", "", "read flags from this TOML (.toml) or YAML (.yaml, .yml) file, each key a flag's name")
	}
	if d := describer(ctx); d != nil {
		d(fs) // drip describing its commands (help, completion): run nothing
		return errHelp
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdout, fs, cf)
			return errHelp
		}
		return usagef("%v (see %s --help)", err, fs.Name())
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (see %s --help)", fs.Arg(0), fs.Name())
	}
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	var file map[string]any
	if cf {
		path := *configPath
		if v, ok := os.LookupEnv(envName("config")); ok && !onCommandLine["config"] {
			path = v
		}
		if path != "" {
			var err error
			if file, err = readConfigFile(path); err != nil {
				return err
			}
			if err := checkConfigKeys(path, file, fs); err != nil {
				return err
			}
		}
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || onCommandLine[f.Name] || hidden(f) || f.Name == "config" {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = usagef("%s: invalid value %q: %v", envName(f.Name), v, e)
			}
			return
		}
		if v, ok := file[f.Name]; ok {
			err = setFromFile(fs, f, v, *configPath)
		}
	})
	return err
}

// given reports whether the flag name of fs (parsed by parseFlags) was
// set, on the command line, by its variable or by the --config file.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// describeKey marks a context in which commands only describe themselves.
type describeKey struct{}

// describer is the function a describing context hands each command's
// flags to, or nil.
func describer(ctx context.Context) func(*flag.FlagSet) {
	d, _ := ctx.Value(describeKey{}).(func(*flag.FlagSet))
	return d
}

// flagsOf returns the flags of the command args names (such as "admin",
// "key", "mint"), nil if there is no such command. The command runs as
// far as parseFlags, which hands over its flags before it reads anything:
// so the help and completion cannot miss a flag a command defines.
func flagsOf(args ...string) *flag.FlagSet {
	var fs *flag.FlagSet
	ctx := context.WithValue(context.Background(), describeKey{}, func(f *flag.FlagSet) { fs = f })
	_ = run(ctx, args, io.Discard, io.Discard)
	return fs
}

// hiddenFlag is a bool flag that drip gives the processes it starts
// (drip bench's --bench-noop), not an operator's: it is left out of the
// help, the completion, the environment and the config file.
type hiddenFlag struct{ v *bool }

func (b hiddenFlag) String() string {
	if b.v == nil {
		return "false"
	}
	return strconv.FormatBool(*b.v)
}

func (b hiddenFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err == nil {
		*b.v = v
	}
	return err
}

func (hiddenFlag) IsBoolFlag() bool { return true }

// hiddenDuration is a duration flag hidden as hiddenFlag is: a setting
// only drip's own tests give the servers they start (serve's
// --webhook-lease).
type hiddenDuration struct{ v *time.Duration }

func (d hiddenDuration) String() string {
	if d.v == nil {
		return "0s"
	}
	return d.v.String()
}

func (d hiddenDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err == nil {
		*d.v = v
	}
	return err
}

func hidden(f *flag.Flag) bool {
	switch f.Value.(type) {
	case hiddenFlag, hiddenDuration:
		return true
	}
	return false
}

// isBool tells a flag that takes no value (--demo, not --demo true).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// printHelp writes a command's help: its usage line, what it does, and
// each flag with its default and environment variable.
func printHelp(w io.Writer, fs *flag.FlagSet, cf configFile) {
	c := commandNamed(strings.TrimPrefix(fs.Name(), "drip "))
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n", fs.Name(), c.args, c.summary)
	if c.details != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.details, "\n"))
	}
	var n int
	fs.VisitAll(func(f *flag.Flag) {
		if !hidden(f) {
			n++
		}
	})
	if n == 0 {
		return
	}
	fmt.Fprint(w, "\nFlags (a flag on the command line wins over its environment variable")
	if cf {
		fmt.Fprint(w, ", which wins over the --config file")
	}
	fmt.Fprint(w, "):\n")
	fs.VisitAll(func(f *flag.Flag) {
		if hidden(f) {
			return
		}
		typ, usage := flag.UnquoteUsage(f)
		if isBool(f) {
			fmt.Fprintf(w, "  --%s\n", f.Name)
		} else {
			fmt.Fprintf(w, "  --%s %s\n", f.Name, typ)
		}
		fmt.Fprintf(w, "        %s\n", usage)
		fmt.Fprintf(w, "        default: %s  env: %s\n", defaultText(f), envName(f.Name))
	})
}

// defaultText is a flag's default as the help shows it.
func defaultText(f *flag.Flag) string {
	switch {
	case f.DefValue == "" || f.DefValue == "\x00": // "\x00": admin's "not given"
		return "none"
	case isBool(f):
		return f.DefValue
	}
	if _, ok := f.Value.(flag.Getter).Get().(string); ok {
		return strconv.Quote(f.DefValue)
	}
	return f.DefValue
}

// setFromFile sets f from the config file's value v.
func setFromFile(fs *flag.FlagSet, f *flag.Flag, v any, path string) error {
	s, ok, want := fileValue(f, v)
	if !ok {
		return usagef("%s: %s must be %s, not %s", path, f.Name, want, describeValue(v))
	}
	if err := fs.Set(f.Name, s); err != nil {
		return usagef("%s: %s: invalid value %q: %v", path, f.Name, s, err)
	}
	return nil
}

// fileValue is the config file's value v for flag f as the command line
// would give it, if v has the flag's type: a string, an integer, a number,
// true or false, or for a duration a string such as "5s". want names the
// type.
func fileValue(f *flag.Flag, v any) (s string, ok bool, want string) {
	var kind any = ""
	if g, isGetter := f.Value.(flag.Getter); isGetter {
		kind = g.Get()
	}
	switch kind.(type) {
	case bool:
		b, ok := v.(bool)
		return strconv.FormatBool(b), ok, "true or false"
	case int, int64:
		n, ok := integer(v)
		return strconv.FormatInt(n, 10), ok, "an integer"
	case float64:
		if n, ok := integer(v); ok {
			return strconv.FormatInt(n, 10), true, "a number"
		}
		x, ok := v.(float64)
		return strconv.FormatFloat(x, 'g', -1, 64), ok, "a number"
	case time.Duration:
		s, ok := v.(string)
		return s, ok, `a duration string such as "5s"`
	default:
		s, ok := v.(string)
		return s, ok, "a string"
	}
}

// integer reads the integers TOML and YAML decode to.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}
