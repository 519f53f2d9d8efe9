package agent

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest"
	"github.com/kubectl-hami/kubectl-hami/internal/agent/agenttest/manifests"
	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

const deployDir = "../../deploy/agent"

var (
	kustomize     = manifests.Kustomize
	waitNamespace = manifests.WaitNamespace
	applier       = manifests.Applier
	apply         = manifests.Apply
)

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func agentContainer(t *testing.T, objs []*unstructured.Unstructured) corev1.Container {
	t.Helper()
	u := find(objs, "DaemonSet", "kubectl-hami-agent")
	if u == nil {
		t.Fatal("no DaemonSet kubectl-hami-agent")
	}
	var ds struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	j, _ := u.MarshalJSON()
	if err := yaml.Unmarshal(j, &ds); err != nil {
		t.Fatal(err)
	}
	for _, c := range ds.Spec.Template.Spec.Containers {
		if c.Name == "agent" {
			return c
		}
	}
	t.Fatal("no container agent")
	return corev1.Container{}
}

// TestDeployManifestsMatchTheCommand checks the DaemonSet against the command: every argument and HAMI_AGENT_*
// variable is a flag of `kubectl hami agent` with a valid value, the probes hit the agent's paths on the port it
// listens on, and the observe overlay switches the mode and drops the Node permissions.
func TestDeployManifestsMatchTheCommand(t *testing.T) {
	full := kustomize(t, deployDir)
	c := agentContainer(t, full)
	if len(c.Args) == 0 || c.Args[0] != "agent" {
		t.Fatalf("args %v do not start with the agent subcommand", c.Args)
	}
	flags := NewCommandFlags()
	// Arguments: $(POD_NAMESPACE) is expanded by kubelet.
	args := make([]string, 0, len(c.Args)-1)
	for _, a := range c.Args[1:] {
		args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", "kube-system"))
	}
	if err := flags.FlagSet().Parse(args); err != nil {
		t.Fatalf("the DaemonSet's arguments do not parse: %v", err)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			if e.Name == "NODE_NAME" && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
				env[e.Name] = "gpu-1"
			}
			continue
		}
		env[e.Name] = e.Value
		if name, ok := strings.CutPrefix(e.Name, EnvPrefix); ok {
			flag := strings.ToLower(strings.ReplaceAll(name, "_", "-"))
			if flags.FlagSet().Lookup(flag) == nil {
				t.Errorf("env %s names no flag (--%s)", e.Name, flag)
			}
		}
	}
	if env["NODE_NAME"] == "" {
		t.Errorf("NODE_NAME does not come from spec.nodeName")
	}
	if err := flags.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	o, n, err := flags.Options("")
	if err != nil {
		t.Fatalf("the DaemonSet's settings are invalid: %v", err)
	}
	if o.Mode != RunFull || o.NodeName != "gpu-1" || o.ConfigMap != "kube-system/hami-device-plugin" || o.ProcRoot != "/host/proc" || n.SysRoot != "/host/sys" {
		t.Errorf("options %+v %+v", o, n)
	}
	mounts := map[string]bool{}
	for _, m := range c.VolumeMounts {
		mounts[m.MountPath] = m.ReadOnly
	}
	for _, p := range []string{o.ProcRoot, n.SysRoot} {
		if ro, ok := mounts[p]; !ok || !ro {
			t.Errorf("%s is not mounted read-only", p)
		}
	}
	if len(c.Ports) != 1 || !strings.HasSuffix(o.Listen, ":"+strconv.Itoa(int(c.Ports[0].ContainerPort))) {
		t.Errorf("ports %+v, listen %s", c.Ports, o.Listen)
	}
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("probes %s, %s", c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
	svc := find(full, "Service", "kubectl-hami-agent")
	if port, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports"); len(port) != 1 || port[0].(map[string]any)["targetPort"] != "metrics" {
		t.Errorf("Service ports %v", port)
	}

	observe := kustomize(t, filepath.Join(deployDir, "observe"))
	oc := agentContainer(t, observe)
	for _, e := range oc.Env {
		if e.Name == EnvName("mode") && e.Value != RunObserve {
			t.Errorf("observe overlay: %s=%s", e.Name, e.Value)
		}
	}
	if len(oc.Env) != len(c.Env) {
		t.Errorf("observe overlay changed the environment: %d variables, want %d", len(oc.Env), len(c.Env))
	}
	rules, _, _ := unstructured.NestedSlice(find(observe, "ClusterRole", "kubectl-hami-agent").Object, "rules")
	for _, r := range rules {
		if res, _ := r.(map[string]any)["resources"].([]any); slices.Contains(res, any("nodes")) {
			t.Errorf("observe overlay keeps a Node rule: %v", r)
		}
	}
}

// TestDeployRBACOnAPIServer applies deploy/agent (its node restriction policies included) to a real API server and runs the
// agent with the ServiceAccount token of a pod on gpu-a: it registers gpu-a; the RBAC lets it patch gpu-b, which
// the policy denies; it cannot touch a Node's labels; it can read the pods of its node and HAMi's ConfigMap.
func TestDeployRBACOnAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	waitNamespace(t, env.Client, "kube-system")
	dyn, mapper := applier(t, env.Config)
	// The default kustomization, admission policies included, as `kubectl apply -k deploy/agent` sends it.
	objs := kustomize(t, deployDir)
	for _, u := range objs {
		if err := apply(ctx, dyn, mapper, u); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	for _, name := range []string{"gpu-a", "gpu-b"} {
		createNode(t, env, name, map[string]string{"x": "y"})
	}
	sa := agenttest.AgentPodClient(t, env, "gpu-a")

	o := DefaultOptions()
	o.NodeName, o.Listen, o.ConfigMap, o.Log = "gpu-a", "", "kube-system/hami-device-plugin", testLogger(t)
	a, err := New(twoT4s(), sa, o)
	if err != nil {
		t.Fatal(err)
	}
	if patched, err := a.RegisterOnce(ctx); err != nil || !patched {
		t.Fatalf("registering gpu-a with the agent's ServiceAccount: %v, %v", patched, err)
	}
	if _, err := sa.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=gpu-a"}); err != nil {
		t.Errorf("listing the node's pods: %v", err)
	}

	// RBAC allows patching any Node; the policy (once the API server has loaded it) only the agent's own.
	other := []byte(`{"metadata":{"annotations":{"` + codec.NodeRegisterAnnotation + `":"[]"}}}`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := sa.CoreV1().Nodes().Patch(ctx, "gpu-b", types.MergePatchType, other, metav1.PatchOptions{})
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			t.Logf("patching gpu-b: %v", err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent of gpu-a could still patch gpu-b: %v", err)
		}
		// Undo, and retry once the policy is active.
		_, _ = env.Client.CoreV1().Nodes().Patch(ctx, "gpu-b", types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+codec.NodeRegisterAnnotation+`":null}}}`), metav1.PatchOptions{})
		time.Sleep(200 * time.Millisecond)
	}
	if _, ok := getNode(t, env, "gpu-b").Annotations[codec.NodeRegisterAnnotation]; ok {
		t.Errorf("gpu-b carries a registration")
	}
	labels := []byte(`{"metadata":{"labels":{"gpu":"on"}}}`)
	if _, err := sa.CoreV1().Nodes().Patch(ctx, "gpu-a", types.MergePatchType, labels, metav1.PatchOptions{}); err == nil {
		t.Errorf("the agent could change its Node's labels")
	}
	// With the policy active the agent still registers its own Node.
	a.HandleEvent(XIDEvent{UUID: "GPU-t4-1", XID: 79})
	if patched, err := a.RegisterOnce(ctx); err != nil || !patched {
		t.Errorf("registering gpu-a under the policy: %v, %v", patched, err)
	}
	if devs := registrationOf(t, getNode(t, env, "gpu-a")); len(devs) != 2 || devs[1].Health {
		t.Errorf("gpu-a registration %+v", devs)
	}
	// Other verbs are not granted.
	if _, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Nodes: %v, want Forbidden", err)
	}
	if _, err := sa.CoreV1().ConfigMaps("kube-system").Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("reading another ConfigMap: %v, want Forbidden", err)
	}
}

func registrationOf(t *testing.T, n *corev1.Node) []codec.DeviceInfo {
	t.Helper()
	devs, err := codec.ParseNodeRegister(n.Annotations[codec.NodeRegisterAnnotation])
	if err != nil {
		t.Fatal(err)
	}
	return devs
}

func readYAMLDocs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*unstructured.Unstructured
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out
}
