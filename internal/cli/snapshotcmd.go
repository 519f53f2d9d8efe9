package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// SnapshotOptions are the inputs of `kubectl hami snapshot`.
type SnapshotOptions struct {
	readOptions
	Output string
	// Events keeps the events about the snapshot's pods (why-pending's and the UI's FailedScheduling and the rest).
	Events bool
}

func newSnapshotCommand(read *readFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &SnapshotOptions{readOptions: readOptions{read: read, streams: streams}}
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save the HAMi-relevant objects (nodes, pods, resourcequotas, HAMi's device ConfigMap, the pods' events) as one List",
		Example: `  kubectl hami snapshot > cluster.yaml
  kubectl hami why-pending train-7 --snapshot cluster.yaml
  kubectl hami snapshot --events=false > cluster.yaml`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().BoolVar(&o.Events, "events", true, "keep the events about the snapshot's pods (FailedScheduling and the rest why-pending shows); --events=false leaves them out, for a smaller file")
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
	switch {
	case !o.Events:
		s.Events = nil
	case o.read.client != nil:
		if err := addPodEvents(ctx, o.read.client, s); err != nil {
			return err
		}
	}
	format := o.Output
	if format == "" {
		format = "yaml"
	}
	return s.WriteList(o.streams.Out, format)
}

// addPodEvents reads the events about the snapshot's pods, as why-pending reads one pod's live: by the pod's
// namespace and name (an event outlives a pod of the same name by up to an hour, as it does live). A snapshot
// read without them would say "no FailedScheduling event" where the cluster has one, so a failed read fails
// the command.
func addPodEvents(ctx context.Context, cs kubernetes.Interface, s *snapshot.Snapshot) error {
	pods := make(map[string]bool, s.Pods.Len())
	for ns, name := range s.Pods.Names() {
		pods[ns+"/"+name] = true
	}
	opts := metav1.ListOptions{Limit: 500, FieldSelector: fields.OneTermEqualSelector("involvedObject.kind", "Pod").String()}
	for {
		evs, err := cs.CoreV1().Events(metav1.NamespaceAll).List(ctx, opts)
		if err != nil {
			if apierrors.IsForbidden(err) {
				return fmt.Errorf("cannot list the pods' events: %w (the ClusterRole %s may list events; --events=false writes the snapshot without them)", err, readerRole)
			}
			return fmt.Errorf("cannot list the pods' events: %w (--events=false writes the snapshot without them)", err)
		}
		for i := range evs.Items {
			e := &evs.Items[i]
			if !pods[e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name] {
				continue
			}
			e.ManagedFields = nil // noise, as the snapshot strips it from every object
			s.Events = append(s.Events, e)
		}
		if evs.Continue == "" {
			return nil
		}
		opts.Continue = evs.Continue
	}
}
