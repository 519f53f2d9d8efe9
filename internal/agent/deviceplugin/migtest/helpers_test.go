//go:build linux && cgo

package migtest

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin/kubelettest"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

const testNamespace = "default"

func init() { agent.RegisterDevicePlugin(deviceplugin.ForAgent) }

var waitFor = kubelettest.WaitFor

// liveExtender is the real scheduler extender on the test's API server.
type liveExtender struct {
	state   *extender.State
	handler http.Handler
}

func startExtender(t *testing.T, env *testenv.Env) *liveExtender {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	state := extender.NewState(engine.DefaultConfig())
	srv := extender.NewServer(state, env.Client, extender.DefaultOptions(), agenttest.Logger(t), time.Now)
	f, err := extender.StartInformers(ctx, env.Client, state, time.Now)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); f.Shutdown() })
	return &liveExtender{state: state, handler: srv.Handler()}
}

// bind asks the extender to bind the pod to node, once it sees the node's GPUs served by kubelet.
func (x *liveExtender) bind(t *testing.T, pod *corev1.Pod, node string) {
	t.Helper()
	waitFor(t, 20*time.Second, "the extender to see node "+node+" with allocatable GPUs", func() bool {
		ok := false
		x.state.Read(func(c *engine.Cluster) {
			n := c.Node(node)
			ok = n != nil && n.Registered && n.AllocatableGPUs > 0
		})
		return ok
	})
	body, _ := json.Marshal(extenderv1.ExtenderBindingArgs{PodName: pod.Name, PodNamespace: pod.Namespace, PodUID: pod.UID, Node: node})
	rec := httptest.NewRecorder()
	x.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/bind", bytes.NewReader(body)))
	var res extenderv1.ExtenderBindingResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("bind: HTTP %d %s: %v", rec.Code, rec.Body, err)
	}
	if res.Error != "" {
		t.Fatalf("the extender cannot bind %s to %s: %s", pod.Name, node, res.Error)
	}
}

// node is the API side of a test node: its pods and its Node.
type node struct {
	t    *testing.T
	env  *testenv.Env
	name string
}

// ctrSpec is one container of a test pod; gpus 0 asks for nothing.
type ctrSpec struct {
	name      string
	gpus, mem int64
}

func (n *node) createPod(name string, apps []ctrSpec) *corev1.Pod {
	n.t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name}}
	for _, s := range apps {
		c := corev1.Container{Name: s.name, Image: "registry.k8s.io/pause:3.10"}
		if s.gpus > 0 {
			c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(s.gpus, resource.DecimalSI),
				"nvidia.com/gpumem": *resource.NewQuantity(s.mem, resource.DecimalSI)}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	out, err := n.env.Client.CoreV1().Pods(testNamespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	return out
}

func (n *node) pod(name string) *corev1.Pod {
	n.t.Helper()
	p, err := n.env.Client.CoreV1().Pods(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		n.t.Fatal(err)
	}
	return p
}

func (n *node) deletePod(name string) {
	n.t.Helper()
	zero := int64(0)
	if err := n.env.Client.CoreV1().Pods(testNamespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) patchPod(name string, annos map[string]any) {
	n.t.Helper()
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annos}})
	if _, err := n.env.Client.CoreV1().Pods(testNamespace).Patch(context.Background(), name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		n.t.Fatal(err)
	}
}

// lock is the Node's hami.io/mutex.lock, "" when there is none.
func (n *node) lock() string {
	return agenttest.GetNode(n.t, n.env, n.name).Annotations[codec.NodeLockAnnotation]
}

// lockOwner is the pod named by the node lock.
func (n *node) lockOwner() string {
	n.t.Helper()
	raw := n.lock()
	if raw == "" {
		return ""
	}
	l, err := codec.ParseNodeLock(raw)
	if err != nil {
		n.t.Fatalf("node %s: lock %q: %v", n.name, raw, err)
	}
	return l.Namespace + "/" + l.Pod
}
