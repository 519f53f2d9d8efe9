package deploy_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// forgedPlacement is issue 19's forged pod: placement annotations on a pod that never runs.
func forgedPlacement(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{
		"hami.io/vgpu-node":              "full-node",
		"hami.io/vgpu-devices-allocated": strings.Repeat("GPU-full-node-0,NVIDIA,4611686018427387904,0:", 3) + ";",
	}}, Spec: corev1.PodSpec{SchedulerName: "no-such-scheduler", Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10"}}}}
}

// TestAdmissionPoliciesOnAPIServer applies the placement and node-patch policies to a real kube-apiserver: a
// user may not create the forged pod nor add, change or remove placement annotations; the extender's
// ServiceAccount may; the extender may change a Node's lock but not its registration, labels or spec.
func TestAdmissionPoliciesOnAPIServer(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := t.Context()
	dyn, mapper := newApplier(t, env.Config)
	for _, file := range []string{"placement-annotations-policy.yaml", "node-patch-policy.yaml", "networkpolicy.yaml"} {
		docs, err := readDocuments(filepath.Join(baseDir, "policy", file))
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range docs {
			m, err := decodeManifest(doc)
			if err != nil {
				t.Fatalf("%s#%d: %v", file, i, err)
			}
			// The NetworkPolicies are only validated (server-side dry run): there is no CNI here.
			if err := apply(t, dyn, mapper, m, file == "networkpolicy.yaml"); err != nil {
				t.Fatalf("%s#%d: %v", file, i, err)
			}
		}
	}
	// Identities by impersonation, all in system:masters so that RBAC allows everything: only the policies decide.
	as := func(user string) kubernetes.Interface {
		cfg := rest.CopyConfig(env.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters", "system:authenticated"}}
		return kubernetes.NewForConfigOrDie(cfg)
	}
	user := as("alice")
	ext := as("system:serviceaccount:kube-system:kubectl-hami-extender")
	agent := as("system:serviceaccount:kube-system:kubectl-hami-agent")
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The API server loads policies asynchronously: retry the forged create until it is refused.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		_, err := user.CoreV1().Pods("team").Create(ctx, forgedPlacement("team", fmt.Sprintf("forged-%d", i)), metav1.CreateOptions{})
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			if !strings.Contains(err.Error(), "hami.io/vgpu-*") || !strings.Contains(err.Error(), "alice") {
				t.Errorf("refusal does not explain itself: %v", err)
			}
			t.Logf("forged pod refused: %v", err)
			break
		}
		if err != nil {
			t.Fatalf("creating the forged pod: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatal("a user could still create the forged pod after 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := ext.CoreV1().Pods("team").Create(ctx, forgedPlacement("team", "by-extender"), metav1.CreateOptions{}); err != nil {
		t.Errorf("the extender's ServiceAccount may not create a placed pod: %v", err)
	}

	plain := forgedPlacement("team", "plain")
	plain.Annotations = map[string]string{"team/owner": "alice"}
	if _, err := user.CoreV1().Pods("team").Create(ctx, plain, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a plain pod was refused: %v", err)
	}
	patch := func(c kubernetes.Interface, body string) error {
		_, err := c.CoreV1().Pods("team").Patch(ctx, "plain", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	placement := `{"metadata":{"annotations":{"hami.io/vgpu-node":"gpu-1","hami.io/vgpu-devices-allocated":"GPU-1,NVIDIA,1000,0:;"},"labels":{"hami.io/vgpu-node":"gpu-1"}}}`
	for _, tc := range []struct {
		name    string
		c       kubernetes.Interface
		body    string
		allowed bool
	}{
		{"user adds a placement", user, placement, false},
		{"user adds a bind phase", user, `{"metadata":{"annotations":{"hami.io/bind-phase":"success"}}}`, false},
		{"user adds the label", user, `{"metadata":{"labels":{"hami.io/vgpu-node":"gpu-1"}}}`, false},
		{"extender places the pod", ext, placement, true},
		{"user changes the devices", user, `{"metadata":{"annotations":{"hami.io/vgpu-devices-allocated":"GPU-1,NVIDIA,1,0:;"}}}`, false},
		{"user removes the placement", user, `{"metadata":{"annotations":{"hami.io/vgpu-node":null}}}`, false},
		{"user removes the label", user, `{"metadata":{"labels":{"hami.io/vgpu-node":null}}}`, false},
		{"user changes another annotation of the placed pod", user, `{"metadata":{"annotations":{"team/owner":"bob"}}}`, true},
		{"agent sets the bind phase", agent, `{"metadata":{"annotations":{"hami.io/bind-phase":"success"}}}`, true},
	} {
		err := patch(tc.c, tc.body)
		switch {
		case tc.allowed && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case !tc.allowed && err == nil:
			t.Errorf("%s: allowed", tc.name)
		case !tc.allowed && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
			t.Errorf("%s: %v, want Forbidden", tc.name, err)
		}
	}
	if p, err := env.Client.CoreV1().Pods("team").Get(ctx, "plain", metav1.GetOptions{}); err != nil || p.Annotations["hami.io/vgpu-devices-allocated"] != "GPU-1,NVIDIA,1000,0:;" {
		t.Errorf("placement after the refused changes: %v, %v", p.Annotations, err)
	}

	// A Binding carries annotations and labels into the pod: only the placement writers may put HAMi's there.
	for _, tc := range []struct {
		name    string
		c       kubernetes.Interface
		pod     string
		annos   map[string]string
		allowed bool
	}{
		{"user binds with a placement", user, "bind-by-user", map[string]string{"hami.io/vgpu-node": "gpu-1"}, false},
		{"user binds without one", user, "bind-plain", map[string]string{"team/owner": "alice"}, true},
		{"extender binds with a placement", ext, "bind-by-extender", map[string]string{"hami.io/vgpu-node": "gpu-1", "hami.io/bind-phase": "allocating"}, true},
	} {
		p := forgedPlacement("team", tc.pod)
		p.Annotations = nil
		if _, err := env.Client.CoreV1().Pods("team").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := tc.c.CoreV1().Pods("team").Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: tc.pod, Annotations: tc.annos},
			Target: corev1.ObjectReference{Kind: "Node", Name: "gpu-1"}}, metav1.CreateOptions{})
		switch {
		case tc.allowed && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case !tc.allowed && err == nil:
			t.Errorf("%s: allowed", tc.name)
		case !tc.allowed && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
			t.Errorf("%s: %v, want Forbidden", tc.name, err)
		}
	}

	// Nodes: the extender may change the lock and the handshake only.
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "gpu-1", Labels: map[string]string{"gpu": "on"},
		Annotations: map[string]string{"hami.io/node-nvidia-register": "GPU-1,10,81920,100,NVIDIA,0,true,0,hami-core:"}}}
	if _, err := env.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	patchNode := func(c kubernetes.Interface, body string) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, "gpu-1", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	// The node policy may become active after the pod policy: wait for it the same way.
	deadline = time.Now().Add(30 * time.Second)
	for {
		err := patchNode(ext, `{"metadata":{"annotations":{"example.com/probe":"y"}}}`)
		if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
			break
		}
		if err != nil {
			t.Fatalf("probing the node policy: %v", err)
		}
		if err := patchNode(env.Client, `{"metadata":{"annotations":{"example.com/probe":null}}}`); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("the extender could still add any annotation to a Node after 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, tc := range []struct {
		name    string
		c       kubernetes.Interface
		body    string
		allowed bool
	}{
		{"extender takes the lock", ext, `{"metadata":{"annotations":{"hami.io/mutex.lock":"2026-11-24T03:00:00Z,team,plain"}}}`, true},
		{"extender writes the handshake", ext, `{"metadata":{"annotations":{"hami.io/node-handshake":"Requesting_2026-11-24 03:00:00"}}}`, true},
		{"extender releases the lock", ext, `{"metadata":{"annotations":{"hami.io/mutex.lock":null}}}`, true},
		{"extender rewrites the registration", ext, `{"metadata":{"annotations":{"hami.io/node-nvidia-register":"GPU-1,10,819200,100,NVIDIA,0,true,0,hami-core:"}}}`, false},
		{"extender removes the registration", ext, `{"metadata":{"annotations":{"hami.io/node-nvidia-register":null}}}`, false},
		{"extender adds another annotation", ext, `{"metadata":{"annotations":{"example.com/x":"y"}}}`, false},
		{"extender changes a label", ext, `{"metadata":{"labels":{"gpu":"off"}}}`, false},
		{"extender cordons the node", ext, `{"spec":{"unschedulable":true}}`, false},
		{"an admin rewrites the registration", user, `{"metadata":{"annotations":{"hami.io/node-nvidia-register":"GPU-1,10,40960,100,NVIDIA,0,true,0,hami-core:"}}}`, true},
	} {
		err := patchNode(tc.c, tc.body)
		switch {
		case tc.allowed && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case !tc.allowed && err == nil:
			t.Errorf("%s: allowed", tc.name)
		case !tc.allowed && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
			t.Errorf("%s: %v, want Forbidden", tc.name, err)
		}
	}
}
