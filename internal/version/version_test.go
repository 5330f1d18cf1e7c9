package version

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResolve: the -ldflags values of a release build win over the build
// info; without either, a build is "devel" of an unknown commit.
func TestResolve(t *testing.T) {
	t.Parallel()
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	for _, tt := range []struct {
		name                string
		bi                  *debug.BuildInfo
		ldv, ldc, ldd       string
		version, commit, at string
		modified            bool
	}{
		{"no build info", nil, "", "", "", "devel", "", "", false},
		{"work tree build", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, "", "", "", "devel", "", "", false},
		{"VCS-stamped build", stamped, "", "", "", "v1.2.3", "abc123", "2026-11-01T10:00:00Z", true},
		{"release build", stamped, "v2.0.0", "def456", "2026-12-24T00:00:00Z", "v2.0.0", "def456", "2026-12-24T00:00:00Z", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.bi, tt.ldv, tt.ldc, tt.ldd)
			want := Info{Version: tt.version, Commit: tt.commit, Date: tt.at, Modified: tt.modified, Go: got.Go, Platform: got.Platform}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if got.Go == "" || !strings.Contains(got.Platform, "/") {
				t.Errorf("Go %q, platform %q: want both", got.Go, got.Platform)
			}
		})
	}
}

func TestInfoString(t *testing.T) {
	t.Parallel()
	got := Info{Version: "v1.2.3", Commit: "abc123", Modified: true, Go: "go1.26.8", Platform: "linux/amd64"}.String()
	want := "drip v1.2.3\ncommit: abc123 (modified)\nbuilt:  unknown\ngo:     go1.26.8 linux/amd64\n"
	if got != want {
		t.Errorf("(-want +got)\n%s", cmp.Diff(want, got))
	}
}
