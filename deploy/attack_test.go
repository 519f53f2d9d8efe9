package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestDefaultInstallRefusesForgery applies the default kustomizations exactly as `kubectl apply -k` builds them
// (deploy/extender and deploy/agent/device-plugin, the agent variant with the widest RBAC) to a real
// kube-apiserver and attacks them with real identities: RBAC as shipped, ServiceAccount tokens from the
// TokenRequest API (the agents' bound to a pod on their node, as the kubelet mounts them), and a pod creator
// with an ordinary Role. Each probe of issue 26 (Why 1-4) must be refused by the API server; what the extender,
// kube-scheduler and each node's agent really write must still be allowed.
func TestDefaultInstallRefusesForgery(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	dyn, mapper := newApplier(t, env.Config)
	objs := build(t, filesys.MakeFsOnDisk(), baseDir)
	objs = append(objs, build(t, filesys.MakeFsOnDisk(), filepath.Join("agent", "device-plugin"))...)
	waitNamespaceExists(t, env.Client, defaultNamespace)
	for _, u := range objs {
		// No kubelet, no endpoints: a live webhook would only delay this test's pod creations.
		dryRun := u.GetKind() == "MutatingWebhookConfiguration"
		if err := apply(t, dyn, mapper, manifest{Obj: u}, dryRun); err != nil {
			t.Fatalf("%s: %v", objectKey(u), err)
		}
	}
	refusesForgery(t, env)
}

// refusesForgery runs issue 26's probes against an installed default (the extender and the device-plugin agent
// in kube-system, however installed: kubectl apply -k here, helm install in helm_test.go): what the components
// write is allowed, every forgery is refused.
func refusesForgery(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := t.Context()
	admin := env.Client
	for _, n := range []string{"gpu-00", "gpu-01"} {
		createGPUNode(t, admin, n)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// alice may create, change and bind pods in her namespace, and write their status (as kubelets and many
	// controllers may).
	if _, err := admin.RbacV1().Roles("team").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-author"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "pods/status"}, Verbs: []string{"get", "list", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings("team").Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "pod-author"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	aliceCfg := rest.CopyConfig(env.Config)
	aliceCfg.Impersonate = rest.ImpersonationConfig{UserName: "alice", Groups: []string{"system:authenticated"}}
	alice := kubernetes.NewForConfigOrDie(aliceCfg)
	ext := tokenClient(t, env, defaultNamespace, serviceAccount, nil)
	agent00 := agentOnNode(t, env, "gpu-00")
	agent01 := agentOnNode(t, env, "gpu-01")

	// Pods: alice's, placed by the extender on gpu-00 (81920 MiB), one placed on gpu-01, and a kube-system pod.
	newPod := func(c kubernetes.Interface, ns, name string) *corev1.Pod {
		t.Helper()
		p, err := c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{SchedulerName: schedulerName, Containers: []corev1.Container{{Name: "main", Image: "registry.example/cuda:12"}}}},
			metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating pod %s/%s: %v", ns, name, err)
		}
		return p
	}
	placement := func(node string, mib int) map[string]string {
		devs := fmt.Sprintf("GPU-%s-0,NVIDIA,%d,0:;", node, mib)
		return map[string]string{"hami.io/vgpu-node": node, "hami.io/vgpu-time": "1764000000", "hami.io/vgpu-devices-to-allocate": devs,
			"hami.io/vgpu-devices-allocated": devs, "hami.io/bind-phase": "allocating", "hami.io/bind-time": "1764000000"}
	}
	bindPlaced := func(c kubernetes.Interface, ns, name, node string, annos map[string]string) error {
		return c.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: annos,
			Labels: map[string]string{"hami.io/vgpu-node": node}}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}, metav1.CreateOptions{})
	}
	newPod(alice, "team", "alice-gpu")
	newPod(admin, "team", "on-gpu-01")
	newPod(alice, "team", "status-forge")
	newPod(admin, defaultNamespace, "system-pod")
	newPod(admin, "team", "every-key")
	newPod(admin, "team", "warm-up")

	patchPod := func(c kubernetes.Interface, ns, name, body string, sub ...string) error {
		_, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{}, sub...)
		return err
	}
	setImage := func(c kubernetes.Interface, ns, name string) error {
		body := `{"spec":{"containers":[{"name":"main","image":"registry.example/evil"}]}}`
		_, err := c.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	patchNode := func(c kubernetes.Interface, name, body string) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}

	// The API server loads policies asynchronously: wait until each refuses a write it exists to refuse (on an
	// object the probes do not use), and go on without it after 30s, so that each probe below reports for itself.
	for _, w := range []struct {
		policy string
		write  func(i int) error // i differs on every try, so that a write is never a no-op
	}{
		{"kubectl-hami-placement", func(i int) error {
			return patchPod(alice, "team", "warm-up", fmt.Sprintf(`{"metadata":{"annotations":{"hami.io/vgpu-node":"gpu-%d"}}}`, i))
		}},
		{"kubectl-hami-extender-pod-writes", func(i int) error {
			return patchPod(ext, "team", "warm-up", fmt.Sprintf(`{"metadata":{"labels":{"warm-up":"x%d"}}}`, i))
		}},
		{"kubectl-hami-extender-node-patches", func(i int) error {
			return patchNode(ext, "gpu-01", fmt.Sprintf(`{"metadata":{"labels":{"warm-up":"x%d"}}}`, i))
		}},
		{"kubectl-hami-agent-own-node", func(i int) error {
			return patchNode(agent00, "gpu-01", fmt.Sprintf(`{"metadata":{"annotations":{"warm-up":"x%d"}}}`, i))
		}},
		{"kubectl-hami-agent-own-pods", func(i int) error {
			return patchPod(agent00, "team", "warm-up", fmt.Sprintf(`{"metadata":{"annotations":{"warm-up":"x%d"}}}`, i))
		}},
		{"kubectl-hami-node-keys", func(i int) error {
			return patchNode(admin, "gpu-01", fmt.Sprintf(`{"metadata":{"annotations":{"hami.io/node-handshake":"Requesting_2026-11-26 00:00:%02d"}}}`, i%60))
		}},
	} {
		deadline := time.Now().Add(30 * time.Second)
		for i := 0; ; i++ {
			err := w.write(i)
			if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("policy %s: not refusing after 30s (last answer: %v)", w.policy, err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The warm-ups may have landed before the policies were loaded: put gpu-01 back as it was.
	if err := patchNode(admin, "gpu-01", `{"metadata":{"labels":{"warm-up":null}}}`); err != nil {
		t.Fatal(err)
	}

	// What the shipped components really write must be allowed.
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: refused: %v", what, err)
		}
	}
	must("the extender binds alice's pod to gpu-00 with its placement", bindPlaced(ext, "team", "alice-gpu", "gpu-00", placement("gpu-00", 81920)))
	must("the extender binds a pod to gpu-01 with its placement", bindPlaced(ext, "team", "on-gpu-01", "gpu-01", placement("gpu-01", 4096)))
	must("the extender binds the kube-system pod to gpu-01", bindPlaced(ext, defaultNamespace, "system-pod", "gpu-01", nil))
	every := map[string]string{}
	for _, k := range engine.PlacementKeys(engine.DefaultConfig()) {
		every[k] = "x"
	}
	must("the extender binds with every placement key of every device family", bindPlaced(ext, "team", "every-key", "gpu-00", every))
	must("the extender takes gpu-00's lock", patchNode(ext, "gpu-00", `{"metadata":{"annotations":{"hami.io/mutex.lock":"2026-11-26T22:00:00Z,team,alice-gpu"}}}`))
	must("the extender stamps gpu-00's handshake, as HAMi's registration pass does",
		patchNode(ext, "gpu-00", `{"metadata":{"annotations":{"hami.io/node-handshake":"Requesting_2026-11-26 22:00:00"}}}`))
	must("gpu-00's agent registers gpu-00", patchNode(agent00, "gpu-00", `{"metadata":{"annotations":{"hami.io/node-nvidia-register":"[]"}}}`))
	must("gpu-00's agent releases gpu-00's lock", patchNode(agent00, "gpu-00", `{"metadata":{"annotations":{"hami.io/mutex.lock":null}}}`))
	must("gpu-00's agent consumes alice's allocation and sets the bind phase",
		patchPod(agent00, "team", "alice-gpu", `{"metadata":{"annotations":{"hami.io/vgpu-devices-to-allocate":";","hami.io/bind-phase":"success"}}}`))
	must("gpu-01's agent sets the bind phase of its node's pod", patchPod(agent01, "team", "on-gpu-01", `{"metadata":{"annotations":{"hami.io/bind-phase":"success"}}}`))
	must("alice changes another annotation of her placed pod", patchPod(alice, "team", "alice-gpu", `{"metadata":{"annotations":{"team/owner":"alice"}}}`))
	must("kube-scheduler's identity writes a pod's status", patchPod(ext, "team", "status-forge",
		`{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}`, "status"))
	// Preemption, kube-scheduler's or serve-extender's: the victim is marked (pods/status), then deleted.
	newPod(alice, "team", "victim")
	must("the extender nominates a preemptor", patchPod(ext, "team", "status-forge", `{"status":{"nominatedNodeName":"gpu-01"}}`, "status"))
	must("the extender marks a preemption victim", patchPod(ext, "team", "victim",
		`{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler","message":"hami-scheduler: preempting to accommodate a higher priority pod"}]}}`, "status"))
	must("the extender deletes the preemption victim", ext.CoreV1().Pods("team").Delete(ctx, "victim", metav1.DeleteOptions{}))

	// Issue 26's probes: each must be refused.
	for _, p := range []struct {
		probe, what string
		write       func() error
	}{
		{"why1", "alice shrinks her bound pod's placement from 81920 to 1 MiB", func() error {
			return patchPod(alice, "team", "alice-gpu", `{"metadata":{"annotations":{"hami.io/vgpu-devices-allocated":"GPU-gpu-00-0,NVIDIA,1,0:;"}}}`)
		}},
		{"why1", "alice removes her bound pod's placement", func() error {
			return patchPod(alice, "team", "alice-gpu", `{"metadata":{"annotations":{"hami.io/vgpu-node":null},"labels":{"hami.io/vgpu-node":null}}}`)
		}},
		{"why1", "alice creates a pod that holds whole GPUs", func() error {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "forged", Namespace: "team", Annotations: placement("gpu-01", 81920)},
				Spec: corev1.PodSpec{SchedulerName: "nobody", Containers: []corev1.Container{{Name: "main", Image: "registry.example/pause"}}}}
			_, err := alice.CoreV1().Pods("team").Create(ctx, p, metav1.CreateOptions{})
			return err
		}},
		{"why1", "alice binds her pod with a placement in the Binding", func() error {
			return bindPlaced(alice, "team", "status-forge", "gpu-01", placement("gpu-01", 81920))
		}},
		{"why2", "a pods/status patch writes a placement", func() error {
			return patchPod(alice, "team", "status-forge", `{"metadata":{"annotations":{"hami.io/vgpu-node":"gpu-01","hami.io/vgpu-devices-allocated":"GPU-gpu-01-0,NVIDIA,81920,0:;"}}}`, "status")
		}},
		{"why2", "a pods/status patch shrinks a placement", func() error {
			return patchPod(alice, "team", "alice-gpu", `{"metadata":{"annotations":{"hami.io/vgpu-devices-allocated":"GPU-gpu-00-0,NVIDIA,1,0:;"}}}`, "status")
		}},
		{"why3", "gpu-00's agent re-registers gpu-01", func() error {
			return patchNode(agent00, "gpu-01", `{"metadata":{"annotations":{"hami.io/node-nvidia-register":"[]"}}}`)
		}},
		{"why3", "gpu-00's agent cordons gpu-01", func() error { return patchNode(agent00, "gpu-01", `{"spec":{"unschedulable":true}}`) }},
		{"why3", "gpu-00's agent taints gpu-01 NoExecute", func() error {
			return patchNode(agent00, "gpu-01", `{"spec":{"taints":[{"key":"evil","effect":"NoExecute"}]}}`)
		}},
		{"why3", "gpu-00's agent cordons its own node", func() error { return patchNode(agent00, "gpu-00", `{"spec":{"unschedulable":true}}`) }},
		{"why3", "gpu-00's agent takes gpu-01's lock", func() error {
			return patchNode(agent00, "gpu-01", `{"metadata":{"annotations":{"hami.io/mutex.lock":"2026-11-26T22:00:00Z,team,forged"}}}`)
		}},
		{"why3", "gpu-00's agent writes a placement on gpu-01's pod", func() error {
			return patchPod(agent00, "team", "on-gpu-01", `{"metadata":{"annotations":{"hami.io/vgpu-devices-allocated":"GPU-gpu-01-0,NVIDIA,1,0:;"}}}`)
		}},
		{"why3", "gpu-00's agent sets the bind phase of gpu-01's pod", func() error {
			return patchPod(agent00, "team", "on-gpu-01", `{"metadata":{"annotations":{"hami.io/bind-phase":"failed"}}}`)
		}},
		{"why3", "gpu-00's agent changes a kube-system pod's image", func() error {
			return setImage(agent00, defaultNamespace, "system-pod")
		}},
		{"why3", "gpu-00's agent changes the image of a pod on its own node", func() error {
			return setImage(agent00, "team", "alice-gpu")
		}},
		{"why3", "gpu-00's agent rewrites the allocated devices of its own node's pod", func() error {
			return patchPod(agent00, "team", "alice-gpu", `{"metadata":{"annotations":{"hami.io/vgpu-devices-allocated":"GPU-gpu-00-0,NVIDIA,1,0:;"}}}`)
		}},
		{"why4", "the extender's ServiceAccount changes a pod's image", func() error {
			return setImage(ext, "team", "alice-gpu")
		}},
		{"why4", "the extender's ServiceAccount changes a pod's other label", func() error {
			return patchPod(ext, "team", "alice-gpu", `{"metadata":{"labels":{"app":"evil"}}}`)
		}},
		{"why4", "the extender's ServiceAccount writes a pod's annotations through pods/status", func() error {
			return patchPod(ext, "team", "alice-gpu", `{"metadata":{"annotations":{"team/owner":"evil"}}}`, "status")
		}},
		{"why4", "the extender's ServiceAccount rewrites a node's registration", func() error {
			return patchNode(ext, "gpu-00", `{"metadata":{"annotations":{"hami.io/node-nvidia-register":"[{\"id\":\"GPU-forged\"}]"}}}`)
		}},
		{"why4", "the extender's ServiceAccount cordons a node", func() error { return patchNode(ext, "gpu-00", `{"spec":{"unschedulable":true}}`) }},
		{"why4", "the extender's ServiceAccount deletes a pod no preemption marked", func() error {
			return ext.CoreV1().Pods("team").Delete(ctx, "on-gpu-01", metav1.DeleteOptions{})
		}},
		{"why1", "an administrator takes a node's lock", func() error {
			return patchNode(admin, "gpu-01", `{"metadata":{"annotations":{"hami.io/mutex.lock":"2026-11-26T22:00:00Z,team,forged"}}}`)
		}},
	} {
		err := p.write()
		switch {
		case err == nil:
			t.Errorf("%s: %s: allowed", p.probe, p.what)
		case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
			t.Errorf("%s: %s: %v, want Forbidden", p.probe, p.what, err)
		default:
			t.Logf("%s: %s: refused: %v", p.probe, p.what, err)
		}
	}

	// Every HAMi key bind writes, of every device family, is one the placement policy guards.
	for _, k := range engine.PlacementKeys(engine.DefaultConfig()) {
		if !strings.HasPrefix(k, "hami.io/") {
			continue // the other vendors' keys: their device plugins write some of them (docs/deploy.md, Security)
		}
		body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{k: "forged"}}})
		if err := patchPod(alice, "team", "status-forge", string(body)); !apierrors.IsForbidden(err) {
			t.Errorf("why1: alice sets %s on her pod: %v, want Forbidden", k, err)
		}
	}

	// Nothing of it landed.
	pod := func(ns, name string) *corev1.Pod {
		p, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := pod("team", "alice-gpu"); p.Annotations["hami.io/vgpu-devices-allocated"] != "GPU-gpu-00-0,NVIDIA,81920,0:;" || p.Spec.Containers[0].Image != "registry.example/cuda:12" {
		t.Errorf("alice's pod after the probes: %v, image %s", p.Annotations, p.Spec.Containers[0].Image)
	}
	if p := pod("team", "status-forge"); p.Annotations["hami.io/vgpu-node"] != "" {
		t.Errorf("the status-forged pod carries a placement: %v", p.Annotations)
	}
	if p := pod(defaultNamespace, "system-pod"); p.Spec.Containers[0].Image != "registry.example/cuda:12" {
		t.Errorf("the kube-system pod's image is %s", p.Spec.Containers[0].Image)
	}
	n, err := admin.CoreV1().Nodes().Get(ctx, "gpu-01", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Spec.Unschedulable || len(n.Spec.Taints) > 0 || n.Annotations["hami.io/node-nvidia-register"] == "[]" || n.Annotations["hami.io/mutex.lock"] != "" {
		t.Errorf("gpu-01 after the probes: unschedulable %v, taints %v, annotations %v", n.Spec.Unschedulable, n.Spec.Taints, n.Annotations)
	}
}

// tokenClient is a client with a token of the ServiceAccount from the TokenRequest API, bound to the pod when one
// is given (the token then carries the pod's node, as the kubelet's projected tokens do).
func tokenClient(t *testing.T, env *testenv.Env, ns, sa string, pod *corev1.Pod) kubernetes.Interface {
	t.Helper()
	exp := int64(3600)
	spec := authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}
	if pod != nil {
		spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tr, err := env.Client.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, &authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	cfg := rest.CopyConfig(env.Config)
	cfg.BearerToken, cfg.BearerTokenFile = tr.Status.Token, ""
	return kubernetes.NewForConfigOrDie(cfg)
}

// agentOnNode creates the agent's pod on the node (as its DaemonSet would) and returns a client with its token.
func agentOnNode(t *testing.T, env *testenv.Env, node string) kubernetes.Interface {
	t.Helper()
	pod, err := env.Client.CoreV1().Pods(defaultNamespace).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: defaultNamespace, Name: "kubectl-hami-agent-" + node},
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "kubectl-hami-agent",
			Containers: []corev1.Container{{Name: "agent", Image: "ghcr.io/kubectl-hami/kubectl-hami-agent:v0.1.0"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := tokenClient(t, env, defaultNamespace, "kubectl-hami-agent", pod)
	// The token names the node: the API server says so through a self review.
	ssr, err := c.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ssr.Status.UserInfo.Extra["authentication.kubernetes.io/node-name"]; len(got) != 1 || got[0] != node {
		raw, _ := json.Marshal(ssr.Status.UserInfo)
		t.Fatalf("the agent's token on %s does not carry its node: %s", node, raw)
	}
	return c
}

// waitNamespaceExists waits until the API server has created a system namespace.
func waitNamespaceExists(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	waitFor(t, 30*time.Second, "namespace "+name, func() error {
		_, err := c.CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
		return err
	})
}

// TestNamespaceOverlayPoliciesFollowTheExtender: the policies name the extender through its ClusterRoleBinding, so
// an overlay that moves the install to gpu-system moves them too: the extender's ServiceAccount there places pods
// and takes node locks, a pod creator still cannot, and neither can a ServiceAccount of the old name in
// kube-system.
func TestNamespaceOverlayPoliciesFollowTheExtender(t *testing.T) {
	t.Parallel()
	const ns = "gpu-system"
	env := testenv.Start(t)
	ctx := t.Context()
	dyn, mapper := newApplier(t, env.Config)
	waitNamespaceExists(t, env.Client, defaultNamespace)
	admin := env.Client
	for _, name := range []string{ns, "team"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range namespaceOverlay(t, ns) {
		if u.GetKind() == "MutatingWebhookConfiguration" {
			continue
		}
		if clusterScoped[u.GetKind()] {
			u.SetNamespace("") // kustomize's schema gives the policies the overlay's namespace; the API server drops it
		}
		if err := apply(t, dyn, mapper, manifest{Obj: u}, false); err != nil {
			t.Fatalf("%s: %v", objectKey(u), err)
		}
	}
	// An impostor: a ServiceAccount named like the extender, in the namespace the base names.
	if _, err := admin.CoreV1().ServiceAccounts(defaultNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: serviceAccount}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "impostor"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: serviceAccount},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: defaultNamespace}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createGPUNode(t, admin, "gpu-00")
	ext := tokenClient(t, env, ns, serviceAccount, nil)
	impostor := tokenClient(t, env, defaultNamespace, serviceAccount, nil)
	for _, name := range []string{"placed", "by-impostor"} {
		if _, err := admin.CoreV1().Pods("team").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/cuda:12"}}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	try := 0
	patch := func(c kubernetes.Interface, pod string) error {
		try++ // a new value each time: a write that changes nothing is no write
		placement := fmt.Sprintf(`{"metadata":{"annotations":{"hami.io/vgpu-node":"gpu-00","hami.io/vgpu-devices-allocated":"GPU-gpu-00-0,NVIDIA,%d,0:;"}}}`, 1000+try)
		_, err := c.CoreV1().Pods("team").Patch(ctx, pod, types.MergePatchType, []byte(placement), metav1.PatchOptions{})
		return err
	}
	// Wait until the placement policy is enforced: the impostor is refused.
	waitFor(t, 30*time.Second, "the placement policy refusing the kube-system impostor", func() error {
		if err := patch(impostor, "by-impostor"); !apierrors.IsForbidden(err) {
			return fmt.Errorf("not refused: %v", err)
		}
		return nil
	})
	if err := patch(ext, "placed"); err != nil {
		t.Errorf("the extender's ServiceAccount in %s may not place a pod: %v", ns, err)
	}
	if _, err := ext.CoreV1().Nodes().Patch(ctx, "gpu-00", types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"hami.io/mutex.lock":"2026-11-26T22:00:00Z,team,placed"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("the extender's ServiceAccount in %s may not take a node lock: %v", ns, err)
	}
	// The extender's own write policy is a policy of its own, enforced when the API server has loaded it: wait
	// for its refusal rather than reading the first answer (a slow API server loads the two apart).
	label := 0
	waitFor(t, 30*time.Second, "the extender's ServiceAccount in "+ns+" refused another label", func() error {
		label++ // a new value each time: a write that changes nothing is no write
		_, err := ext.CoreV1().Pods("team").Patch(ctx, "placed", types.MergePatchType,
			fmt.Appendf(nil, `{"metadata":{"labels":{"app":"x%d"}}}`, label), metav1.PatchOptions{})
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("changed another label: %v, want Forbidden", err)
		}
		return nil
	})

	// A ClusterRoleBinding without subjects names nobody: the placement stays guarded against everyone, and
	// other pod writes go on (no policy error refuses every pod write of the cluster).
	crb, err := admin.RbacV1().ClusterRoleBindings().Get(ctx, serviceAccount, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crb.Subjects = nil
	if _, err := admin.RbacV1().ClusterRoleBindings().Update(ctx, crb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the extender no longer recognised", func() error {
		if err := patch(ext, "placed"); !apierrors.IsForbidden(err) {
			return fmt.Errorf("not refused: %v", err)
		}
		return nil
	})
	if _, err := admin.CoreV1().Pods("team").Patch(ctx, "placed", types.MergePatchType, []byte(`{"metadata":{"annotations":{"team/owner":"x"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("with an empty ClusterRoleBinding an ordinary pod write is refused: %v", err)
	}
}
