// Package version tells which drip this is: the one answer drip version,
// the tool server's serverInfo and v2's Drip-Version header give.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// Set at link time by release builds, which may have no VCS data in
// their build info (a container build from a source archive):
//
//	go build -ldflags "-X github.com/dripfaucet/drip/internal/version.version=v1.2.3 \
//	  -X github.com/dripfaucet/drip/internal/version.commit=$(git rev-parse HEAD) \
//	  -X github.com/dripfaucet/drip/internal/version.date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/drip
//
// They are written only by the linker: nothing in the program changes them.
var (
	version string
	commit  string
	date    string
)

// Info is what a binary knows of its own build.
type Info struct {
	Version  string // module version, "devel" for a build from a work tree
	Commit   string // VCS revision, "" when unknown
	Modified bool   // built from a work tree with uncommitted changes
	Date     string // commit time (or the -ldflags date), "" when unknown
	Go       string // the Go release that built it
	Platform string // GOOS/GOARCH
}

var current = sync.OnceValue(func() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(bi, version, commit, date)
})

// Get is this binary's Info.
func Get() Info { return current() }

// String is the version alone, as the tool server and v2 report it.
func String() string { return current().Version }

// resolve reads build info, with the -ldflags values winning over it.
func resolve(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) Info {
	i := Info{Version: "devel", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			i.Version = v
		}
		if bi.GoVersion != "" {
			i.Go = bi.GoVersion
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				i.Date = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		i.Version = ldVersion
	}
	if ldCommit != "" {
		i.Commit, i.Modified = ldCommit, false
	}
	if ldDate != "" {
		i.Date = ldDate
	}
	return i
}

// String is the Info as drip version prints it, one field a line.
func (i Info) String() string {
	c, d := i.Commit, i.Date
	if c == "" {
		c = "unknown"
	} else if i.Modified {
		c += " (modified)"
	}
	if d == "" {
		d = "unknown"
	}
	return fmt.Sprintf("drip %s\ncommit: %s\nbuilt:  %s\ngo:     %s %s\n", i.Version, c, d, i.Go, i.Platform)
}
