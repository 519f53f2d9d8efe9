package agent

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
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
