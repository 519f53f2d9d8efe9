package snapshot

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// DefaultDeviceConfigMap is where HAMi's chart keeps its device configuration.
const DefaultDeviceConfigMap = "kube-system/hami-scheduler-device"

// LiveOptions say what to read from the API server.
type LiveOptions struct {
	// DeviceConfigMap is namespace/name of HAMi's device ConfigMap; empty skips it.
	DeviceConfigMap string
	// Server names the API server in errors.
	Server string
	// PageSize bounds each list call (0: 500).
	PageSize int64
	// Leases are the names of the scheduler leader Leases to look for, in every namespace (one list by name
	// each: the node heartbeats of kube-node-lease are not read).
	Leases []string
}

// Live reads nodes, pods, resourcequotas and the HAMi device ConfigMap from the cluster.
func Live(ctx context.Context, cs kubernetes.Interface, o LiveOptions) (*Snapshot, error) {
	s := &Snapshot{Source: "cluster " + o.Server}
	limit := o.PageSize
	if limit <= 0 {
		limit = 500
	}
	wrap := func(what string, err error) error {
		if apierrors.IsForbidden(err) {
			// A namespace-only role is the usual cause: the commands read the whole cluster's GPU state.
			return fmt.Errorf("cannot list %s from the cluster at %s: %w; the read commands list nodes, pods and "+
				"resourcequotas in all namespaces: bind the ClusterRole kubectl-hami-reader (docs/install.md, "+
				"\"What the read commands need\") to your user or group", what, o.Server, err)
		}
		return fmt.Errorf("cannot list %s from the cluster at %s: %w", what, o.Server, err)
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, wrap("nodes", err)
	}
	for i := range nodes.Items {
		stripNoise(&nodes.Items[i])
		s.Nodes = append(s.Nodes, &nodes.Items[i])
	}
	opts := metav1.ListOptions{Limit: limit}
	for {
		pods, err := cs.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return nil, wrap("pods", err)
		}
		for i := range pods.Items {
			stripNoise(&pods.Items[i])
			s.Pods.Add(&pods.Items[i])
		}
		if pods.Continue == "" {
			break
		}
		opts.Continue = pods.Continue
	}
	quotas, err := cs.CoreV1().ResourceQuotas("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, wrap("resourcequotas", err)
	}
	for i := range quotas.Items {
		stripNoise(&quotas.Items[i])
		s.Quotas = append(s.Quotas, &quotas.Items[i])
	}
	if ns, name, ok := strings.Cut(o.DeviceConfigMap, "/"); ok {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			stripNoise(cm)
			s.ConfigMaps = append(s.ConfigMaps, cm)
		case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
			// No HAMi device ConfigMap (or no right to read it): HAMi's defaults apply.
		default:
			return nil, fmt.Errorf("cannot read ConfigMap %s from the cluster at %s: %w", o.DeviceConfigMap, o.Server, err)
		}
	}
	if err := readLeases(ctx, cs, s, o.Leases); err != nil {
		return nil, fmt.Errorf("cannot list leases from the cluster at %s: %w", o.Server, err)
	}
	if err := readPreemption(ctx, cs, s); err != nil {
		return nil, fmt.Errorf("cannot read preemption's objects from the cluster at %s: %w", o.Server, err)
	}
	return s, nil
}

// readPreemption reads PriorityClasses and PodDisruptionBudgets, what preemption needs beside the pods.
// Without the right to list them (a reader role from before preemption) the snapshot reads as a cluster
// without them: pods keep the spec.priority admission wrote, and no budget protects a victim.
func readPreemption(ctx context.Context, cs kubernetes.Interface, s *Snapshot) error {
	pcs, err := cs.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("priorityclasses: %w", err)
	default:
		for i := range pcs.Items {
			stripNoise(&pcs.Items[i])
			s.PriorityClasses = append(s.PriorityClasses, &pcs.Items[i])
		}
	}
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("poddisruptionbudgets: %w", err)
	default:
		for i := range pdbs.Items {
			stripNoise(&pdbs.Items[i])
			s.PDBs = append(s.PDBs, &pdbs.Items[i])
		}
	}
	return nil
}

// readLeases reads the Leases of these names; without the right to (Forbidden) the snapshot cannot tell.
func readLeases(ctx context.Context, cs kubernetes.Interface, s *Snapshot, names []string) error {
	if len(names) == 0 {
		return nil
	}
	for _, name := range names {
		l, err := cs.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		for i := range l.Items {
			stripNoise(&l.Items[i])
			s.Leases = append(s.Leases, &l.Items[i])
		}
	}
	s.LeasesRead = true
	return nil
}

// AddPodEvents reads the events about one pod into the snapshot.
func AddPodEvents(ctx context.Context, cs kubernetes.Interface, s *Snapshot, namespace, name string) error {
	sel := fields.Set{"involvedObject.name": name, "involvedObject.namespace": namespace, "involvedObject.kind": "Pod"}.AsSelector().String()
	evs, err := cs.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return fmt.Errorf("cannot list events of pod %s/%s: %w", namespace, name, err)
	}
	for i := range evs.Items {
		s.Events = append(s.Events, &evs.Items[i])
	}
	return nil
}
