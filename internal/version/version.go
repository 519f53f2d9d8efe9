// Package version holds the build stamp that `make build` and `make dist` set with -ldflags.
package version

import (
	"fmt"
	"runtime"
)

// Set with -ldflags "-X github.com/kubectl-hami/kubectl-hami/internal/version.Version=v1.2.3".
var (
	Version = "v0.0.0-dev"
	Commit  = "unknown"
	Date    = "unknown"
)

// String is the one-line form `kubectl hami version` prints.
func String() string {
	return fmt.Sprintf("kubectl-hami %s (commit %s, built %s, %s/%s)", Version, Commit, Date, runtime.GOOS, runtime.GOARCH)
}
