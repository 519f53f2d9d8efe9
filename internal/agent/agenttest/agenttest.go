// Package agenttest holds the helpers the agent's tests share: Nodes and pods on a real API server
// (internal/testenv), decoding a Node with the engine, scraping Prometheus text, a test logger.
package agenttest

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// Logger logs through t.Log until the test ends (later lines are dropped: t.Log would panic).
func Logger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.done.Store(true) })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    testing.TB
	done atomic.Bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	if !w.done.Load() {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// CreateNode creates a Node with these annotations.
func CreateNode(t testing.TB, env *testenv.Env, name string, annotations map[string]string) *corev1.Node {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: maps.Clone(annotations)}}
	out, err := env.Client.CoreV1().Nodes().Create(context.Background(), n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CreatePod creates a one-container pod bound to node.
func CreatePod(t testing.TB, env *testenv.Env, ns, name, node string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "main", Image: "example.invalid/main"}}},
	}
	out, err := env.Client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// GetNode reads a Node.
func GetNode(t testing.TB, env *testenv.Env, name string) *corev1.Node {
	t.Helper()
	n, err := env.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// PatchAnnotations merge-patches a Node's annotations as an administrator.
func PatchAnnotations(t testing.TB, env *testenv.Env, node string, annos map[string]string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annos}})
	if _, err := env.Client.CoreV1().Nodes().Patch(context.Background(), node, "application/merge-patch+json", body, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// DecodeNode reads a Node the way the scheduler does: through the engine.
func DecodeNode(t testing.TB, n *corev1.Node) *engine.Node {
	t.Helper()
	return DecodeNodeAs(t, n, engine.DefaultHAMiVersion)
}

// DecodeNodeAs reads a Node the way the scheduler of the given HAMi version does (the legacy text form is for
// v2.7 and earlier).
func DecodeNodeAs(t testing.TB, n *corev1.Node, hamiVersion string) *engine.Node {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.HAMiVersion = hamiVersion
	c := engine.NewCluster(cfg)
	if probs := c.SetNode(n); len(probs) > 0 {
		t.Fatalf("the engine reports problems with Node %s: %+v", n.Name, probs)
	}
	en := c.Node(n.Name)
	if !en.Registered {
		t.Fatalf("Node %s is not registered: %s", n.Name, en.RegisterError)
	}
	return en
}

// RegisteredGPUs decodes a Node's GPUs with the engine; nil while it has no registration.
func RegisteredGPUs(t testing.TB, env *testenv.Env, name string) []engine.GPU {
	t.Helper()
	n := GetNode(t, env, name)
	if _, ok := n.Annotations[codec.NodeRegisterAnnotation]; !ok {
		return nil
	}
	return DecodeNode(t, n).GPUs
}

// WaitFor polls cond every 20 ms and fails the test after timeout.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ParseMetrics parses Prometheus text exposition.
func ParseMetrics(t testing.TB, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("metrics do not parse: %v\n%s", err, body)
	}
	return fams
}

// MetricValue finds the gauge or counter with exactly these labels.
func MetricValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		// An empty label value is the same as no label.
		want := maps.Clone(labels)
		empty := func(_, v string) bool { return v == "" }
		maps.DeleteFunc(want, empty)
		maps.DeleteFunc(got, empty)
		if !maps.Equal(got, want) {
			continue
		}
		if m.Gauge != nil {
			return m.GetGauge().GetValue(), true
		}
		return m.GetCounter().GetValue(), true
	}
	return 0, false
}

// JSONString renders v as JSON for messages.
func JSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// AgentPodClient creates the agent's pod on node (ServiceAccount kubectl-hami-agent in kube-system, as the
// DaemonSet runs it) and returns a client authenticated by a token bound to that pod: what the RBAC tests
// need to act as the agent.
func AgentPodClient(t testing.TB, env *testenv.Env, node string) kubernetes.Interface {
	t.Helper()
	ctx := context.Background()
	pod, err := env.Client.CoreV1().Pods("kube-system").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubectl-hami-agent-" + strings.TrimPrefix(node, "gpu-")},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "kubectl-hami-agent",
			Containers: []corev1.Container{{Name: "agent", Image: "example.invalid/agent"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := env.Client.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "kubectl-hami-agent", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.BearerToken = tok.Status.Token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
