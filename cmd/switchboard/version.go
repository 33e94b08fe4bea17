package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and revision may be set at link time:
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.revision=$(git rev-parse HEAD)" ./cmd/switchboard
//
// Without them the build's own information (module version, VCS stamp) is used.
var version, revision string

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, the VCS revision and the Go version of this binary",
		Long:    "Print the version of this binary, the VCS revision it was built from (and whether the tree was modified), its build time and the Go toolchain and platform.",
		Example: "  switchboard version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			printVersion(cmd.OutOrStdout())
			return nil
		},
	}
}

// buildVersion returns the version, VCS revision, commit time and whether the
// tree was modified, from the link-time variables or the build information.
func buildVersion() (ver, rev, at string, modified bool) {
	ver, rev = version, revision
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if ver == "" || ver == "(devel)" {
		ver = "devel"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev, at, modified
}

func printVersion(w io.Writer) {
	ver, rev, at, modified := buildVersion()
	fmt.Fprintf(w, "switchboard %s\n", ver)
	if modified {
		rev += " (modified)"
	}
	fmt.Fprintf(w, "revision:   %s\n", rev)
	if at != "" {
		fmt.Fprintf(w, "built from: %s\n", at)
	}
	fmt.Fprintf(w, "go:         %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
