// Package cli wires the kubectl-hami subcommands together.
package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/kubectl-hami/kubectl-hami/internal/version"
)

// Streams is the set of standard streams a command writes to; tests inject buffers.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// DefaultStreams are the process's own stdin, stdout and stderr.
func DefaultStreams() Streams { return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }

// NewRootCommand builds `kubectl hami` and its subcommands.
func NewRootCommand(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "kubectl-hami",
		Short:         "Explain and schedule HAMi shared-GPU workloads",
		Long:          "kubectl-hami explains why GPU pods wait, checks what would fit, and schedules pods on shared GPUs the way HAMi does.",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.AddCommand(newVersionCommand(s))
	return root
}

func newVersionCommand(s Streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-hami",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(s.Out, version.String())
			return err
		},
	}
}
