package deploy_test

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// The chart's tests need helm: KUBECTL_HAMI_HELM names the binary (hack/test-helm.sh builds it once from its Go
// module and sets it; `make test-release` runs them). Without it they skip, so `make test` needs no helm.

const (
	chartDir     = "chart/kubectl-hami"
	helmRelease  = "kubectl-hami"
	helmKube     = "1.37.0" // --kube-version of helm template (the chart asks for 1.30+)
	helmInstance = "app.kubernetes.io/instance"
)

// chartLabels are the labels the chart adds to every object's metadata, beside the kustomize bases' own.
var chartLabels = []string{"helm.sh/chart", helmInstance, "app.kubernetes.io/managed-by"}

// chartOnlyKinds are the chart's own objects that no kustomize base holds: the certificates (docs/deploy.md makes
// them with hack/extender-certs.sh for kustomize).
var chartOnlyKinds = map[string]bool{"Secret": true, "Issuer": true, "Certificate": true}

func helmBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("KUBECTL_HAMI_HELM")
	if bin == "" {
		t.Skip("KUBECTL_HAMI_HELM is not set: the chart's tests run in `make test-release` (hack/test-helm.sh)")
	}
	return bin
}

// runHelm runs helm with its own configuration and cache folders (never the user's).
func runHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helmBin(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("helm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// parseManifests decodes a multi-document YAML stream (helm template, helm get manifest) into objects.
func parseManifests(t *testing.T, out string) []*unstructured.Unstructured {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		if string(j) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(j); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		objs = append(objs, u)
	}
}

// helmTemplate renders the chart into kube-system with the --set values.
func helmTemplate(t *testing.T, sets ...string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	args := []string{"template", helmRelease, chartDir, "-n", defaultNamespace, "--kube-version", helmKube}
	for _, s := range sets {
		if strings.HasPrefix(s, "--") {
			args = append(args, s)
		} else {
			args = append(args, "--set", s)
		}
	}
	out, err := runHelm(t, args...)
	if err != nil {
		return nil, err
	}
	return parseManifests(t, out), nil
}

// withoutChartMaterial is the object as the kustomize base would hold it: without the chart's labels and the
// webhook's certificate material (caBundle, cert-manager's annotation; the base holds a placeholder).
func withoutChartMaterial(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	labels := u.GetLabels()
	for _, l := range chartLabels {
		delete(labels, l)
	}
	u.SetLabels(labels)
	if u.GetKind() == "MutatingWebhookConfiguration" {
		annos := u.GetAnnotations()
		delete(annos, "cert-manager.io/inject-ca-from")
		if len(annos) == 0 {
			annos = nil
		}
		u.SetAnnotations(annos)
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for _, h := range hooks {
			if cc, ok := h.(map[string]any)["clientConfig"].(map[string]any); ok {
				delete(cc, "caBundle")
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
	}
	if u.GetKind() == "DaemonSet" || u.GetKind() == "Deployment" {
		sortByName(u.Object, "spec", "template", "spec", "volumes")
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			c := c.(map[string]any)
			sortByName(c, "volumeMounts")
			if env, _ := json.Marshal(c["env"]); !bytes.Contains(env, []byte("$(")) {
				sortByName(c, "env")
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers")
	}
	return u
}

// sortByName sorts a list of named items (volumes, volume mounts, env) by name: the API server keys them by name,
// and kustomize's strategic merge patches put the items they add first where the chart adds them last. (An env
// list whose values refer to other variables, $(VAR), keeps its order: there the order counts.)
func sortByName(obj map[string]any, path ...string) {
	items, ok, _ := unstructured.NestedSlice(obj, path...)
	if !ok {
		return
	}
	slices.SortStableFunc(items, func(a, b any) int {
		an, _ := a.(map[string]any)["name"].(string)
		bn, _ := b.(map[string]any)["name"].(string)
		return strings.Compare(an, bn)
	})
	_ = unstructured.SetNestedSlice(obj, items, path...)
}

// sameObjects reports every difference between the chart's objects (less chartOnlyKinds) and the kustomize
// builds' objects, modulo the chart's labels and certificate material.
func sameObjects(t *testing.T, what string, chart, kustomize []*unstructured.Unstructured) {
	t.Helper()
	want := map[string]*unstructured.Unstructured{}
	for _, u := range kustomize {
		want[objectKey(u)] = withoutChartMaterial(u)
	}
	got := map[string]*unstructured.Unstructured{}
	for _, u := range chart {
		if chartOnlyKinds[u.GetKind()] {
			continue
		}
		if labels := u.GetLabels(); labels[helmInstance] != helmRelease {
			t.Errorf("%s: %s lacks the chart's labels: %v", what, objectKey(u), labels)
		}
		got[objectKey(u)] = withoutChartMaterial(u)
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: the chart lacks %s", what, k)
			continue
		}
		if !reflect.DeepEqual(g.Object, want[k].Object) {
			gj, _ := yaml.Marshal(g.Object)
			wj, _ := yaml.Marshal(want[k].Object)
			t.Errorf("%s: %s differs from the kustomize build\nchart:\n%s\nkustomize:\n%s", what, k, gj, wj)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: the chart has %s, which the kustomize build has not", what, k)
		}
	}
}

// agentVariants are the chart's values for each kustomize variant of the agent.
var agentVariants = []struct {
	name string
	sets []string
	dirs []string
}{
	{"default", nil, []string{baseDir, "agent"}},
	{"agent.mode=observe", []string{"agent.mode=observe"}, []string{baseDir, filepath.Join("agent", "observe")}},
	{"agent.mode=device-plugin", []string{"agent.mode=device-plugin"}, []string{baseDir, filepath.Join("agent", "device-plugin")}},
	{"agent.enabled=false", []string{"agent.enabled=false"}, []string{baseDir}},
}

func kustomizeObjects(t *testing.T, dirs []string) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, d := range dirs {
		objs = append(objs, build(t, filesys.MakeFsOnDisk(), d)...)
	}
	return objs
}

// TestHelmLint: helm lint --strict accepts the chart with each variant of its values.
func TestHelmLint(t *testing.T) {
	helmBin(t)
	for _, sets := range [][]string{nil, {"agent.mode=observe"}, {"agent.mode=device-plugin"}, {"certificates.source=cert-manager"},
		{"hamiTakeOver.enabled=true"}} {
		args := []string{"lint", "--strict", chartDir, "-n", defaultNamespace, "--kube-version", helmKube}
		for _, s := range sets {
			args = append(args, "--set", s)
		}
		if out, err := runHelm(t, args...); err != nil {
			t.Errorf("%v\n%s", err, out)
		}
	}
}

// TestHelmTemplateMatchesKustomize: the chart renders the same objects as the kustomize bases (deploy/extender
// and each variant of deploy/agent), modulo its labels and certificate material, whatever the source of the
// certificates.
func TestHelmTemplateMatchesKustomize(t *testing.T) {
	helmBin(t)
	for _, v := range agentVariants {
		for _, certs := range []string{"certificates.source=helm", "certificates.source=cert-manager"} {
			objs, err := helmTemplate(t, append(slices.Clone(v.sets), certs)...)
			if err != nil {
				t.Fatal(err)
			}
			sameObjects(t, v.name+", "+certs, objs, kustomizeObjects(t, v.dirs))
		}
	}
}

func findObject(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

func secretPEM(t *testing.T, s *unstructured.Unstructured, key string) []byte {
	t.Helper()
	v, _, _ := unstructured.NestedString(s.Object, "data", key)
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) == 0 {
		t.Fatalf("Secret %s: %s: %q, %v", s.GetName(), key, v, err)
	}
	return b
}

func parseCert(t *testing.T, what string, p []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(p)
	if blk == nil {
		t.Fatalf("%s: no PEM", what)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return c
}

// webhookCABundle is the caBundle of the chart's webhook.
func webhookCABundle(t *testing.T, objs []*unstructured.Unstructured) []byte {
	t.Helper()
	wh := findObject(objs, "MutatingWebhookConfiguration", "kubectl-hami-extender")
	if wh == nil {
		t.Fatal("no MutatingWebhookConfiguration kubectl-hami-extender")
	}
	hooks, _, _ := unstructured.NestedSlice(wh.Object, "webhooks")
	b64, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkChartCertificates checks the chart's own certificates (source helm), as hack/extender-certs.sh makes them:
// the serving certificate for the Service's names and 127.0.0.1, kube-scheduler's and the API server's client
// certificates (CN kubectl-hami-scheduler, kube-apiserver), all of one CA, which is each Secret's ca.crt and the
// webhook's caBundle.
func checkChartCertificates(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ca := findObject(objs, "Secret", "kubectl-hami-extender-ca")
	if ca == nil {
		t.Fatal("no Secret kubectl-hami-extender-ca")
	}
	caPEM := secretPEM(t, ca, "tls.crt")
	pool := x509.NewCertPool()
	pool.AddCert(parseCert(t, "CA", caPEM))
	if got := webhookCABundle(t, objs); !bytes.Equal(got, caPEM) {
		t.Errorf("the webhook's caBundle is not the CA:\n%s\nwant\n%s", got, caPEM)
	}
	svc := "kubectl-hami-extender"
	for _, c := range []struct {
		secret, cn string
		usage      x509.ExtKeyUsage
		dns        []string
	}{
		{"kubectl-hami-extender-tls", svc, x509.ExtKeyUsageServerAuth, []string{svc, svc + ".kube-system", svc + ".kube-system.svc", svc + ".kube-system.svc.cluster.local"}},
		{"kubectl-hami-scheduler-client", "kubectl-hami-scheduler", x509.ExtKeyUsageClientAuth, nil},
		{"kubectl-hami-apiserver-webhook-client", "kube-apiserver", x509.ExtKeyUsageClientAuth, nil},
	} {
		s := findObject(objs, "Secret", c.secret)
		if s == nil {
			t.Errorf("no Secret %s", c.secret)
			continue
		}
		if typ, _, _ := unstructured.NestedString(s.Object, "type"); typ != "kubernetes.io/tls" {
			t.Errorf("Secret %s: type %q", c.secret, typ)
		}
		if !bytes.Equal(secretPEM(t, s, "ca.crt"), caPEM) {
			t.Errorf("Secret %s: ca.crt is not the CA", c.secret)
		}
		secretPEM(t, s, "tls.key")
		cert := parseCert(t, c.secret, secretPEM(t, s, "tls.crt"))
		if cert.Subject.CommonName != c.cn {
			t.Errorf("Secret %s: CN %q, want %q", c.secret, cert.Subject.CommonName, c.cn)
		}
		if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{c.usage}}); err != nil {
			t.Errorf("Secret %s: %v", c.secret, err)
		}
		for _, d := range c.dns {
			if err := cert.VerifyHostname(d); err != nil {
				t.Errorf("Secret %s: %v", c.secret, err)
			}
		}
		if c.dns != nil {
			if err := cert.VerifyHostname("127.0.0.1"); err != nil {
				t.Errorf("Secret %s: %v (kube-scheduler calls the extender on 127.0.0.1)", c.secret, err)
			}
		}
	}
}

// TestHelmCertificates: without cert-manager the chart generates the certificates; with its API it asks
// cert-manager for the same ones, and cert-manager fills the webhook's caBundle.
func TestHelmCertificates(t *testing.T) {
	helmBin(t)
	objs, err := helmTemplate(t)
	if err != nil {
		t.Fatal(err)
	}
	checkChartCertificates(t, objs)
	if findObject(objs, "Certificate", "kubectl-hami-extender") != nil {
		t.Error("cert-manager Certificates without cert-manager's API")
	}

	objs, err = helmTemplate(t, "--api-versions=cert-manager.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetKind() == "Secret" {
			t.Errorf("with cert-manager the chart still makes Secret %s", u.GetName())
		}
	}
	wh := findObject(objs, "MutatingWebhookConfiguration", "kubectl-hami-extender")
	if got := wh.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != "kube-system/kubectl-hami-extender" {
		t.Errorf("the webhook's cert-manager.io/inject-ca-from is %q", got)
	}
	if b := webhookCABundle(t, objs); len(b) != 0 {
		t.Errorf("with cert-manager the webhook has a caBundle of its own: %s", b)
	}
	for cert, want := range map[string]string{"kubectl-hami-extender": "kubectl-hami-extender-tls", "kubectl-hami-scheduler-client": "kubectl-hami-scheduler-client",
		"kubectl-hami-apiserver-webhook-client": "kubectl-hami-apiserver-webhook-client"} {
		c := findObject(objs, "Certificate", cert)
		if c == nil {
			t.Errorf("no Certificate %s", cert)
			continue
		}
		if got, _, _ := unstructured.NestedString(c.Object, "spec", "secretName"); got != want {
			t.Errorf("Certificate %s: secretName %q, want %q", cert, got, want)
		}
		if issuer, _, _ := unstructured.NestedString(c.Object, "spec", "issuerRef", "name"); findObject(objs, "Issuer", issuer) == nil {
			t.Errorf("Certificate %s: issuer %q is not the chart's", cert, issuer)
		}
	}
	// certificates.source=helm wins over an installed cert-manager.
	objs, err = helmTemplate(t, "--api-versions=cert-manager.io/v1", "certificates.source=helm")
	if err != nil {
		t.Fatal(err)
	}
	checkChartCertificates(t, objs)
}

func extenderArg(t *testing.T, objs []*unstructured.Unstructured, flag string) string {
	t.Helper()
	d := findObject(objs, "Deployment", "kubectl-hami-extender")
	if d == nil {
		t.Fatal("no Deployment kubectl-hami-extender")
	}
	var dep appsv1.Deployment
	if err := runtimeFromUnstructured(d, &dep); err != nil {
		t.Fatal(err)
	}
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Name == "extender" {
			return flagValue(c.Args, flag)
		}
	}
	t.Fatal("no container extender")
	return ""
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	j, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(j, into)
}

// TestHelmTakeOverValues: hamiTakeOver points the extender (and its Role) at the HAMi release's device ConfigMap,
// and refuses an agent that would register beside HAMi's device plugin.
func TestHelmTakeOverValues(t *testing.T) {
	helmBin(t)
	objs, err := helmTemplate(t, "hamiTakeOver.enabled=true", "hamiTakeOver.release=gpu", "hamiTakeOver.namespace=hami-system", "agent.mode=observe")
	if err != nil {
		t.Fatal(err)
	}
	if got := extenderArg(t, objs, "--hami-configmap"); got != "hami-system/gpu-scheduler-device" {
		t.Errorf("--hami-configmap=%s, want hami-system/gpu-scheduler-device", got)
	}
	role := findObject(objs, "Role", "kubectl-hami-extender-hami-config")
	names, _, _ := unstructured.NestedSlice(role.Object, "rules")
	if role.GetNamespace() != "hami-system" || !strings.Contains(fmt.Sprint(names), "gpu-scheduler-device") {
		t.Errorf("the extender's Role for HAMi's ConfigMap: %s, %v", role.GetNamespace(), names)
	}
	if rb := findObject(objs, "RoleBinding", "kubectl-hami-extender-hami-config"); rb.GetNamespace() != "hami-system" {
		t.Errorf("its RoleBinding is in %s", rb.GetNamespace())
	}
	if _, err := helmTemplate(t, "hamiTakeOver.enabled=true", "agent.mode=full"); err == nil || !strings.Contains(err.Error(), "agent.mode=observe") {
		t.Errorf("hamiTakeOver with agent.mode=full: %v, want a refusal naming agent.mode=observe", err)
	}
	// Without agent.mode, the take-over runs the agent beside HAMi's device plugin: the objects of deploy/agent/observe.
	objs, err = helmTemplate(t, "hamiTakeOver.enabled=true")
	if err != nil {
		t.Fatal(err)
	}
	var agent []*unstructured.Unstructured
	for _, u := range objs {
		if strings.HasPrefix(u.GetName(), "kubectl-hami-agent") {
			agent = append(agent, u)
		}
	}
	sameObjects(t, "hamiTakeOver's agent", agent, build(t, filesys.MakeFsOnDisk(), filepath.Join("agent", "observe")))
	if _, err := helmTemplate(t, "agent.mode=plugin"); err == nil || !strings.Contains(err.Error(), "agent.mode must be") {
		t.Errorf("agent.mode=plugin: %v, want a refusal", err)
	}
}

// TestHelmPreemptionValue: extender.preemption=false renders serve-extender's --preemption=false; the default
// renders no flag (the kustomize base's arguments, preemption on).
func TestHelmPreemptionValue(t *testing.T) {
	helmBin(t)
	objs, err := helmTemplate(t)
	if err != nil {
		t.Fatal(err)
	}
	if got := extenderArg(t, objs, "--preemption"); got != "" {
		t.Errorf("default: --preemption=%s, want no flag", got)
	}
	if objs, err = helmTemplate(t, "extender.preemption=false"); err != nil {
		t.Fatal(err)
	}
	if got := extenderArg(t, objs, "--preemption"); got != "false" {
		t.Errorf("extender.preemption=false: --preemption=%q, want false", got)
	}
}

// helmInstalled is what `helm get manifest` says the release installed.
func helmInstalled(t *testing.T, env *testenv.Env) []*unstructured.Unstructured {
	t.Helper()
	out, err := runHelm(t, "get", "manifest", helmRelease, "-n", defaultNamespace, "--kubeconfig", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return parseManifests(t, out)
}

// TestHelmInstallRefusesForgery: `helm install` on a real kube-apiserver (no cert-manager: the chart's own
// certificates) installs the objects of the kustomize default (deploy/extender, deploy/agent/device-plugin, the
// agent variant with the widest RBAC), which then pass the same attack as `kubectl apply -k`
// (TestDefaultInstallRefusesForgery); an upgrade keeps the certificates.
func TestHelmInstallRefusesForgery(t *testing.T) {
	helmBin(t)
	t.Parallel()
	env := testenv.Start(t)
	waitNamespaceExists(t, env.Client, defaultNamespace)
	if out, err := runHelm(t, "install", helmRelease, chartDir, "-n", defaultNamespace, "--kubeconfig", env.Kubeconfig,
		"--set", "agent.mode=device-plugin"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	installed := helmInstalled(t, env)
	sameObjects(t, "helm install", installed, kustomizeObjects(t, []string{baseDir, filepath.Join("agent", "device-plugin")}))
	checkChartCertificates(t, installed)
	dyn, mapper := newApplier(t, env.Config)
	live := func() map[string]*unstructured.Unstructured {
		m := map[string]*unstructured.Unstructured{}
		for _, u := range installed {
			gvk := u.GroupVersionKind()
			mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				t.Fatal(err)
			}
			got, err := dyn.Resource(mapping.Resource).Namespace(u.GetNamespace()).Get(t.Context(), u.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatalf("%s after helm install: %v", objectKey(u), err)
			}
			m[objectKey(u)] = got
		}
		return m
	}
	before := live()

	// An upgrade renders the chart again: the Secrets are looked up and kept, and the caBundle with them.
	if out, err := runHelm(t, "upgrade", helmRelease, chartDir, "-n", defaultNamespace, "--kubeconfig", env.Kubeconfig, "--reuse-values"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	after := live()
	for k, b := range before {
		if b.GetKind() != "Secret" && b.GetKind() != "MutatingWebhookConfiguration" {
			continue
		}
		bj, _ := json.Marshal([]any{b.Object["data"], b.Object["webhooks"]})
		aj, _ := json.Marshal([]any{after[k].Object["data"], after[k].Object["webhooks"]})
		if !bytes.Equal(bj, aj) {
			t.Errorf("helm upgrade changed %s's certificate material", k)
		}
	}
	checkChartCertificates(t, helmInstalled(t, env))

	refusesForgery(t, env)
}

// HAMi's release, as HAMi's chart v2.10.0 (charts/hami) names and labels its objects for a release hami in
// kube-system: the scheduler Deployment, the pod webhook, the device plugin DaemonSet and the scheduler's device
// ConfigMap, and the scheduler's ServiceAccount with the pod writes HAMi's scheduler makes.
func hamiFixtures(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ctx := t.Context()
	meta := func(name, component string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: defaultNamespace,
			Labels: map[string]string{"app.kubernetes.io/component": component, "app.kubernetes.io/name": "hami", helmInstance: "hami",
				"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "hami-2.10.0", "app.kubernetes.io/version": "2.10.0"},
			Annotations: map[string]string{"meta.helm.sh/release-name": "hami", "meta.helm.sh/release-namespace": defaultNamespace}}
	}
	selector := func(component string) map[string]string {
		return map[string]string{"app.kubernetes.io/component": component, "app.kubernetes.io/name": "hami", helmInstance: "hami"}
	}
	podSpec := func(sa, image string) corev1.PodSpec {
		return corev1.PodSpec{ServiceAccountName: sa, Containers: []corev1.Container{{Name: "main", Image: image}}}
	}
	one := int32(1)
	if _, err := c.CoreV1().ServiceAccounts(defaultNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: meta("hami-scheduler", "hami-scheduler")}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "hami-scheduler"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
			{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "hami-scheduler"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "hami-scheduler"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "hami-scheduler", Namespace: defaultNamespace}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sched := &appsv1.Deployment{ObjectMeta: meta("hami-scheduler", "hami-scheduler"), Spec: appsv1.DeploymentSpec{Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: selector("hami-scheduler")},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector("hami-scheduler")}, Spec: podSpec("hami-scheduler", "projecthami/hami:v2.10.0")}}}
	if _, err := c.AppsV1().Deployments(defaultNamespace).Create(ctx, sched, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plugin := &appsv1.DaemonSet{ObjectMeta: meta("hami-device-plugin", "hami-device-plugin"), Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: selector("hami-device-plugin")},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: selector("hami-device-plugin")}, Spec: podSpec("hami-device-plugin", "projecthami/hami:v2.10.0")}}}
	if _, err := c.AppsV1().DaemonSets(defaultNamespace).Create(ctx, plugin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: meta("hami-scheduler-device", "hami-scheduler"),
		Data: map[string]string{"device-config.yaml": "nvidia:\n  resourceCountName: nvidia.com/gpu\n  defaultMemory: 0\n  defaultCores: 0\n  defaultGPUNum: 1\n  memoryFactor: 1\n"}}
	if _, err := c.CoreV1().ConfigMaps(defaultNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createHAMiWebhook(t, c)
}

func createHAMiWebhook(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	ignore, none := admissionv1.Ignore, admissionv1.SideEffectClassNone
	path := "/webhook"
	wh := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hami-webhook",
		Annotations: map[string]string{"meta.helm.sh/release-name": "hami", "meta.helm.sh/release-namespace": defaultNamespace}},
		Webhooks: []admissionv1.MutatingWebhook{{Name: "vgpu.hami.io", AdmissionReviewVersions: []string{"v1beta1"}, FailurePolicy: &ignore, SideEffects: &none,
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Name: "hami-scheduler", Namespace: defaultNamespace, Path: &path}},
			// Never matched in this test (no pod carries the label): only its presence matters here.
			ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"hami-webhook-test": "never"}},
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}}}
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(t.Context(), wh, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// hamiState is what the take-over must leave alone: the resourceVersions of HAMi's device plugin and device
// ConfigMap.
func hamiState(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	ds, err := c.AppsV1().DaemonSets(defaultNamespace).Get(t.Context(), "hami-device-plugin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := c.CoreV1().ConfigMaps(defaultNamespace).Get(t.Context(), "hami-scheduler-device", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds.ResourceVersion + "/" + cm.ResourceVersion
}

// setHAMiScheduler does what `helm upgrade hami ... --set scheduler.replicas=N --set
// scheduler.admissionWebhook.enabled=B` does to HAMi's release (HAMi's chart is not run here).
func setHAMiScheduler(t *testing.T, c kubernetes.Interface, on bool) {
	t.Helper()
	replicas := 0
	if on {
		replicas = 1
	}
	if _, err := c.AppsV1().Deployments(defaultNamespace).Patch(t.Context(), "hami-scheduler", types.MergePatchType,
		fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if on {
		createHAMiWebhook(t, c)
	} else if err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(t.Context(), "hami-webhook", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestHelmTakeOverFromHAMi: a HAMi release (fixtures named and labelled as HAMi's chart makes them) is present;
// the chart with hamiTakeOver refuses to install while HAMi's scheduler and webhook are on and names the command
// that turns them off; once off, it installs beside HAMi's device plugin and device ConfigMap without touching
// them, reads HAMi's ConfigMap, and keeps HAMi's scheduler from placing pods; `helm uninstall` removes only its
// own objects, and HAMi's scheduler, turned back on, places pods again.
func TestHelmTakeOverFromHAMi(t *testing.T) {
	helmBin(t)
	t.Parallel()
	env := testenv.Start(t)
	ctx := t.Context()
	c := env.Client
	waitNamespaceExists(t, c, defaultNamespace)
	hamiFixtures(t, c)
	state := hamiState(t, c)
	install := []string{"install", helmRelease, chartDir, "-n", defaultNamespace, "--kubeconfig", env.Kubeconfig,
		"--set", "hamiTakeOver.enabled=true"}

	// A release name that names no HAMi release is refused.
	if _, err := runHelm(t, append(slices.Clone(install), "--set", "hamiTakeOver.release=hami-gpu")...); err == nil ||
		!strings.Contains(err.Error(), `no HAMi release "hami-gpu" in kube-system`) {
		t.Errorf("helm install taking over from a release that is not there: %v, want a refusal", err)
	}
	_, err := runHelm(t, install...)
	if err == nil || !strings.Contains(err.Error(), "scheduler.replicas=0 --set scheduler.admissionWebhook.enabled=false") {
		t.Fatalf("helm install with hamiTakeOver while HAMi's scheduler runs: %v, want a refusal naming HAMi's values", err)
	}
	t.Logf("refused while HAMi runs: %v", err)
	setHAMiScheduler(t, c, false)
	_, err = runHelm(t, install...)
	if err != nil {
		t.Fatal(err)
	}
	if got := hamiState(t, c); got != state {
		t.Errorf("the take-over changed HAMi's device plugin or device ConfigMap: %s, was %s", got, state)
	}
	if got := extenderArg(t, helmInstalled(t, env), "--hami-configmap"); got != "kube-system/hami-scheduler-device" {
		t.Errorf("the extender reads %s, want HAMi's kube-system/hami-scheduler-device", got)
	}
	ext := tokenClient(t, env, defaultNamespace, serviceAccount, nil)
	if _, err := ext.CoreV1().ConfigMaps(defaultNamespace).Get(ctx, "hami-scheduler-device", metav1.GetOptions{}); err != nil {
		t.Errorf("the extender may not read HAMi's device ConfigMap: %v", err)
	}

	// HAMi's scheduler, were it scaled up again behind the take-over's back, may not place a pod.
	hami := tokenClient(t, env, defaultNamespace, "hami-scheduler", nil)
	if _, err := c.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gpu-pod"},
		Spec: corev1.PodSpec{SchedulerName: schedulerName, Containers: []corev1.Container{{Name: "main", Image: "registry.example/cuda:12"}}}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	try := 0
	place := func() error {
		try++
		_, err := hami.CoreV1().Pods("default").Patch(ctx, "gpu-pod", types.MergePatchType,
			fmt.Appendf(nil, `{"metadata":{"annotations":{"hami.io/vgpu-node":"gpu-00","hami.io/vgpu-devices-allocated":"GPU-0,NVIDIA,%d,0:;"}}}`, 1000+try),
			metav1.PatchOptions{})
		return err
	}
	waitFor(t, 30*time.Second, "the placement policy refusing HAMi's scheduler", func() error {
		if err := place(); !apierrors.IsForbidden(err) {
			return fmt.Errorf("not refused: %v", err)
		}
		return nil
	})

	if out, err := runHelm(t, "uninstall", helmRelease, "-n", defaultNamespace, "--kubeconfig", env.Kubeconfig); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := hamiState(t, c); got != state {
		t.Errorf("the uninstall changed HAMi's device plugin or device ConfigMap: %s, was %s", got, state)
	}
	if _, err := c.AppsV1().Deployments(defaultNamespace).Get(ctx, "kubectl-hami-extender", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the extender's Deployment after helm uninstall: %v", err)
	}
	for _, s := range []string{"kubectl-hami-extender-tls", "kubectl-hami-extender-ca"} {
		if _, err := c.CoreV1().Secrets(defaultNamespace).Get(ctx, s, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret %s after helm uninstall: %v", s, err)
		}
	}
	// Given back: HAMi's own chart turns its scheduler and webhook on again, and HAMi's scheduler places pods.
	setHAMiScheduler(t, c, true)
	waitFor(t, 30*time.Second, "HAMi's scheduler placing pods again", place)
	d, err := c.AppsV1().Deployments(defaultNamespace).Get(ctx, "hami-scheduler", metav1.GetOptions{})
	if err != nil || *d.Spec.Replicas != 1 || d.Annotations["meta.helm.sh/release-name"] != "hami" {
		t.Errorf("HAMi's scheduler after the give-back: %v, %v", d, err)
	}
}

// TestHelmTemplateOtherNamespace: installed into another namespace (helm install -n gpu-system), the chart holds
// what a kustomize overlay with `namespace: gpu-system` builds from deploy/extender, except that the chart also
// moves the scheduler configuration's leaderElection.resourceNamespace (the overlay leaves kube-system there, and
// the Deployment's --leader-elect-resource-namespace overrides it) and names no namespace on the cluster-scoped
// policies (kustomize's schema gives them one; the API server drops it).
func TestHelmTemplateOtherNamespace(t *testing.T) {
	helmBin(t)
	const ns = "gpu-system"
	out, err := runHelm(t, "template", helmRelease, chartDir, "-n", ns, "--kube-version", helmKube, "--set", "agent.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	chart := parseManifests(t, out)
	overlay := namespaceOverlay(t, ns)
	for _, u := range overlay {
		if clusterScoped[u.GetKind()] {
			u.SetNamespace("")
		}
		if u.GetKind() == "ConfigMap" && u.GetName() == "kubectl-hami-scheduler-config" {
			cfg, _, _ := unstructured.NestedString(u.Object, "data", "config.yaml")
			_ = unstructured.SetNestedField(u.Object, strings.Replace(cfg, "resourceNamespace: kube-system", "resourceNamespace: "+ns, 1), "data", "config.yaml")
		}
	}
	sameObjects(t, "-n "+ns, chart, overlay)
	for _, u := range chart {
		if u.GetKind() == "Secret" && u.GetNamespace() != ns {
			t.Errorf("Secret %s is in %s", u.GetName(), u.GetNamespace())
		}
	}
	srv := findObject(chart, "Secret", "kubectl-hami-extender-tls")
	cert := parseCert(t, "serving certificate", secretPEM(t, srv, "tls.crt"))
	if err := cert.VerifyHostname("kubectl-hami-extender." + ns + ".svc"); err != nil {
		t.Errorf("the serving certificate in %s: %v", ns, err)
	}
}

// TestHelmCertificatesScheduleGPUPod runs TestDeployedRBACSchedulesGPUPod with the certificates the chart generates
// (helm template, source helm) instead of the test's own: kube-scheduler reaches the extender with the chart's
// client certificate and the API server calls the webhook with the chart's kube-apiserver certificate.
func TestHelmCertificatesScheduleGPUPod(t *testing.T) {
	helmBin(t)
	t.Parallel()
	objs, err := helmTemplate(t)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(secret, key string) string {
		s := findObject(objs, "Secret", secret)
		if s == nil {
			t.Fatalf("no Secret %s", secret)
		}
		path := filepath.Join(dir, secret+"-"+key)
		if err := os.WriteFile(path, secretPEM(t, s, key), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pki := testPKI{caFile: write("kubectl-hami-extender-tls", "ca.crt"),
		serverCert: write("kubectl-hami-extender-tls", "tls.crt"), serverKey: write("kubectl-hami-extender-tls", "tls.key"),
		clientCert: write("kubectl-hami-scheduler-client", "tls.crt"), clientKey: write("kubectl-hami-scheduler-client", "tls.key"),
		apiserverCert: write("kubectl-hami-apiserver-webhook-client", "tls.crt"), apiserverKey: write("kubectl-hami-apiserver-webhook-client", "tls.key")}
	pki.caPEM, _ = os.ReadFile(pki.caFile)
	deployedSchedulesGPUPod(t, pki)
}

// TestChartVersionMatchesImages: the chart's appVersion is the tag of the images its values name, which are the
// kustomize bases' images (TestHelmTemplateMatchesKustomize). Runs without helm.
func TestChartVersionMatchesImages(t *testing.T) {
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	var values struct {
		Extender struct{ Image string } `json:"extender"`
		Agent    struct{ Image string } `json:"agent"`
	}
	for path, into := range map[string]any{filepath.Join(chartDir, "Chart.yaml"): &chart, filepath.Join(chartDir, "values.yaml"): &values} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if "v"+chart.Version != chart.AppVersion {
		t.Errorf("Chart.yaml: version %s, appVersion %s: want appVersion v<version>", chart.Version, chart.AppVersion)
	}
	for _, img := range []string{values.Extender.Image, values.Agent.Image} {
		if _, tag, _ := strings.Cut(img, ":"); tag != chart.AppVersion {
			t.Errorf("values.yaml: image %s, want tag %s (the chart's appVersion)", img, chart.AppVersion)
		}
	}
}
