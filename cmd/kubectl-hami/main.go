// Command kubectl-hami is the kubectl plugin, scheduler extender and node agent for HAMi-style GPU sharing.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
)

func main() {
	// KUBECTL_HAMI_CPUPROFILE=FILE writes a CPU profile of the whole run (see docs/benchmarks.md).
	if path := os.Getenv("KUBECTL_HAMI_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "error: KUBECTL_HAMI_CPUPROFILE: %v\n", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "error: KUBECTL_HAMI_CPUPROFILE: %v\n", err)
			os.Exit(1)
		}
		code := cli.Execute(cli.DefaultStreams())
		pprof.StopCPUProfile()
		f.Close()
		os.Exit(code)
	}
	os.Exit(cli.Execute(cli.DefaultStreams()))
}
