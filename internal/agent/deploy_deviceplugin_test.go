package agent

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/agent/deviceplugin"
	"github.com/kubectl-hami/kubectl-hami/internal/engine/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

var devicePluginDeployDir = filepath.Join(deployDir, "device-plugin")

// TestDeployDevicePluginOverlay checks deploy/agent/device-plugin against the command: the device plugin is on,
// kubelet's folder and HAMi-core's folder are writable host mounts at the paths the flags name, the agent runs as
// root (kubelet's folder is root's), and the ClusterRole adds pods get and patch.
func TestDeployDevicePluginOverlay(t *testing.T) {
	objs := kustomize(t, devicePluginDeployDir)
	c := agentContainer(t, objs)
	flags := NewCommandFlags()
	if err := flags.FlagSet().Parse(strings.Fields(strings.ReplaceAll(strings.Join(c.Args[1:], " "), "$(POD_NAMESPACE)", "kube-system"))); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODE_NAME": "gpu-1"}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	if err := flags.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	o, _, err := flags.Options("")
	if err != nil {
		t.Fatalf("the overlay's settings are invalid: %v", err)
	}
	if o.DevicePlugin == nil || o.Mode != RunFull {
		t.Fatalf("the overlay does not turn the device plugin on in full mode: %+v", o)
	}
	spec := podSpecOf(t, objs)
	hostPaths := map[string]string{}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = v.HostPath.Path
		}
	}
	for _, dir := range []string{o.DevicePlugin.SocketDir, o.DevicePlugin.HamiCoreDir} {
		i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return filepath.Clean(m.MountPath) == filepath.Clean(dir) })
		if i < 0 || c.VolumeMounts[i].ReadOnly {
			t.Errorf("%s is not mounted writable", dir)
			continue
		}
		// The agent hands kubelet host paths: the mount must be the same path on the host.
		if hp := hostPaths[c.VolumeMounts[i].Name]; filepath.Clean(hp) != filepath.Clean(dir) {
			t.Errorf("%s comes from host path %q, want the same path", dir, hp)
		}
	}
	if sc := spec.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 || (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) {
		t.Errorf("the agent does not run as root: %+v", sc)
	}
	if !grants(find(objs, "ClusterRole", "kubectl-hami-agent"), "pods", "get", "patch", "list", "watch") ||
		!grants(find(objs, "ClusterRole", "kubectl-hami-agent"), "nodes", "get", "patch") {
		t.Errorf("the ClusterRole misses pods get/patch/list/watch or nodes get/patch")
	}
	base := agentContainer(t, kustomize(t, deployDir))
	if len(c.Env) != len(base.Env)+3 {
		t.Errorf("the overlay has %d variables, want the base's %d and 3 device plugin ones", len(c.Env), len(base.Env))
	}
}

func podSpecOf(t *testing.T, objs []*unstructured.Unstructured) corev1.PodSpec {
	t.Helper()
	var ds struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	j, _ := find(objs, "DaemonSet", "kubectl-hami-agent").MarshalJSON()
	if err := yaml.Unmarshal(j, &ds); err != nil {
		t.Fatal(err)
	}
	return ds.Spec.Template.Spec
}

// grants reports whether the role's rules allow every verb on the core resource.
func grants(role *unstructured.Unstructured, resource string, verbs ...string) bool {
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	var have []string
	for _, r := range rules {
		m, _ := r.(map[string]any)
		res, _ := m["resources"].([]any)
		if !slices.Contains(res, any(resource)) {
			continue
		}
		vs, _ := m["verbs"].([]any)
		for _, v := range vs {
			s, _ := v.(string)
			have = append(have, s)
		}
	}
	for _, v := range verbs {
		if !slices.Contains(have, v) {
			return false
		}
	}
	return true
}

// TestDeployDevicePluginRBACOnAPIServer applies the overlay and allocates a bound pod with the ServiceAccount token
// of the agent's pod: the RBAC covers everything Allocate does (read the lock and the pod, consume the entry, set
// bind-phase, release the lock).
func TestDeployDevicePluginRBACOnAPIServer(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	waitNamespace(t, env.Client, "kube-system")
	dyn, mapper := applier(t, env.Config)
	for _, u := range kustomize(t, devicePluginDeployDir) {
		if err := apply(ctx, dyn, mapper, u); err != nil {
			t.Fatalf("apply %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	createNode(t, env, "gpu-a", nil)
	agentPod, err := env.Client.CoreV1().Pods("kube-system").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kubectl-hami-agent-a"},
		Spec: corev1.PodSpec{NodeName: "gpu-a", ServiceAccountName: "kubectl-hami-agent",
			Containers: []corev1.Container{{Name: "agent", Image: "example.invalid/agent"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := env.Client.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "kubectl-hami-agent", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: agentPod.Name, UID: agentPod.UID}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.BearerToken = tok.Status.Token
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	o := DefaultOptions()
	o.NodeName, o.Listen, o.ConfigMap, o.PodLookup, o.Log = "gpu-a", "", "", false, testLogger(t)
	a, err := New(twoT4s(), sa, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.RegisterOnce(ctx); err != nil {
		t.Fatal(err)
	}
	dpOpts := deviceplugin.DefaultOptions()
	dpOpts.NodeName, dpOpts.HamiCoreDir, dpOpts.Log = "gpu-a", t.TempDir(), testLogger(t)
	p, err := deviceplugin.New(a, sa, dpOpts)
	if err != nil {
		t.Fatal(err)
	}

	// A pod as the extender leaves it after bind: annotations, spec.nodeName, and the node lock.
	pod := createPod(t, env, "default", "job", "gpu-a")
	annos := map[string]string{
		codec.PodNodeAnnotation: "gpu-a", codec.PodBindPhaseAnnotation: "allocating",
		codec.PodToAllocateAnnotation: "GPU-t4-0,NVIDIA,3000,25:;", codec.PodAllocatedAnnotation: "GPU-t4-0,NVIDIA,3000,25:;",
	}
	pod.Annotations = annos
	if _, err := env.Client.CoreV1().Pods("default").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patchAnnotations(t, env, "gpu-a", map[string]string{codec.NodeLockAnnotation: codec.FormatNodeLock(codec.NodeLock{
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
	if l, ok := getNode(t, env, "gpu-a").Annotations[codec.NodeLockAnnotation]; ok {
		t.Errorf("the node lock %q was not released", l)
	}
}
