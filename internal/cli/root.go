// Package cli wires the kubectl-hami subcommands together.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
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
		// Usage lines and errors say `kubectl hami`, the way users run the plugin.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl hami"},
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{cmd: c, err: err}
	})
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	return root
}

// Execute runs the root command and prints the error the way kubectl does.
func Execute(streams genericiooptions.IOStreams) int {
	return execute(NewRootCommand(streams), streams)
}

// execute runs cmd (its arguments set by the caller or taken from os.Args) and prints its error.
func execute(cmd *cobra.Command, streams genericiooptions.IOStreams) int {
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintf(streams.ErrOut, "error: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(streams.ErrOut, "See '%s --help' for usage.\n", ue.cmd.CommandPath())
		} else if strings.HasPrefix(err.Error(), "unknown command") {
			fmt.Fprintf(streams.ErrOut, "See '%s --help' for usage.\n", cmd.CommandPath())
		}
		return 1
	}
	return 0
}

// usageError is a mistake in how a command was called (a flag or the arguments): Execute points at --help.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// wrapArgs marks the argument errors of c and its subcommands as usage errors.
func wrapArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{cmd: cmd, err: err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}
