package cli

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// SnapshotOptions are the inputs of `kubectl hami snapshot`.
type SnapshotOptions struct {
	readOptions
	Output string
}

func newSnapshotCommand(read *readFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SnapshotOptions{readOptions: readOptions{read: read, streams: streams}}
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save the HAMi-relevant objects (nodes, pods, resourcequotas, HAMi's device ConfigMap) as one List",
		Example: `  kubectl hami snapshot > cluster.yaml
  kubectl hami why-pending train-7 --snapshot cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "output format: yaml or json")
	return cmd
}

// Complete has nothing to fill: snapshot reads its flags as they are.
func (o *SnapshotOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the source and the output format.
func (o *SnapshotOptions) Validate() error {
	if err := o.read.validate(); err != nil {
		return err
	}
	return validateOutput(o.Output, "", "yaml", "json")
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
