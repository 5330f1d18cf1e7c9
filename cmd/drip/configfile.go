package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
)

// readConfigFile reads a --config file: TOML or YAML by its extension, a
// table of flag names to values.
func readConfigFile(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--config: %v", err)
	}
	m := map[string]any{}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		_, err = toml.Decode(string(data), &m)
	case ".yaml", ".yml":
		err = yaml.Unmarshal(data, &m)
	default:
		return nil, usagef("--config: %s: name a .toml, .yaml or .yml file", path)
	}
	if err != nil {
		return nil, usagef("%s: %v", path, err)
	}
	return m, nil
}

// checkConfigKeys refuses a config file with a key that is no flag of any
// command that reads the file, or a key of this command's with a value of
// the wrong type, whichever source wins for it. A key of another command
// is left to it: one file serves drip serve, migrate and admin.
func checkConfigKeys(path string, file map[string]any, fs *flag.FlagSet) error {
	keys := make([]string, 0, len(file))
	for k := range file {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var known map[string]bool
	for _, k := range keys {
		if f := fs.Lookup(k); f != nil && !hidden(f) && k != "config" {
			if _, ok, want := fileValue(f, file[k]); !ok {
				return usagef("%s: %s must be %s, not %s", path, k, want, describeValue(file[k]))
			}
			continue
		}
		if known == nil {
			known = configKeys()
		}
		if !known[k] {
			return usagef("%s: unknown key %q (the keys are flag names, such as listen or database-url)", path, k)
		}
	}
	return nil
}

// configKeys are the names of every flag a config file may set.
func configKeys() map[string]bool {
	known := map[string]bool{}
	for _, c := range leafCommands() {
		if !c.config {
			continue
		}
		flagsOf(strings.Fields(c.name)...).VisitAll(func(f *flag.Flag) {
			if !hidden(f) && f.Name != "config" {
				known[f.Name] = true
			}
		})
	}
	return known
}

// describeValue names a config value's type for an error.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case int, int64, uint64:
		return fmt.Sprintf("the integer %v", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	case time.Time:
		return "a date"
	case []any:
		return "a list"
	case map[string]any:
		return "a table"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
