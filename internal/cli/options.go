package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// readOptions are what every read command's Options hold beside their own flags: where the cluster comes
// from, the streams and the clock.
type readOptions struct {
	read    *readFlags
	streams genericiooptions.IOStreams
	now     func() time.Time
}

// command is a command's Options in kubectl's order: Complete fills them from the arguments and the
// kubeconfig, Validate checks them, Run does the work.
type command interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// runCommand is the RunE of a command: o's Complete, Validate and Run in turn.
func runCommand(o command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}
