package deploy_test

import (
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// build runs kustomize (the same library `kubectl apply -k` uses) on dir of fsys.
func build(t *testing.T, fsys filesys.FileSystem, dir string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		j, err := r.MarshalJSON() // JSON numbers, as the reader's objects have
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatal(err)
		}
		out = append(out, u)
	}
	return out
}

func objectKey(u *unstructured.Unstructured) string {
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// TestKustomizeBuildMatchesReader checks that kustomize builds the base into exactly the objects the tests'
// reader applies, so the tests check what `kubectl apply -k deploy/extender` sends.
func TestKustomizeBuildMatchesReader(t *testing.T) {
	b := readBase(t, baseDir)
	built := build(t, filesys.MakeFsOnDisk(), baseDir)
	want := map[string]map[string]any{}
	for _, m := range b.Manifests {
		want[objectKey(m.Obj)] = m.Obj.Object
	}
	got := map[string]bool{}
	for _, u := range built {
		k := objectKey(u)
		got[k] = true
		w, ok := want[k]
		switch {
		case !ok:
			t.Errorf("kustomize builds %s, which the reader does not see", k)
		case !reflect.DeepEqual(w, u.Object):
			t.Errorf("kustomize builds %s differently from the file:\nfile:      %v\nkustomize: %v", k, w, u.Object)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("kustomize does not build %s", k)
		}
	}
}

// TestKustomizeNamespaceOverlay builds an overlay that only sets another namespace: every namespaced object,
// every binding's ServiceAccount subject and the webhook's Service must follow, and nothing may still name
// kube-system but what allowedKubeSystem lists.
func TestKustomizeNamespaceOverlay(t *testing.T) {
	const ns = "gpu-system"
	for _, u := range namespaceOverlay(t, ns) {
		k := objectKey(u)
		if !clusterScoped[u.GetKind()] && u.GetNamespace() != ns {
			t.Errorf("%s: namespace %q, want %q", k, u.GetNamespace(), ns)
		}
		switch u.GetKind() {
		case "ClusterRoleBinding", "RoleBinding":
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, s := range subjects {
				s := s.(map[string]any)
				if s["kind"] == "ServiceAccount" && s["namespace"] != ns {
					t.Errorf("%s: subject %v keeps namespace %v, want %s", k, s["name"], s["namespace"], ns)
				}
			}
		case "MutatingWebhookConfiguration":
			webhooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
			for _, w := range webhooks {
				svcNS, _, _ := unstructured.NestedString(w.(map[string]any), "clientConfig", "service", "namespace")
				if svcNS != ns {
					t.Errorf("%s: webhook calls the Service in namespace %q, want %q", k, svcNS, ns)
				}
			}
		}
		// The leases and HAMi's ConfigMap are named through $(POD_NAMESPACE); only kube-scheduler's configuration
		// keeps its default resourceNamespace (overridden on the command line), and the webhook keeps kube-system out.
		raw, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := allowedKubeSystem[k]; strings.Contains(string(raw), "kube-system") && !ok {
			t.Errorf("%s still names kube-system after the overlay:\n%s", k, raw)
		}
	}
}

// namespaceOverlay builds an overlay of the base that only sets namespace ns, as a user would write it.
func namespaceOverlay(t *testing.T, ns string) []*unstructured.Unstructured {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	files, err := filepath.Glob(filepath.Join(baseDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := fsys.WriteFile(path.Join("/app/base", filepath.Base(f)), raw); err != nil { // the in-memory tree uses slashes
			t.Fatal(err)
		}
	}
	overlay := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: " + ns + "\nresources:\n- ../base\n"
	if err := fsys.WriteFile("/app/overlay/kustomization.yaml", []byte(overlay)); err != nil {
		t.Fatal(err)
	}
	return build(t, fsys, "/app/overlay")
}

// allowedKubeSystem are the objects of the gpu-system overlay that may still name kube-system, and why.
var allowedKubeSystem = map[string]string{
	"ConfigMap gpu-system/kubectl-hami-scheduler-config":  "leaderElection.resourceNamespace, overridden by --leader-elect-resource-namespace",
	"MutatingWebhookConfiguration /kubectl-hami-extender": "the namespaceSelector keeps kube-system's pods away from the webhook",
}

// TestOpenWebhookOverlayDropsOnlyTheWebhookClientCA: deploy/extender-open-webhook is deploy/extender with the
// arguments --webhook-client-ca-file and --webhook-client-allowed-cn removed, for control planes that cannot
// present a client certificate.
func TestOpenWebhookOverlayDropsOnlyTheWebhookClientCA(t *testing.T) {
	base := build(t, filesys.MakeFsOnDisk(), baseDir)
	open := build(t, filesys.MakeFsOnDisk(), filepath.Join(filepath.Dir(baseDir), "extender-open-webhook"))
	args := func(objs []*unstructured.Unstructured) []string {
		for _, u := range objs {
			if u.GetKind() != "Deployment" {
				continue
			}
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			for _, c := range cs {
				if c.(map[string]any)["name"] == "extender" {
					out, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
					return out
				}
			}
		}
		t.Fatal("no extender container")
		return nil
	}
	got, want := args(open), []string{}
	for _, a := range args(base) {
		if !strings.HasPrefix(a, "--webhook-client-ca-file=") && !strings.HasPrefix(a, "--webhook-client-allowed-cn=") {
			want = append(want, a)
		}
	}
	if len(want) != len(args(base))-2 {
		t.Fatal("the base has no --webhook-client-ca-file and --webhook-client-allowed-cn to drop")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("open-webhook extender args:\n got %q\nwant %q", got, want)
	}
	if len(open) != len(base) {
		t.Errorf("open-webhook builds %d objects, the base %d", len(open), len(base))
	}
}

// TestWithoutAdmissionPoliciesOverlays: the overlays for API servers without ValidatingAdmissionPolicy are the
// defaults less exactly their policies (and say so in their names), and the defaults carry every policy.
func TestWithoutAdmissionPoliciesOverlays(t *testing.T) {
	for _, c := range []struct{ def, without string }{
		{baseDir, "extender-without-admission-policies"},
		{filepath.Join("agent"), filepath.Join("agent", "without-admission-policies")},
	} {
		def := build(t, filesys.MakeFsOnDisk(), c.def)
		without := build(t, filesys.MakeFsOnDisk(), c.without)
		kept := map[string]bool{}
		for _, u := range without {
			kept[objectKey(u)] = true
			if strings.HasPrefix(u.GetKind(), "ValidatingAdmissionPolicy") {
				t.Errorf("%s keeps %s", c.without, objectKey(u))
			}
		}
		policies := 0
		for _, u := range def {
			isPolicy := strings.HasPrefix(u.GetKind(), "ValidatingAdmissionPolicy")
			if isPolicy {
				policies++
				if u.GetNamespace() != "" {
					t.Errorf("%s: %s has namespace %q (cluster-scoped)", c.def, objectKey(u), u.GetNamespace())
				}
			}
			if !isPolicy && !kept[objectKey(u)] {
				t.Errorf("%s drops %s, which is no admission policy", c.without, objectKey(u))
			}
		}
		if policies < 4 {
			t.Errorf("%s carries %d admission policy objects, want its policies and bindings", c.def, policies)
		}
	}
}

// TestNodeAgentsOverlay: the overlay docs/deploy.md shows for another device plugin (a node agent more) patches the
// nodeAgents variable of both policies that have one, and fails to build should the variable move.
func TestNodeAgentsOverlay(t *testing.T) {
	fsys := filesys.MakeFsInMemory()
	for _, u := range build(t, filesys.MakeFsOnDisk(), baseDir) {
		raw, err := u.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ToLower(u.GetKind()) + "-" + u.GetName() + ".json"
		if err := fsys.WriteFile(path.Join("/app/base", name), raw); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := fsys.ReadDir("/app/base")
	base := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
	for _, f := range files {
		base += "- " + f + "\n"
	}
	if err := fsys.WriteFile("/app/base/kustomization.yaml", []byte(base)); err != nil {
		t.Fatal(err)
	}
	docs, err := os.ReadFile(filepath.Join("..", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The overlay as docs/deploy.md prints it, pointed at this base.
	_, rest, ok := strings.Cut(string(docs), "# overlays/prod/kustomization.yaml: HAMi's DCU device plugin")
	overlay, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/deploy.md no longer shows the node agents overlay")
	}
	overlay = strings.Replace(overlay[strings.Index(overlay, "\n")+1:], "../../deploy/extender", "../base", 1)
	if err := fsys.WriteFile("/app/overlay/kustomization.yaml", []byte(overlay)); err != nil {
		t.Fatal(err)
	}
	patched := 0
	for _, u := range build(t, fsys, "/app/overlay") {
		if u.GetKind() != "ValidatingAdmissionPolicy" {
			continue
		}
		vars, _, _ := unstructured.NestedSlice(u.Object, "spec", "variables")
		for _, v := range vars {
			if v := v.(map[string]any); v["name"] == "nodeAgents" {
				if !strings.Contains(v["expression"].(string), "'hami-dcu-device-plugin'") {
					t.Errorf("%s: nodeAgents not patched: %v", u.GetName(), v["expression"])
				}
				patched++
			}
		}
	}
	if patched != 2 {
		t.Errorf("%d policies have a patched nodeAgents variable, want 2", patched)
	}
}
