package deviceplugin

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// maxAllocateAttempts bounds the retries when the pod changes between reading and writing it.
const maxAllocateAttempts = 5

// Allocate gives each container kubelet asks about the next GPUs the scheduler chose for the pod being admitted.
// Kubelet's device IDs only count GPUs: which virtual devices it picked does not matter.
func (p *Plugin) Allocate(ctx context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	p.allocMu.Lock()
	defer p.allocMu.Unlock()
	out := &pluginapi.AllocateResponse{}
	for _, cr := range req.GetContainerRequests() {
		resp, err := p.allocateContainer(ctx, len(cr.GetDevicesIds()))
		if err != nil {
			p.log.Warn("allocate failed", "err", err)
			return nil, status.Error(codes.FailedPrecondition, err.Error())
		}
		out.ContainerResponses = append(out.ContainerResponses, resp)
	}
	return out, nil
}

// allocateContainer takes the pending pod's next entry for a container that kubelet gives count devices. Any
// failure after the pod is found marks it failed and releases its node lock.
func (p *Plugin) allocateContainer(ctx context.Context, count int) (*pluginapi.ContainerAllocateResponse, error) {
	for attempt := 1; ; attempt++ {
		pod, err := p.pendingPod(ctx, count)
		if err != nil {
			return nil, fmt.Errorf("node %s: %w", p.opts.NodeName, err)
		}
		t, err := takeNextEntry(pod)
		if err == nil && count != len(t.devices) {
			err = fmt.Errorf("kubelet allocates %d %s but entry %d of %s has %d GPUs", count, p.opts.ResourceName, t.index,
				codec.PodToAllocateAnnotation, len(t.devices))
		}
		mig := false
		if err == nil {
			mig, err = checkDevices(t.devices, p.src.Devices())
		}
		if err == nil && mig && p.opts.Mig == nil {
			err = fmt.Errorf("GPU %s is in MIG mode, and this agent's GPU source cannot create MIG instances (a binary without NVML)", t.devices[0].UUID)
		}
		var resp *pluginapi.ContainerAllocateResponse
		var mt migTake
		if err == nil {
			ctr := entryContainer(pod, t.entries, t.index, p.opts.ResourceName)
			extra := map[string]string{}
			if mig {
				if mt, err = p.realizeMig(ctx, pod, ctr, t); err == nil {
					resp = migResponse(mt.uuids)
					extra[codec.PodMigAllocationsAnnotation] = mt.value
				}
			} else {
				resp = p.containerResponse(pod, ctr, t.index, t.devices)
			}
			if err == nil {
				err = p.writeBack(ctx, pod, t, extra)
			}
			if err != nil && !errors.Is(err, errConflict) {
				// A pod that changed keeps what was created: the next attempt finds it held by the pod.
				p.rollbackMig(mt.created)
			}
		}
		if errors.Is(err, errConflict) && attempt < maxAllocateAttempts {
			continue
		}
		if err != nil {
			p.markFailed(ctx, pod)
			return nil, fmt.Errorf("node %s: pod %s/%s: %w; %s=%s", p.opts.NodeName, pod.Namespace, pod.Name, err,
				codec.PodBindPhaseAnnotation, codec.BindPhaseFailed)
		}
		p.log.Info("allocated", "pod", pod.Namespace+"/"+pod.Name, "entry", t.index, "gpus", resp.Envs[EnvVisibleDevices], "last", t.last)
		if t.last {
			p.releaseLock(ctx, pod)
		}
		return resp, nil
	}
}
