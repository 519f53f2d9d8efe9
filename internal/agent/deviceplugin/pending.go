package deviceplugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// errNoPendingPod: kubelet allocates, but no pod on this node waits for GPUs.
var errNoPendingPod = errors.New("no pod waits for GPUs on this node: no pod holds " + codec.NodeLockAnnotation +
	" and none is in " + codec.PodBindPhaseAnnotation + "=" + codec.BindPhaseAllocating + " here (was it scheduled through the HAMi scheduler extender?)")

// errConflict: the pod changed between reading and writing its annotations; the Allocate starts over.
var errConflict = errors.New("the pod changed while it was allocated")

// pendingPod finds the pod kubelet is admitting, for a container that kubelet gives count devices:
//   - the node lock's owner when it waits for GPUs on this node: a scheduler that speaks HAMi's protocol binds
//     to the node one pod at a time under it (kubectl-hami's extender writes no lock on nodes where this agent
//     registered as the device plugin, see codec.NodeAllocatorAnnotation);
//   - else, among the pods on this node in bind-phase allocating, those whose next entry has count GPUs (the
//     Allocate request carries nothing else of the pod: only the device IDs kubelet picked);
//   - of several, the first that kubelet admits. Kubelet admits one pod at a time, in the order its watch of the
//     node's pods delivers them (one pod per update once it runs; a batch at its start is sorted by creation),
//     and that order is the one the plugin's own watch sees them bound here (arrivals); a pod bound before the
//     plugin started comes first, then by hami.io/bind-time, creation and name.
func (p *Plugin) pendingPod(ctx context.Context, count int) (*corev1.Pod, error) {
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
	var best, bestFits *corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		if !p.waitsHere(pod) {
			continue
		}
		if best == nil || p.admittedBefore(pod, best) {
			best = pod
		}
		if t, err := takeNextEntry(pod); err == nil && len(t.devices) == count && (bestFits == nil || p.admittedBefore(pod, bestFits)) {
			bestFits = pod
		}
	}
	switch {
	case bestFits != nil:
		return bestFits, nil
	case best != nil:
		return best, nil // its entry does not fit: allocateContainer says so and marks it failed
	}
	return nil, errNoPendingPod
}

// admittedBefore reports whether kubelet admits pod a before pod b: a pod the plugin's watch saw bound here
// earlier comes first (one bound before the watch started counts as earliest, one it has not seen yet as
// latest); then waitedLonger.
func (p *Plugin) admittedBefore(a, b *corev1.Pod) bool {
	sa, sb := p.arrivals.seq(a.UID), p.arrivals.seq(b.UID)
	if sa != sb {
		return sa < sb
	}
	return waitedLonger(a, b)
}

// arrivals numbers the pods of this node in the order the plugin's watch first sees them bound here.
type arrivals struct {
	mu   sync.Mutex
	next uint64
	of   map[types.UID]uint64
}

// seq is the pod's arrival number: 0 when it was bound before the watch started, and after every pod the
// watch has seen when it has not seen this one yet (both watches deliver in the same order: one that lags
// kubelet's has seen every pod kubelet admitted before).
func (a *arrivals) seq(uid types.UID) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n, seen := a.of[uid]; seen {
		return n
	}
	return math.MaxUint64
}

func (a *arrivals) add(uid types.UID, initial bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.of == nil {
		a.of = map[types.UID]uint64{}
	}
	if _, seen := a.of[uid]; seen {
		return
	}
	if initial {
		a.of[uid] = 0
		return
	}
	a.next++
	a.of[uid] = a.next
}

func (a *arrivals) remove(uid types.UID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.of, uid)
}

// watchArrivals watches this node's pods (the same field selector as kubelet's own watch) until ctx ends and
// records their arrivals. A watch that starts over (a relist) leaves the pods it had numbered as they were.
func (p *Plugin) watchArrivals(ctx context.Context) {
	factory := informers.NewSharedInformerFactoryWithOptions(p.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName=" + p.opts.NodeName
	}))
	inf := factory.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if pod, ok := obj.(*corev1.Pod); ok {
				p.arrivals.add(pod.UID, initial)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				p.arrivals.remove(pod.UID)
			}
		},
	})
	factory.Start(ctx.Done())
	<-ctx.Done()
	factory.Shutdown()
}

// waitsHere reports whether the pod was bound to this node by the extender and waits for its GPUs.
func (p *Plugin) waitsHere(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodFailed && pod.Status.Phase != corev1.PodSucceeded &&
		pod.Annotations[codec.PodBindPhaseAnnotation] == codec.BindPhaseAllocating &&
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
