package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dripfaucet/drip/internal/drip"
	"github.com/dripfaucet/drip/internal/store/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ from what the tool server lists")

// goldenDir holds one file per tool: its name, title, description, input
// and output schemas and annotations, as tools/list gives them.
var goldenDir = filepath.Join("testdata", "tools")

// listedTools is the raw tools/list of a key with every tool, by name.
func listedTools(t *testing.T) map[string]map[string]json.RawMessage {
	t.Helper()
	e := newEnv(t, storetest.OpenSQLite(t), envOptions{}) // the schemas are the same on every engine
	f, _ := e.Faucet(t, nil)
	r := e.post(t, e.Key(t, f, drip.ScopeRead, drip.ScopeManage), rpc("tools/list", map[string]any{}), nil)
	if r.status != 200 {
		t.Fatalf("tools/list: HTTP %d: %s", r.status, r.body)
	}
	var list struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(decodeRPC(t, r).Result, &list); err != nil {
		t.Fatalf("tools/list result: %v", err)
	}
	tools := map[string]map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		var name string
		if err := json.Unmarshal(tool["name"], &name); err != nil {
			t.Fatalf("tool name: %v", err)
		}
		tools[name] = tool
	}
	return tools
}

// TestToolSchemasGolden: each tool's name, title, description, input and
// output schemas and annotations are kept as golden files, so a change to
// what assistants are told is a reviewed change. Refresh them with
// go test ./internal/mcpserver -update.
func TestToolSchemasGolden(t *testing.T) {
	t.Parallel()
	tools := listedTools(t)
	if *update {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range allTools {
		tool, ok := tools[name]
		if !ok {
			t.Errorf("%s is not listed", name)
			continue
		}
		var got bytes.Buffer
		b, err := json.Marshal(tool) // members sorted by name
		if err == nil {
			err = json.Indent(&got, b, "", "  ")
		}
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString("\n")
		path := filepath.Join(goldenDir, name+".json")
		if *update {
			if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v: run go test ./internal/mcpserver -update", err)
			continue
		}
		if diff := cmp.Diff(string(want), got.String()); diff != "" {
			t.Errorf("%s differs from %s (-golden +listed); if the change is meant, run go test ./internal/mcpserver -update:\n%s", name, path, diff)
		}
	}
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); !slices.Contains(allTools, name) {
			t.Errorf("%s is the golden file of no tool", f)
		}
	}
}

// TestToolDefinitions: every tool has a description, an object input
// schema that takes no unknown arguments, an object output schema, and
// its annotations: readOnlyHint on the read tools; destructiveHint,
// idempotentHint and openWorldHint false set explicitly on the manage
// tools.
func TestToolDefinitions(t *testing.T) {
	t.Parallel()
	tools := listedTools(t)
	if len(tools) != len(allTools) {
		t.Errorf("%d tools listed, want %d", len(tools), len(allTools))
	}
	for name, tool := range tools {
		var def struct {
			Description string         `json:"description"`
			Input       map[string]any `json:"inputSchema"`
			Output      map[string]any `json:"outputSchema"`
			Annotations map[string]any `json:"annotations"`
		}
		b, _ := json.Marshal(tool)
		if err := json.Unmarshal(b, &def); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(def.Description) < 60 {
			t.Errorf("%s: description %q is too short to act on", name, def.Description)
		}
		if def.Input["type"] != "object" || def.Input["additionalProperties"] != false {
			t.Errorf("%s: input schema %v: want an object without additional properties", name, def.Input)
		}
		if def.Output["type"] != "object" {
			t.Errorf("%s: output schema %v: want an object", name, def.Output)
		}
		if slices.Contains(readTools, name) {
			if def.Annotations["readOnlyHint"] != true || def.Annotations["openWorldHint"] != false {
				t.Errorf("%s: annotations %v: want readOnlyHint true, openWorldHint false", name, def.Annotations)
			}
			continue
		}
		for _, hint := range []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"} {
			if _, ok := def.Annotations[hint].(bool); !ok {
				t.Errorf("%s: annotations %v: %s is not set", name, def.Annotations, hint)
			}
		}
		if def.Annotations["openWorldHint"] != false {
			t.Errorf("%s: openWorldHint %v, want false", name, def.Annotations["openWorldHint"])
		}
		readOnly := name == "get_ip_whitelist" || name == "get_anti_fraud"
		if def.Annotations["readOnlyHint"] != readOnly || def.Annotations["destructiveHint"] == readOnly {
			t.Errorf("%s: annotations %v: want readOnlyHint %v and destructiveHint %v", name, def.Annotations, readOnly, !readOnly)
		}
		if _, ok := def.Output["properties"].(map[string]any)["warning"]; ok != slices.Contains(
			[]string{"set_ip_whitelist", "toggle_anti_fraud", "update_anti_fraud_rules", "set_ratelimits"}, name) {
			t.Errorf("%s: warning in its output schema: %v", name, ok)
		}
	}
}
