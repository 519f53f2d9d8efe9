// Command kubectl-hami is the kubectl plugin, scheduler extender and node agent for HAMi-style GPU sharing.
package main

import (
	"os"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
)

func main() {
	os.Exit(cli.Execute(cli.DefaultStreams()))
}
