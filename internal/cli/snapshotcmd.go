package cli

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// SnapshotOptions are the inputs of `kubectl hami snapshot`.
type SnapshotOptions struct {
	read    *readFlags
	streams genericiooptions.IOStreams
	Output  string
}

func newSnapshotCommand(read *readFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SnapshotOptions{read: read, streams: streams}
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save the HAMi-relevant objects (nodes, pods, resourcequotas, HAMi's device ConfigMap) as one List",
		Example: `  kubectl hami snapshot > cluster.yaml
  kubectl hami why-pending train-7 --snapshot cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.read.validate(); err != nil {
				return err
			}
			if err := validateOutput(o.Output, "", "yaml", "json"); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

// Run writes the snapshot.
func (o *SnapshotOptions) Run(ctx context.Context) error {
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	format := o.Output
	if format == "" {
		format = "yaml"
	}
	return s.WriteList(o.streams.Out, format)
}
