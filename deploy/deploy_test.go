package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// baseDir is the kustomize base under test, relative to this package.
const baseDir = "extender"

// Names the manifests must agree on (with serve-extender's defaults and HAMi's).
const (
	defaultNamespace   = "kube-system"
	serviceAccount     = "kubectl-hami-extender"
	schedulerName      = "hami-scheduler"
	schedulerLease     = "hami-scheduler"
	extenderLease      = "kubectl-hami-extender"
	hamiDeviceConfig   = "hami-scheduler-device"
	schedulerConfigMap = "kubectl-hami-scheduler-config"
	schedulerConfigKey = "config.yaml"
	tlsSecret          = "kubectl-hami-extender-tls"
	// schedulerClientSecret holds kube-scheduler's client certificate for the extender, with CN schedulerClientCN.
	schedulerClientSecret = "kubectl-hami-scheduler-client"
	schedulerClientCN     = "kubectl-hami-scheduler"
	schedulerImage        = "registry.k8s.io/kube-scheduler:" + testenv.KubernetesVersion
	extenderImage         = "ghcr.io/kubectl-hami/kubectl-hami:v0.1.0"
	fieldManager          = "kubectl-hami-test"
)

// managedResources are HAMi's default resource names: kube-scheduler must send pods asking for any of them to
// the extender and must not count them itself.
var managedResources = engine.DefaultConfig().ManagedResources()

// kustomization is the part of kustomization.yaml the tiny reader follows.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace"`
	Resources  []string `json:"resources"`
}

// manifest is one YAML document of the base.
type manifest struct {
	File  string // relative to baseDir
	Index int    // document index within File
	Obj   *unstructured.Unstructured
	Typed runtime.Object // decoded strictly into its Go type
}

func (m manifest) String() string {
	name := m.Obj.GetName()
	if ns := m.Obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return fmt.Sprintf("%s#%d %s %s", m.File, m.Index, m.Obj.GetKind(), name)
}

// base is the kustomization and its documents in the order of its resources.
type base struct {
	Kustomization kustomization
	// KustomizationNamespace is kustomization.yaml's own namespace field (Kustomization.Namespace is the objects').
	KustomizationNamespace string
	Manifests              []manifest
}

// readBase reads kustomization.yaml and every document of every resource it lists, in that order, the way
// `kubectl apply -k` sees them (the base sets no labels, prefixes or patches; namespaced objects name their
// namespace themselves, which the test checks against the kustomization's).
func readBase(t *testing.T, dir string) base {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b base
	if err := yaml.UnmarshalStrict(raw, &b.Kustomization); err != nil {
		t.Fatalf("kustomization.yaml: %v (the tiny reader knows apiVersion, kind, namespace and resources only)", err)
	}
	b.KustomizationNamespace = b.Kustomization.Namespace
	if b.Kustomization.Namespace == "" {
		b.Kustomization.Namespace = defaultNamespace // the objects name it themselves (TestBaseFiles)
	}
	if len(b.Kustomization.Resources) == 0 {
		t.Fatal("kustomization.yaml lists no resources")
	}
	for _, file := range b.Kustomization.Resources {
		docs, err := readDocuments(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(docs) == 0 {
			t.Fatalf("%s: no documents", file)
		}
		for i, doc := range docs {
			m, err := decodeManifest(doc)
			if err != nil {
				t.Fatalf("%s document %d: %v", file, i, err)
			}
			m.File, m.Index = file, i
			b.Manifests = append(b.Manifests, m)
		}
	}
	return b
}

// readDocuments splits a YAML file into its documents as JSON, skipping documents that hold only comments.
func readDocuments(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		j, err := yaml.YAMLToJSONStrict(doc) // duplicate keys are errors
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue
		}
		docs = append(docs, j)
	}
}

// decodeManifest parses one document and decodes it into its Go type, failing on unknown fields.
func decodeManifest(doc []byte) (manifest, error) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(doc); err != nil {
		return manifest{}, err
	}
	if obj.GetName() == "" {
		return manifest{}, fmt.Errorf("%s has no metadata.name", obj.GetKind())
	}
	typed, err := scheme.Scheme.New(obj.GroupVersionKind())
	if err != nil {
		return manifest{}, fmt.Errorf("%s: %w", obj.GroupVersionKind(), err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, typed, true); err != nil {
		return manifest{}, fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return manifest{Obj: obj, Typed: typed}, nil
}

// clusterScoped are the cluster-wide kinds the base may hold.
var clusterScoped = map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "MutatingWebhookConfiguration": true, "Namespace": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}

// only returns the objects of type T, and fails unless there is at least one.
func only[T runtime.Object](t *testing.T, b base) []T {
	t.Helper()
	var out []T
	for _, m := range b.Manifests {
		if v, ok := m.Typed.(T); ok {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		var zero T
		t.Fatalf("the base has no %T", zero)
	}
	return out
}

// one returns the only object of type T with the name.
func one[T interface {
	runtime.Object
	GetName() string
}](t *testing.T, b base, name string) T {
	t.Helper()
	for _, v := range only[T](t, b) {
		if v.GetName() == name {
			return v
		}
	}
	var zero T
	t.Fatalf("the base has no %T named %s", zero, name)
	return zero
}

// TestBaseFiles checks the kustomization against the folder and every object's identity.
func TestBaseFiles(t *testing.T) {
	b := readBase(t, baseDir)
	k := b.Kustomization
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml is %s %s, want kustomize.config.k8s.io/v1beta1 Kustomization", k.APIVersion, k.Kind)
	}
	// No namespace: kustomize's built-in schema does not know ValidatingAdmissionPolicy is cluster-scoped and would
	// give it one; every namespaced object names defaultNamespace instead (checked below).
	if b.KustomizationNamespace != "" {
		t.Errorf("kustomization namespace = %q, want none (the objects name %s)", b.KustomizationNamespace, defaultNamespace)
	}
	files, err := filepath.Glob(filepath.Join(baseDir, "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := filepath.Base(f); name != "kustomization.yaml" && !slices.Contains(k.Resources, name) {
			t.Errorf("%s is not listed in kustomization.yaml resources, so `kubectl apply -k` would skip it", name)
		}
	}
	seen := map[string]string{}
	for _, m := range b.Manifests {
		key := m.Obj.GroupVersionKind().GroupKind().String() + " " + m.Obj.GetNamespace() + "/" + m.Obj.GetName()
		if prev, dup := seen[key]; dup {
			t.Errorf("%s duplicates %s", m, prev)
		}
		seen[key] = m.String()
		switch ns := m.Obj.GetNamespace(); {
		case clusterScoped[m.Obj.GetKind()] && ns != "":
			t.Errorf("%s is cluster-scoped but names namespace %q", m, ns)
		case !clusterScoped[m.Obj.GetKind()] && ns != k.Namespace:
			t.Errorf("%s: namespace %q, want the kustomization's %q", m, ns, k.Namespace)
		}
		if l := m.Obj.GetLabels(); l["app.kubernetes.io/name"] != "kubectl-hami-extender" || l["app.kubernetes.io/part-of"] != "kubectl-hami" {
			t.Errorf("%s: labels %v lack app.kubernetes.io/name=kubectl-hami-extender, app.kubernetes.io/part-of=kubectl-hami", m, l)
		}
	}
	t.Logf("%d objects from %d files", len(b.Manifests), len(k.Resources))
}

// schedulerConfiguration mirrors kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration (k8s.io/kube-scheduler
// /config/v1, field for field, without pluginConfig's nested arguments). The package itself cannot be imported:
// it needs k8s.io/component-base, which is not in go.mod. Decoded strictly, a misspelt field fails here; the
// real kube-scheduler decodes the same text strictly in TestDeployedRBACSchedulesGPUPod.
type schedulerConfiguration struct {
	metav1.TypeMeta `json:",inline"`
	Parallelism     *int32 `json:"parallelism,omitempty"`
	LeaderElection  struct {
		LeaderElect       *bool           `json:"leaderElect"`
		LeaseDuration     metav1.Duration `json:"leaseDuration"`
		RenewDeadline     metav1.Duration `json:"renewDeadline"`
		RetryPeriod       metav1.Duration `json:"retryPeriod"`
		ResourceLock      string          `json:"resourceLock"`
		ResourceName      string          `json:"resourceName"`
		ResourceNamespace string          `json:"resourceNamespace"`
	} `json:"leaderElection"`
	ClientConnection struct {
		Kubeconfig         string  `json:"kubeconfig"`
		AcceptContentTypes string  `json:"acceptContentTypes"`
		ContentType        string  `json:"contentType"`
		QPS                float32 `json:"qps"`
		Burst              int32   `json:"burst"`
	} `json:"clientConnection"`
	EnableProfiling           *bool  `json:"enableProfiling,omitempty"`
	EnableContentionProfiling *bool  `json:"enableContentionProfiling,omitempty"`
	PercentageOfNodesToScore  *int32 `json:"percentageOfNodesToScore,omitempty"`
	PodInitialBackoffSeconds  *int64 `json:"podInitialBackoffSeconds,omitempty"`
	PodMaxBackoffSeconds      *int64 `json:"podMaxBackoffSeconds,omitempty"`
	Profiles                  []struct {
		SchedulerName            *string          `json:"schedulerName,omitempty"`
		PercentageOfNodesToScore *int32           `json:"percentageOfNodesToScore,omitempty"`
		Plugins                  map[string]any   `json:"plugins,omitempty"`
		PluginConfig             []map[string]any `json:"pluginConfig,omitempty"`
	} `json:"profiles,omitempty"`
	Extenders             []schedulerExtender `json:"extenders,omitempty"`
	DelayCacheUntilActive bool                `json:"delayCacheUntilActive,omitempty"`
}

// schedulerExtender mirrors k8s.io/kube-scheduler/config/v1 Extender.
type schedulerExtender struct {
	URLPrefix      string `json:"urlPrefix"`
	FilterVerb     string `json:"filterVerb,omitempty"`
	PreemptVerb    string `json:"preemptVerb,omitempty"`
	PrioritizeVerb string `json:"prioritizeVerb,omitempty"`
	Weight         int64  `json:"weight,omitempty"`
	BindVerb       string `json:"bindVerb,omitempty"`
	EnableHTTPS    bool   `json:"enableHTTPS,omitempty"`
	TLSConfig      *struct {
		Insecure   bool   `json:"insecure,omitempty"`
		ServerName string `json:"serverName,omitempty"`
		CertFile   string `json:"certFile,omitempty"`
		KeyFile    string `json:"keyFile,omitempty"`
		CAFile     string `json:"caFile,omitempty"`
		CertData   []byte `json:"certData,omitempty"`
		KeyData    []byte `json:"keyData,omitempty"`
		CAData     []byte `json:"caData,omitempty"`
	} `json:"tlsConfig,omitempty"`
	HTTPTimeout      metav1.Duration `json:"httpTimeout,omitempty"`
	NodeCacheCapable bool            `json:"nodeCacheCapable,omitempty"`
	ManagedResources []struct {
		Name               string `json:"name"`
		IgnoredByScheduler bool   `json:"ignoredByScheduler,omitempty"`
	} `json:"managedResources,omitempty"`
	Ignorable bool `json:"ignorable,omitempty"`
}

// schedulerConfig decodes the KubeSchedulerConfiguration of the base's ConfigMap, failing on unknown fields.
func schedulerConfig(t *testing.T, b base) (*schedulerConfiguration, string) {
	t.Helper()
	cm := one[*corev1.ConfigMap](t, b, schedulerConfigMap)
	raw, ok := cm.Data[schedulerConfigKey]
	if !ok {
		t.Fatalf("ConfigMap %s has no key %s (keys %v)", cm.Name, schedulerConfigKey, keys(cm.Data))
	}
	cfg := &schedulerConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(raw), cfg); err != nil {
		t.Fatalf("ConfigMap %s key %s is not a KubeSchedulerConfiguration: %v", cm.Name, schedulerConfigKey, err)
	}
	return cfg, raw
}

// TestSchedulerConfiguration checks the extender wiring of kube-scheduler field by field, so a typo fails.
func TestSchedulerConfiguration(t *testing.T) {
	b := readBase(t, baseDir)
	cfg, _ := schedulerConfig(t, b)
	if cfg.APIVersion != "kubescheduler.config.k8s.io/v1" || cfg.Kind != "KubeSchedulerConfiguration" {
		t.Errorf("apiVersion/kind = %s/%s, want kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration", cfg.APIVersion, cfg.Kind)
	}
	le := cfg.LeaderElection
	if le.LeaderElect == nil || !*le.LeaderElect || le.ResourceName != schedulerLease || le.ResourceLock != "leases" {
		t.Errorf("leaderElection = %+v, want leaderElect true, resourceLock leases, resourceName %s", le, schedulerLease)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName == nil || *cfg.Profiles[0].SchedulerName != schedulerName {
		t.Errorf("profiles = %+v, want exactly one with schedulerName %s", cfg.Profiles, schedulerName)
	}
	if p := cfg.PercentageOfNodesToScore; p == nil || *p != 100 {
		t.Errorf("percentageOfNodesToScore = %v, want 100 (the extender must see every node kube-scheduler finds feasible)", p)
	}
	if len(cfg.Extenders) != 1 {
		t.Fatalf("extenders: %d entries, want 1", len(cfg.Extenders))
	}
	e := cfg.Extenders[0]
	for _, c := range []struct{ field, got, want string }{
		{"urlPrefix", e.URLPrefix, "https://127.0.0.1:8443"},
		{"filterVerb", e.FilterVerb, "filter"},
		{"prioritizeVerb", e.PrioritizeVerb, "prioritize"},
		{"bindVerb", e.BindVerb, "bind"},
		{"preemptVerb", e.PreemptVerb, "preempt"},
		{"httpTimeout", e.HTTPTimeout.Duration.String(), (30 * time.Second).String()},
	} {
		if c.got != c.want {
			t.Errorf("extenders[0].%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if e.Weight != 1 {
		t.Errorf("extenders[0].weight = %d, want 1", e.Weight)
	}
	if !e.EnableHTTPS || e.TLSConfig == nil || (!e.TLSConfig.Insecure && len(e.TLSConfig.CAData) == 0 && e.TLSConfig.CAFile == "") {
		t.Errorf("extenders[0]: enableHTTPS %v, tlsConfig %+v; want HTTPS with insecure or a CA", e.EnableHTTPS, e.TLSConfig)
	}
	if !e.NodeCacheCapable {
		t.Error("extenders[0].nodeCacheCapable is false: kube-scheduler would send whole Node objects on every call")
	}
	if e.Ignorable {
		t.Error("extenders[0].ignorable is true: GPU pods would be placed without HAMi's fit while the extender is down")
	}
	var names []string
	for _, r := range e.ManagedResources {
		names = append(names, r.Name)
		if !r.IgnoredByScheduler {
			t.Errorf("managedResources %s: ignoredByScheduler false, so kube-scheduler would count it against node allocatable", r.Name)
		}
	}
	if !sameSet(names, managedResources) {
		t.Errorf("managedResources = %v, want %v", names, managedResources)
	}
}

// TestDeploymentWiring checks that the Deployment, ConfigMap, Secret, Service and webhook refer to each other.
func TestDeploymentWiring(t *testing.T) {
	b := readBase(t, baseDir)
	cfg, _ := schedulerConfig(t, b)
	d := one[*appsv1.Deployment](t, b, "kubectl-hami-extender")
	pod := d.Spec.Template.Spec
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("replicas %v, strategy %q; want 1 replica with Recreate (two leader elections; /readyz needs the Lease)", d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err != nil || !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Deployment's selector does not match its template (%v)", err)
	}
	if pod.ServiceAccountName != serviceAccount {
		t.Errorf("serviceAccountName = %q, want %q", pod.ServiceAccountName, serviceAccount)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 ||
		sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod securityContext = %+v, want non-root with a RuntimeDefault seccomp profile", sc)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	containers := map[string]corev1.Container{}
	for _, c := range pod.Containers {
		containers[c.Name] = c
		checkContainer(t, c)
	}
	if len(containers) != 2 {
		t.Fatalf("containers %v, want kube-scheduler and extender", keys(containers))
	}

	sched, ok := containers["kube-scheduler"]
	if !ok {
		t.Fatal("no container kube-scheduler")
	}
	if sched.Image != schedulerImage {
		t.Errorf("kube-scheduler image = %s, want %s", sched.Image, schedulerImage)
	}
	configPath := flagValue(append(slices.Clone(sched.Command), sched.Args...), "--config")
	if vol, key := mountedFile(t, sched, volumes, configPath); vol.ConfigMap == nil || vol.ConfigMap.Name != schedulerConfigMap || key != schedulerConfigKey {
		t.Errorf("kube-scheduler --config=%s is not key %s of ConfigMap %s", configPath, schedulerConfigKey, schedulerConfigMap)
	}
	if ns := flagValue(sched.Command, "--leader-elect-resource-namespace"); ns != "$(POD_NAMESPACE)" || !fromPodNamespace(sched, "POD_NAMESPACE") {
		t.Errorf("kube-scheduler --leader-elect-resource-namespace = %q, want $(POD_NAMESPACE) from metadata.namespace", ns)
	}

	ext, ok := containers["extender"]
	if !ok {
		t.Fatal("no container extender")
	}
	if ext.Image != extenderImage {
		t.Errorf("extender image = %s, want %s", ext.Image, extenderImage)
	}
	// Every flag must exist on the real command: parse the arguments with it.
	if len(ext.Args) == 0 || ext.Args[0] != "serve-extender" {
		t.Fatalf("extender args %v do not start with serve-extender", ext.Args)
	}
	root := cli.NewRootCommand(cli.DefaultStreams())
	cmd, rest, err := root.Find(ext.Args)
	if err != nil || cmd.Name() != "serve-extender" {
		t.Fatalf("extender args %v: command %v, %v", ext.Args, cmd.Name(), err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Errorf("serve-extender rejects the Deployment's arguments %v: %v", rest, err)
	}
	if cmd.Flags().NArg() != 0 {
		t.Errorf("serve-extender takes no arguments, got %v", cmd.Flags().Args())
	}
	for flag, want := range map[string]string{
		"leader-elect":       "true",
		"scheduler-name":     schedulerName,
		"leader-elect-lease": "$(POD_NAMESPACE)/" + extenderLease,
		"hami-configmap":     "$(POD_NAMESPACE)/" + hamiDeviceConfig,
	} {
		if got := cmd.Flags().Lookup(flag).Value.String(); got != want {
			t.Errorf("serve-extender --%s = %q, want %q", flag, got, want)
		}
	}
	if !fromPodNamespace(ext, "POD_NAMESPACE") {
		t.Error("the extender has no env POD_NAMESPACE from metadata.namespace, which its arguments use")
	}
	listen := cmd.Flags().Lookup("listen").Value.String()
	_, listenPort, _ := strings.Cut(listen, ":")
	if want := "https://127.0.0.1:" + listenPort; cfg.Extenders[0].URLPrefix != want {
		t.Errorf("kube-scheduler calls %s but the extender listens on %q", cfg.Extenders[0].URLPrefix, listen)
	}
	httpsPort := containerPort(t, ext, "https")
	if fmt.Sprint(httpsPort) != listenPort {
		t.Errorf("extender containerPort https = %d, --listen=%s", httpsPort, listen)
	}
	for _, flag := range []string{"tls-cert-file", "tls-key-file"} {
		path := cmd.Flags().Lookup(flag).Value.String()
		vol, key := mountedFile(t, ext, volumes, path)
		want := map[string]string{"tls-cert-file": corev1.TLSCertKey, "tls-key-file": corev1.TLSPrivateKeyKey}[flag]
		if vol.Secret == nil || vol.Secret.SecretName != tlsSecret || key != want {
			t.Errorf("--%s=%s is not key %s of Secret %s", flag, path, want, tlsSecret)
		}
	}
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{ext.LivenessProbe, "/healthz"}, {ext.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Scheme != corev1.URISchemeHTTPS ||
			p.probe.HTTPGet.Port != intstr.FromString("https") {
			t.Errorf("extender probe for %s = %+v, want HTTPS GET %s on port https", p.path, p.probe, p.path)
		}
	}

	// The Service sends 443 to the extender's port; the webhook calls the Service.
	svc := one[*corev1.Service](t, b, "kubectl-hami-extender")
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("Service selector %v does not select the Deployment's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}
	webhookPort := containerPort(t, ext, "webhook")
	if _, p, _ := strings.Cut(cmd.Flags().Lookup("webhook-listen").Value.String(), ":"); p != fmt.Sprint(webhookPort) {
		t.Errorf("extender containerPort webhook = %d, --webhook-listen=%s", webhookPort, cmd.Flags().Lookup("webhook-listen").Value)
	}
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort != intstr.FromString("webhook") ||
		svc.Spec.Ports[1].TargetPort != intstr.FromString("https") {
		t.Errorf("Service ports = %+v, want 443 -> webhook (%d) and metrics -> https (%d)", svc.Spec.Ports, webhookPort, httpsPort)
	}
	// Client authentication: the extender trusts the CA of its own Secret for client certificates, and
	// kube-scheduler presents the client certificate of its Secret, signed by that CA, and checks the extender's.
	caPath := cmd.Flags().Lookup("client-ca-file").Value.String()
	if vol, key := mountedFile(t, ext, volumes, caPath); vol.Secret == nil || vol.Secret.SecretName != tlsSecret || key != "ca.crt" {
		t.Errorf("--client-ca-file=%q is not key ca.crt of Secret %s", caPath, tlsSecret)
	}
	if cns, _ := cmd.Flags().GetStringSlice("client-allowed-cn"); !slices.Equal(cns, []string{schedulerClientCN}) {
		t.Errorf("--client-allowed-cn = %v, want [%s]", cns, schedulerClientCN)
	}
	tc := cfg.Extenders[0].TLSConfig
	for path, key := range map[string]string{tc.CertFile: corev1.TLSCertKey, tc.KeyFile: corev1.TLSPrivateKeyKey, tc.CAFile: "ca.crt"} {
		if vol, k := mountedFile(t, sched, volumes, path); vol.Secret == nil || vol.Secret.SecretName != schedulerClientSecret || k != key {
			t.Errorf("kube-scheduler's extender tlsConfig file %q is not key %s of Secret %s", path, key, schedulerClientSecret)
		}
	}
	if tc.Insecure {
		t.Error("kube-scheduler's extender tlsConfig is insecure")
	}
	mwc := one[*admissionregistrationv1.MutatingWebhookConfiguration](t, b, "kubectl-hami-extender")
	if len(mwc.Webhooks) != 1 {
		t.Fatalf("webhooks: %d, want 1", len(mwc.Webhooks))
	}
	wh := mwc.Webhooks[0]
	s := wh.ClientConfig.Service
	if s == nil || s.Name != svc.Name || s.Namespace != svc.Namespace || s.Path == nil || *s.Path != "/webhook" || s.Port == nil || *s.Port != 443 {
		t.Errorf("webhook clientConfig.service = %+v, want %s/%s:443 path /webhook", s, svc.Namespace, svc.Name)
	}
	if wh.ClientConfig.URL != nil {
		t.Errorf("webhook clientConfig.url = %s, want the Service only", *wh.ClientConfig.URL)
	}
	if len(wh.ClientConfig.CABundle) == 0 {
		t.Error("webhook caBundle is empty: keep the placeholder that docs/deploy.md replaces")
	} else if string(wh.ClientConfig.CABundle) != "CA_BUNDLE_PLACEHOLDER" && !bytes.Contains(wh.ClientConfig.CABundle, []byte("BEGIN CERTIFICATE")) {
		t.Errorf("webhook caBundle decodes to %q: neither the placeholder nor a PEM certificate", wh.ClientConfig.CABundle)
	}
	if wh.FailurePolicy == nil || *wh.FailurePolicy != admissionregistrationv1.Ignore {
		t.Errorf("failurePolicy = %v, want Ignore (as HAMi: an extender outage must not block pod creation)", wh.FailurePolicy)
	}
	if wh.SideEffects == nil || *wh.SideEffects != admissionregistrationv1.SideEffectClassNone {
		t.Errorf("sideEffects = %v, want None", wh.SideEffects)
	}
	if !slices.Equal(wh.AdmissionReviewVersions, []string{"v1"}) {
		t.Errorf("admissionReviewVersions = %v, want [v1]", wh.AdmissionReviewVersions)
	}
	if len(wh.Rules) != 1 || !slices.Equal(wh.Rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) ||
		!slices.Equal(wh.Rules[0].APIGroups, []string{""}) || !slices.Equal(wh.Rules[0].Resources, []string{"pods"}) {
		t.Errorf("webhook rules = %+v, want pods CREATE in the core group", wh.Rules)
	}
	nsSel, err := metav1.LabelSelectorAsSelector(wh.NamespaceSelector)
	if err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]bool{"kube-system": false, "default": true, "team-a": true} {
		if got := nsSel.Matches(labels.Set{corev1.LabelMetadataName: ns}); got != want {
			t.Errorf("webhook namespaceSelector matches namespace %s: %v, want %v", ns, got, want)
		}
	}
	if nsSel.Matches(labels.Set{corev1.LabelMetadataName: "team-a", "hami.io/webhook": "ignore"}) {
		t.Error("webhook namespaceSelector matches a namespace labelled hami.io/webhook=ignore")
	}
	objSel, err := metav1.LabelSelectorAsSelector(wh.ObjectSelector)
	if err != nil {
		t.Fatal(err)
	}
	if objSel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Error("webhook objectSelector matches the extender's own pods")
	}
	if !objSel.Matches(labels.Set{"app": "trainer"}) {
		t.Error("webhook objectSelector does not match an ordinary pod")
	}
}

// checkContainer checks what every container must have.
func checkContainer(t *testing.T, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || (sc.Privileged != nil && *sc.Privileged) {
		t.Errorf("container %s securityContext = %+v, want readOnlyRootFilesystem, no privilege escalation, drop ALL", c.Name, sc)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
		t.Errorf("container %s resources = %+v, want cpu and memory requests and a memory limit", c.Name, c.Resources)
	}
	if c.LivenessProbe == nil || c.ReadinessProbe == nil {
		t.Errorf("container %s lacks a liveness or readiness probe", c.Name)
	}
	for _, p := range []*corev1.Probe{c.LivenessProbe, c.ReadinessProbe} {
		if p != nil && p.HTTPGet != nil && p.HTTPGet.Port.Type == intstr.String {
			containerPort(t, c, p.HTTPGet.Port.StrVal)
		}
	}
}

// containerPort returns the number of a named port of the container.
func containerPort(t *testing.T, c corev1.Container, name string) int32 {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	t.Errorf("container %s has no port named %s", c.Name, name)
	return 0
}

// fromPodNamespace reports whether the container's env var is the pod's namespace.
func fromPodNamespace(c corev1.Container, name string) bool {
	for _, e := range c.Env {
		if e.Name == name {
			return e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
		}
	}
	return false
}

// mountedFile returns the volume and key a file path inside the container comes from.
func mountedFile(t *testing.T, c corev1.Container, volumes map[string]corev1.Volume, path string) (corev1.Volume, string) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if rel, ok := strings.CutPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/"); ok && !strings.Contains(rel, "/") {
			if !m.ReadOnly {
				t.Errorf("container %s mounts %s writable", c.Name, m.MountPath)
			}
			v, ok := volumes[m.Name]
			if !ok {
				t.Errorf("container %s mounts volume %s, which the pod does not have", c.Name, m.Name)
			}
			return v, rel
		}
	}
	t.Errorf("container %s: %q is under no volume mount", c.Name, path)
	return corev1.Volume{}, ""
}

// flagValue returns the value of --name=value in args.
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// access is one API call, as RBAC sees it.
type access struct {
	Group, Resource, Subresource, Verb, Namespace, Name string
}

func (a access) String() string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	where := "cluster-wide"
	if a.Namespace != "" {
		where = "in " + a.Namespace
	}
	if a.Name != "" {
		return fmt.Sprintf("%s %s %s %s", a.Verb, r, a.Name, where)
	}
	return fmt.Sprintf("%s %s %s", a.Verb, r, where)
}

// extenderCalls are the API calls serve-extender makes (internal/cli/serveextender.go, internal/extender:
// informers, bind, events, leader election) in a cluster whose pods live in team-a.
func extenderCalls(ns string) []access {
	return []access{
		{Resource: "nodes", Verb: "list"}, {Resource: "nodes", Verb: "watch"},
		{Resource: "nodes", Verb: "get", Name: "gpu-1"}, {Resource: "nodes", Verb: "patch", Name: "gpu-1"},
		{Resource: "pods", Verb: "list"}, {Resource: "pods", Verb: "watch"},
		{Resource: "pods", Verb: "get", Namespace: "team-a", Name: "p"}, {Resource: "pods", Verb: "patch", Namespace: "team-a", Name: "p"},
		{Resource: "pods", Subresource: "binding", Verb: "create", Namespace: "team-a", Name: "p"},
		{Resource: "events", Verb: "create", Namespace: "team-a"},
		{Resource: "resourcequotas", Verb: "list"}, {Resource: "resourcequotas", Verb: "watch"},
		// Preemption (--preemption): the victim search's objects, the nomination and DisruptionTarget, the eviction.
		{Group: "policy", Resource: "poddisruptionbudgets", Verb: "list"}, {Group: "policy", Resource: "poddisruptionbudgets", Verb: "watch"},
		{Group: "scheduling.k8s.io", Resource: "priorityclasses", Verb: "list"}, {Group: "scheduling.k8s.io", Resource: "priorityclasses", Verb: "watch"},
		{Resource: "pods", Subresource: "status", Verb: "patch", Namespace: "team-a", Name: "p"},
		{Resource: "pods", Verb: "delete", Namespace: "team-a", Name: "p"},
		{Resource: "configmaps", Verb: "get", Namespace: ns, Name: hamiDeviceConfig},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Namespace: ns, Name: extenderLease},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "create", Namespace: ns},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Namespace: ns, Name: extenderLease},
	}
}

// schedulerCalls are kube-scheduler's calls that its built-in roles (system:kube-scheduler and
// system:volume-scheduler) do not cover: leader election on its own Lease, and the client CAs of its delegated
// authentication (an informer on one ConfigMap: list and watch with a metadata.name field selector).
func schedulerCalls(ns string) []access {
	const authCM = "extension-apiserver-authentication"
	return []access{
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Namespace: ns, Name: schedulerLease},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "create", Namespace: ns},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Namespace: ns, Name: schedulerLease},
		{Resource: "configmaps", Verb: "get", Namespace: "kube-system", Name: authCM},
		{Resource: "configmaps", Verb: "list", Namespace: "kube-system", Name: authCM},
		{Resource: "configmaps", Verb: "watch", Namespace: "kube-system", Name: authCM},
	}
}

// notGranted are calls the pod must not be able to make through the base's own roles.
func notGranted(ns string) []access {
	return []access{
		{Resource: "secrets", Verb: "get", Namespace: ns, Name: tlsSecret},
		{Resource: "secrets", Verb: "list"},
		{Resource: "nodes", Verb: "delete", Name: "gpu-1"},
		{Resource: "nodes", Verb: "update", Name: "gpu-1"},
		{Resource: "pods", Verb: "update", Namespace: "team-a", Name: "p"},
		{Resource: "configmaps", Verb: "get", Namespace: ns, Name: "other"},
		{Resource: "configmaps", Verb: "list", Namespace: "kube-system"},
		{Resource: "configmaps", Verb: "update", Namespace: ns, Name: hamiDeviceConfig},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "update", Namespace: ns, Name: "kube-controller-manager"},
		{Group: "coordination.k8s.io", Resource: "leases", Verb: "delete", Namespace: ns, Name: extenderLease},
		{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Verb: "update", Name: "kubectl-hami-extender"},
	}
}

// boundRules returns the rules of the base's own Roles and ClusterRoles that are bound to the ServiceAccount,
// with the namespace each applies in ("" = everywhere), and the names of the roles bound that the base does not
// define.
func boundRules(t *testing.T, b base, ns string) (rules []scopedRule, external []string) {
	t.Helper()
	isSA := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == rbacv1.ServiceAccountKind && s.Name == serviceAccount && s.Namespace == ns
		})
	}
	clusterRoles := map[string]*rbacv1.ClusterRole{}
	for _, r := range only[*rbacv1.ClusterRole](t, b) {
		clusterRoles[r.Name] = r
	}
	roles := map[string]*rbacv1.Role{}
	for _, r := range only[*rbacv1.Role](t, b) {
		roles[r.Namespace+"/"+r.Name] = r
	}
	for _, crb := range only[*rbacv1.ClusterRoleBinding](t, b) {
		if !isSA(crb.Subjects) {
			continue
		}
		if cr, ok := clusterRoles[crb.RoleRef.Name]; ok && crb.RoleRef.Kind == "ClusterRole" {
			for _, r := range cr.Rules {
				rules = append(rules, scopedRule{r, ""})
			}
		} else {
			external = append(external, crb.RoleRef.Kind+" "+crb.RoleRef.Name)
		}
	}
	for _, rb := range only[*rbacv1.RoleBinding](t, b) {
		if !isSA(rb.Subjects) {
			continue
		}
		switch rb.RoleRef.Kind {
		case "Role":
			if r, ok := roles[rb.Namespace+"/"+rb.RoleRef.Name]; ok {
				for _, rule := range r.Rules {
					rules = append(rules, scopedRule{rule, rb.Namespace})
				}
				continue
			}
		case "ClusterRole":
			if cr, ok := clusterRoles[rb.RoleRef.Name]; ok {
				for _, rule := range cr.Rules {
					rules = append(rules, scopedRule{rule, rb.Namespace})
				}
				continue
			}
		}
		external = append(external, rb.RoleRef.Kind+" "+rb.Namespace+"/"+rb.RoleRef.Name)
	}
	return rules, external
}

type scopedRule struct {
	rbacv1.PolicyRule
	Namespace string // "" when granted cluster-wide
}

// allows reports whether the rule grants the access (RBAC's own matching: "*" wildcards, resourceNames only
// for requests that name an object).
func (r scopedRule) allows(a access) bool {
	if r.Namespace != "" && r.Namespace != a.Namespace {
		return false
	}
	match := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if !match(r.APIGroups, a.Group) || !match(r.Verbs, a.Verb) || !match(r.Resources, res) {
		return false
	}
	return len(r.ResourceNames) == 0 || (a.Name != "" && slices.Contains(r.ResourceNames, a.Name))
}

// TestRBACGrantsWhatTheExtenderCalls evaluates the base's own roles: every call of serve-extender and the
// calls of kube-scheduler that its built-in roles do not cover are allowed, and nothing beyond what they need is.
func TestRBACGrantsWhatTheExtenderCalls(t *testing.T) {
	b := readBase(t, baseDir)
	ns := b.Kustomization.Namespace
	rules, external := boundRules(t, b, ns)
	allowed := func(a access) bool { return slices.ContainsFunc(rules, func(r scopedRule) bool { return r.allows(a) }) }
	for _, a := range append(extenderCalls(ns), schedulerCalls(ns)...) {
		if !allowed(a) {
			t.Errorf("the ServiceAccount may not %s", a)
		}
	}
	for _, a := range notGranted(ns) {
		if allowed(a) {
			t.Errorf("the base's roles allow %s, which neither container needs", a)
		}
	}
	for _, r := range rules {
		for _, list := range [][]string{r.Verbs, r.Resources, r.APIGroups} {
			if slices.Contains(list, "*") {
				t.Errorf("rule %+v uses a wildcard", r.PolicyRule)
			}
		}
	}
	for _, want := range []string{"ClusterRole system:kube-scheduler", "ClusterRole system:volume-scheduler"} {
		if !slices.Contains(external, want) {
			t.Errorf("%s is not bound to the ServiceAccount (bound: %v)", want, external)
		}
	}
	t.Logf("%d rules of the base bound to %s/%s; built-in roles bound: %v", len(rules), ns, serviceAccount, external)
}

// newApplier returns the dynamic client and a discovery-backed RESTMapper for the Env.
func newApplier(t *testing.T, cfg *rest.Config) (dynamic.Interface, meta.RESTMapper) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
}

// apply sends the object to the apiserver with server-side apply (strict field validation).
func apply(t *testing.T, dyn dynamic.Interface, mapper meta.RESTMapper, m manifest, dryRun bool) error {
	t.Helper()
	gvk := m.Obj.GroupVersionKind()
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("no REST mapping for %s: %w", gvk, err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if m.Obj.GetNamespace() == "" {
			return fmt.Errorf("%s is namespaced but names no namespace", gvk.Kind)
		}
		ri = dyn.Resource(mapping.Resource).Namespace(m.Obj.GetNamespace())
	} else if m.Obj.GetNamespace() != "" {
		return fmt.Errorf("%s is cluster-scoped but names namespace %s", gvk.Kind, m.Obj.GetNamespace())
	}
	data, err := m.Obj.MarshalJSON()
	if err != nil {
		return err
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(t.Context(), m.Obj.GetName(), types.ApplyPatchType, data, opts)
	return err
}

// TestServerSideApplyDryRun applies every object of the base, in the kustomization's order, to a real
// kube-apiserver with server-side apply and dry run: the apiserver validates, defaults and admits each one.
func TestServerSideApplyDryRun(t *testing.T) {
	t.Parallel()
	b := readBase(t, baseDir)
	began := time.Now()
	env := testenv.Start(t)
	started := time.Since(began)
	dyn, mapper := newApplier(t, env.Config)
	applyStart := time.Now()
	for _, m := range b.Manifests {
		if err := apply(t, dyn, mapper, m, true); err != nil {
			t.Errorf("%s: the apiserver rejected it: %v", m, err)
			continue
		}
		t.Logf("accepted (dry run): %s", m)
	}
	// Dry run persisted nothing.
	if _, err := env.Client.CoreV1().ServiceAccounts(defaultNamespace).Get(t.Context(), serviceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the dry run, ServiceAccount %s: %v, want NotFound", serviceAccount, err)
	}
	t.Logf("control plane up in %s; %d objects applied (dry run) in %s", started.Round(time.Millisecond), len(b.Manifests),
		time.Since(applyStart).Round(time.Millisecond))
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
