package deviceplugin_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest/manifests"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestDeployDevicePluginRBACOnAPIServer applies the overlay and allocates a bound pod with the ServiceAccount token
// of the agent's pod: the RBAC covers everything Allocate does (read the lock and the pod, consume the entry, set
// bind-phase, release the lock), and the overlay's admission policies allow it on the agent's own node.
func TestDeployDevicePluginRBACOnAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	manifests.WaitNamespace(t, env.Client, "kube-system")
	dyn, mapper := manifests.Applier(t, env.Config)
	for _, u := range manifests.Kustomize(t, "../../../deploy/agent/device-plugin") {
		if err := manifests.Apply(ctx, dyn, mapper, u); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	agenttest.CreateNode(t, env, "gpu-a", nil)
	agenttest.CreateNode(t, env, "gpu-b", nil)
	sa := agenttest.AgentPodClient(t, env, "gpu-a")
	// The overlay's admission policies (deploy/agent/admission) hold the agent to gpu-a and its pods: wait until the
	// API server enforces them, so that Allocate below runs under them.
	other := agenttest.CreatePod(t, env, "default", "elsewhere", "gpu-b")
	agenttest.WaitFor(t, 30*time.Second, "the agent's pod policy refusing another node's pod", func() bool {
		_, err := sa.CoreV1().Pods("default").Patch(ctx, other.Name, types.MergePatchType,
			[]byte(`{"metadata":{"annotations":{"hami.io/bind-phase":"failed"}}}`), metav1.PatchOptions{})
		return apierrors.IsForbidden(err)
	})

	o := agent.DefaultOptions()
	o.NodeName, o.Listen, o.ConfigMap, o.PodLookup, o.Log = "gpu-a", "", "", false, agenttest.Logger(t)
	a, err := agent.New(newGPUSource("t4", 2, 15360), sa, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RegisterOnce(ctx); err != nil {
		t.Fatal(err)
	}
	dpOpts := deviceplugin.DefaultOptions()
	dpOpts.NodeName, dpOpts.HamiCoreDir, dpOpts.Log = "gpu-a", t.TempDir(), agenttest.Logger(t)
	p, err := deviceplugin.New(a, sa, dpOpts)
	if err != nil {
		t.Fatal(err)
	}

	// A pod as the extender leaves it after bind: annotations, spec.nodeName, and the node lock.
	pod := agenttest.CreatePod(t, env, "default", "job", "gpu-a")
	annos := map[string]string{
		codec.PodNodeAnnotation: "gpu-a", codec.PodBindPhaseAnnotation: "allocating",
		codec.PodToAllocateAnnotation: "GPU-t4-0,NVIDIA,3000,25:;", codec.PodAllocatedAnnotation: "GPU-t4-0,NVIDIA,3000,25:;",
	}
	pod.Annotations = annos
	if _, err := env.Client.CoreV1().Pods("default").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	agenttest.PatchAnnotations(t, env, "gpu-a", map[string]string{codec.NodeLockAnnotation: codec.FormatNodeLock(codec.NodeLock{
		Time: time.Now().UTC().Truncate(time.Second), Namespace: "default", Pod: "job"})})

	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"GPU-t4-0-3"}}}})
	if err != nil {
		t.Fatalf("Allocate with the overlay's RBAC: %v", err)
	}
	if got := resp.ContainerResponses[0].Envs["CUDA_DEVICE_MEMORY_LIMIT_0"]; got != "3000m" {
		t.Errorf("memory limit %q", got)
	}
	after, err := env.Client.CoreV1().Pods("default").Get(ctx, "job", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Annotations[codec.PodBindPhaseAnnotation] != "success" || after.Annotations[codec.PodToAllocateAnnotation] != ";" {
		t.Errorf("pod annotations after Allocate: %v", after.Annotations)
	}
	if l, ok := agenttest.GetNode(t, env, "gpu-a").Annotations[codec.NodeLockAnnotation]; ok {
		t.Errorf("the node lock %q was not released", l)
	}
}
