package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/kubefit"
	"github.com/kubectl-hami/kubectl-hami/internal/preempt"
	"github.com/kubectl-hami/kubectl-hami/internal/query"
	"github.com/kubectl-hami/kubectl-hami/internal/render"
	"github.com/kubectl-hami/kubectl-hami/internal/resolve"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// WhyPendingOptions are the inputs of `kubectl hami why-pending POD`.
type WhyPendingOptions struct {
	readOptions

	Output    string
	Nodes     []string
	Namespace string
	Pod       string
}

func newWhyPendingCommand(read *readFlags, streams genericiooptions.IOStreams, now func() time.Time) *cobra.Command {
	o := &WhyPendingOptions{readOptions: readOptions{read: read, streams: streams, now: now}}
	cmd := &cobra.Command{
		Use:   "why-pending POD",
		Short: "Explain, gate by gate and node by node, why a GPU pod is not placed",
		Example: `  kubectl hami why-pending train-7 -n ml-research
  kubectl hami why-pending train-7 -o wide --node gpu-a100-01
  kubectl hami why-pending pretrain-2 -n ml-research --demo`,
		Args: cobra.ExactArgs(1),
		RunE: runCommand(o),
	}
	read.addFlags(cmd)
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "output format: wide, json or yaml")
	cmd.Flags().StringSliceVar(&o.Nodes, "node", nil, "show every gate for every GPU of these nodes")
	read.addAllNamespacesFlag(cmd, "find the pod in any namespace (its name must then be unique across namespaces)")
	return cmd
}

// Complete fills the options from the arguments and the kubeconfig.
func (o *WhyPendingOptions) Complete(_ *cobra.Command, args []string) error {
	pod, err := podName(args[0])
	if err != nil {
		return err
	}
	o.Pod = pod
	o.Namespace = o.read.namespace()
	return nil
}

// Validate checks flag combinations.
func (o *WhyPendingOptions) Validate() error {
	if err := o.read.validate(); err != nil {
		return err
	}
	return validateOutput(o.Output, "", "wide", "json", "yaml")
}

// WhyPending is the -o json|yaml form of the answer.
type WhyPending struct {
	APIVersion string `json:"apiVersion"` // kubectl-hami.io/v1alpha1
	Kind       string `json:"kind"`       // WhyPending
	Pod        string `json:"pod"`        // namespace/name
	Phase      string `json:"phase"`      // the pod's status.phase
	// Node and Allocation are set for a pod that already has a node: where it runs and the GPUs it holds.
	Node       string                `json:"node,omitempty"`
	Allocation *engine.PodAllocation `json:"allocation,omitempty"`
	// Verdict is the engine's answer for a pod without a node: every gate on every node, the fixes proven.
	Verdict *engine.Verdict `json:"verdict,omitempty"`
	// Kubernetes is kube-scheduler's own checks per node (resources, taints, selectors), before HAMi's gates.
	Kubernetes []kubefit.NodeResult `json:"kubernetes,omitempty"`
	// Waiting says why a pod that fits may still be Pending: scheduling gates, a nomination, no
	// FailedScheduling event with no scheduler of its name seen, its age.
	Waiting []string `json:"waiting,omitempty"`
	// Events are the pod's recent events (live clusters, or a snapshot that has them).
	Events []EventSummary `json:"events,omitempty"`
	// Problems are the input problems found while reading the cluster (object, field, message).
	Problems []engine.Problem `json:"problems,omitempty"`
	// Unbound are pods that hold GPUs on a node they are not bound to: HAMi counts them as used.
	Unbound []UnboundHolder `json:"unboundHolders,omitempty"`
	// Preemption is the preemption that would make the pod fit, or what its nomination waits for (preempt.go).
	Preemption *preempt.Answer `json:"preemption,omitempty"`
}

// UnboundHolder is a pod that holds GPUs by HAMi's annotations without being bound to their node.
type UnboundHolder = query.UnboundHolder

// namespaceOfPod is the namespace of the only pod called name (why-pending -A); several or none is an error that
// lists them, or the closest names in every namespace.
func namespaceOfPod(s *snapshot.Snapshot, name string) (string, error) {
	var found []string
	for ns, n := range s.Pods.Names() {
		if n == name {
			found = append(found, ns)
		}
	}
	sort.Strings(found)
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		var names []string
		for _, n := range s.Pods.Names() {
			names = append(names, n)
		}
		msg := fmt.Sprintf("pod %s not found in any namespace of %s", name, s.Source)
		var sugg []string
		for _, m := range resolve.Closest(name, names, resolve.DefaultSuggestions) {
			for ns, n := range s.Pods.Names() {
				if n == m {
					sugg = append(sugg, ns+"/"+n)
				}
			}
		}
		if len(sugg) > 0 {
			msg += "; " + resolve.DidYouMean(sugg)
		}
		return "", fmt.Errorf("%s", msg)
	}
	for i := range found {
		found[i] += "/" + name
	}
	return "", fmt.Errorf("pod %s is in %d namespaces (%s): name one with -n", name, len(found), strings.Join(found, ", "))
}

// EventSummary is an event as why-pending shows it.
type EventSummary struct {
	Reason  string    `json:"reason"`
	Type    string    `json:"type"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"last"`
	Message string    `json:"message"`
}

// Run explains the pod.
func (o *WhyPendingOptions) Run(ctx context.Context) error {
	s, err := o.read.load(ctx)
	if err != nil {
		return err
	}
	if o.Nodes, err = resolveNodes(s, o.Nodes); err != nil { // names.go
		return err
	}
	if o.read.allNamespaces {
		ns, err := namespaceOfPod(s, o.Pod)
		if err != nil {
			return err
		}
		o.Namespace = ns
	}
	pod := s.Pod(o.Namespace, o.Pod)
	if pod == nil {
		return podNotFound(s, o.Namespace, o.Pod)
	}
	eventsRead := true // a snapshot holds the events it has
	if o.read.client != nil {
		if err := snapshot.AddPodEvents(ctx, o.read.client, s, o.Namespace, o.Pod); err != nil {
			fmt.Fprintf(o.streams.ErrOut, "warning: %v\n", err)
			eventsRead = false // no FailedScheduling event then says nothing
		}
	}
	c, cfg := cluster(s, o.read, o.streams.ErrOut)
	structured := o.Output == "json" || o.Output == "yaml"
	a := query.Explain(c, query.ExplainInput{Pod: pod, Pods: s.Pods.Scan(), Events: s.EventsFor(o.Namespace, o.Pod), EventsRead: eventsRead,
		Leases: s.Leases, LeasesRead: s.LeasesRead, Quotas: s.Quotas, Now: o.now(), DetailNodes: o.Nodes, DetailAll: structured,
		KubeChecks: func(p *corev1.Pod) []kubefit.NodeResult { return query.KubeChecks(p, s.Nodes, s.PodsOn, cfg) }})
	if structured {
		obj := whyPendingObject(&a)
		if a.Node == "" {
			obj.Preemption = preemption(s, c, pod, a.Verdict, o.now())
		}
		return printObject(o.streams.Out, o.Output, obj)
	}
	if a.Node != "" {
		return render.WhyPending(o.streams.Out, &a, o.Output == "wide", o.Nodes)
	}
	pre := preemption(s, c, pod, a.Verdict, o.now())
	if err := render.WhyPending(o.streams.Out, &a, o.Output == "wide", o.Nodes); err != nil {
		return err
	}
	printPreemption(o.streams.Out, pre)
	return nil
}

// whyPendingObject is the -o json|yaml form of the answer.
func whyPendingObject(a *query.Explanation) WhyPending {
	out := WhyPending{APIVersion: APIVersion, Kind: "WhyPending", Pod: a.Pod.Namespace + "/" + a.Pod.Name, Phase: a.Phase,
		Node: a.Node, Allocation: a.Allocation, Verdict: a.Verdict, Kubernetes: a.Kube, Waiting: a.Waiting,
		Problems: a.Problems, Unbound: a.Unbound}
	for _, e := range a.Events {
		out.Events = append(out.Events, EventSummary{Reason: e.Reason, Type: e.Type, Count: e.Count, Last: query.EventTime(e), Message: e.Message})
	}
	return out
}

// kubeChecks runs the standard node constraints kube-scheduler applies before HAMi sees the pod, by node name.
func kubeChecks(s *snapshot.Snapshot, pod *corev1.Pod, cfg engine.Config) []kubefit.NodeResult {
	return query.KubeChecks(pod, s.Nodes, s.PodsOn, cfg)
}

// kubeQuotaUsed is Kubernetes' own ResourceQuota status.used of a namespace (query.KubeQuotaUsed).
func kubeQuotaUsed(s *snapshot.Snapshot, ns string) map[string]string {
	return query.KubeQuotaUsed(s.Quotas)[ns]
}
