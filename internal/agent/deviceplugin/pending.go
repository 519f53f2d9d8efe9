package deviceplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
)

// errNoPendingPod: kubelet allocates, but no pod on this node waits for GPUs.
var errNoPendingPod = errors.New("no pod waits for GPUs on this node: no pod holds " + codec.NodeLockAnnotation +
	" and none is in " + codec.PodBindPhaseAnnotation + "=" + codec.BindPhaseAllocating + " here (was it scheduled through the HAMi scheduler extender?)")

// errConflict: the pod changed between reading and writing its annotations; the Allocate starts over.
var errConflict = errors.New("the pod changed while it was allocated")

// pendingPod finds the pod kubelet is admitting: the node lock's owner when it waits for GPUs on this node, else
// the pod on this node that has waited longest in bind-phase allocating.
func (p *Plugin) pendingPod(ctx context.Context) (*corev1.Pod, error) {
	node, err := p.client.CoreV1().Nodes().Get(ctx, p.opts.NodeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("cannot read the Node: %w", err)
	}
	if raw := node.Annotations[codec.NodeLockAnnotation]; raw != "" {
		l, err := codec.ParseNodeLock(raw)
		switch {
		case err != nil:
			p.log.Warn("ignoring an unreadable node lock", "err", err)
		case l.Pod != "":
			pod, err := p.client.CoreV1().Pods(l.Namespace).Get(ctx, l.Pod, metav1.GetOptions{})
			switch {
			case err == nil && p.waitsHere(pod):
				return pod, nil
			case err != nil && !apierrors.IsNotFound(err):
				return nil, fmt.Errorf("cannot read the node lock's owner %s/%s: %w", l.Namespace, l.Pod, err)
			}
		}
	}
	list, err := p.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + p.opts.NodeName})
	if err != nil {
		return nil, fmt.Errorf("cannot list the node's pods: %w", err)
	}
	var best *corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if p.waitsHere(pod) && (best == nil || waitedLonger(pod, best)) {
			best = pod
		}
	}
	if best == nil {
		return nil, errNoPendingPod
	}
	return best, nil
}

// waitsHere reports whether the pod was bound to this node by the extender and waits for its GPUs.
func (p *Plugin) waitsHere(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Annotations[codec.PodBindPhaseAnnotation] == codec.BindPhaseAllocating &&
		pod.Annotations[codec.PodNodeAnnotation] == p.opts.NodeName
}

// waitedLonger orders pods by hami.io/bind-time, then creation, then name.
func waitedLonger(a, b *corev1.Pod) bool {
	ta, _ := strconv.ParseInt(a.Annotations[codec.PodBindTimeAnnotation], 10, 64)
	tb, _ := strconv.ParseInt(b.Annotations[codec.PodBindTimeAnnotation], 10, 64)
	if ta != tb {
		return ta < tb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// entryTake is the next container entry of a pod's hami.io/vgpu-devices-to-allocate.
type entryTake struct {
	entries   codec.PodDevices // the annotation before the take
	index     int              // the entry taken
	devices   codec.ContainerDevices
	remaining string // the annotation after the take: that entry blanked
	last      bool   // no entry with GPUs is left after this one
}

// takeNextEntry finds the first entry that still has GPUs: entries are consumed in container order (init
// containers first), the order in which kubelet admits containers.
func takeNextEntry(pod *corev1.Pod) (entryTake, error) {
	raw, ok := pod.Annotations[codec.PodToAllocateAnnotation]
	if !ok {
		return entryTake{}, fmt.Errorf("has no %s annotation", codec.PodToAllocateAnnotation)
	}
	pd, err := codec.ParsePodDevices(codec.PodToAllocateAnnotation, raw)
	if err != nil {
		return entryTake{}, err
	}
	i := slices.IndexFunc(pd, func(cd codec.ContainerDevices) bool { return len(cd) > 0 })
	if i < 0 {
		return entryTake{}, fmt.Errorf("%s has no container entry left (already consumed: %q)", codec.PodToAllocateAnnotation, raw)
	}
	rest := slices.Clone(pd)
	rest[i] = nil
	return entryTake{
		entries:   pd,
		index:     i,
		devices:   pd[i],
		remaining: codec.FormatPodDevices(rest),
		last:      !slices.ContainsFunc(rest, func(cd codec.ContainerDevices) bool { return len(cd) > 0 }),
	}, nil
}

// writeBack stores the remaining entries, the extra annotations (the MIG runtime fields) and bind-phase=success
// after the last entry, in one patch on the condition that the pod did not change since it was read.
func (p *Plugin) writeBack(ctx context.Context, pod *corev1.Pod, t entryTake, extra map[string]string) error {
	annos := map[string]string{codec.PodToAllocateAnnotation: t.remaining}
	for k, v := range extra {
		annos[k] = v
	}
	if t.last {
		annos[codec.PodBindPhaseAnnotation] = codec.BindPhaseSuccess
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": pod.ResourceVersion, "annotations": annos}})
	if err != nil {
		return err
	}
	_, err = p.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	switch {
	case apierrors.IsConflict(err):
		return errConflict
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", codec.PodToAllocateAnnotation, err)
	}
	return nil
}

// markFailed sets bind-phase=failed and releases the node lock if the pod holds it, so that the node takes the
// next pod instead of stalling until the lock expires.
func (p *Plugin) markFailed(ctx context.Context, pod *corev1.Pod) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{codec.PodBindPhaseAnnotation: codec.BindPhaseFailed}}})
	if _, err := p.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		p.log.Warn("cannot mark the pod's bind failed", "pod", pod.Namespace+"/"+pod.Name, "err", err)
	}
	p.releaseLock(ctx, pod)
}

// releaseLock removes hami.io/mutex.lock from the Node when the pod holds it, retrying when another writer changed
// the Node in between.
func (p *Plugin) releaseLock(ctx context.Context, pod *corev1.Pod) {
	nodes := p.client.CoreV1().Nodes()
	for range 5 {
		n, err := nodes.Get(ctx, p.opts.NodeName, metav1.GetOptions{})
		if err != nil {
			p.log.Warn("cannot release the node lock", "err", err)
			return
		}
		l, err := codec.ParseNodeLock(n.Annotations[codec.NodeLockAnnotation])
		if err != nil || l.Namespace != pod.Namespace || l.Pod != pod.Name {
			return // not held by this pod (or not at all)
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": n.ResourceVersion, "annotations": map[string]any{codec.NodeLockAnnotation: nil}}})
		_, err = nodes.Patch(ctx, p.opts.NodeName, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) {
			p.log.Warn("cannot release the node lock", "err", err)
			return
		}
	}
	p.log.Warn("cannot release the node lock: the Node kept changing")
}
