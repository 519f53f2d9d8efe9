// Package cli wires the kubectl-hami subcommands together.
package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/version"
)

// DefaultStreams are the process's own stdin, stdout and stderr.
func DefaultStreams() genericiooptions.IOStreams {
	return genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// NewRootCommand builds `kubectl hami` and its subcommands.
func NewRootCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return newRoot(streams, time.Now)
}

// newRoot takes the clock so that tests print stable ages.
func newRoot(streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-hami",
		Short: "Explain and schedule HAMi shared-GPU workloads",
		Long: `kubectl hami explains why GPU pods wait and checks what would fit, with the same engine that schedules
pods on shared GPUs the way HAMi does (vGPU slots, GPU memory and cores, namespace GPU quotas, Volcano
card-model quotas per queue), and runs as that scheduler's extender and as the node agent.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	config := genericclioptions.NewConfigFlags(true)
	config.AddFlags(root.PersistentFlags())
	read := &readFlags{config: config, stdin: streams.In}
	root.AddCommand(
		newVersionCommand(streams),
		newWhyPendingCommand(read, streams, now),
		newWhatIfCommand(read, streams, now),
		newTopCommand(read, streams, now),
		newLintCommand(read, streams),
		newSnapshotCommand(read, streams),
		newServeExtenderCommand(config, streams),
		newAgentCommand(config, streams),
		newCompletionCommand(streams),
	)
	registerCompletions(root, read)
	return root
}

// Execute runs the root command and prints the error the way kubectl does.
func Execute(streams genericiooptions.IOStreams) int {
	cmd := NewRootCommand(streams)
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
		return 1
	}
	return 0
}

func newVersionCommand(s genericiooptions.IOStreams) *cobra.Command {
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
