package deploy_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// TestDeployedRBACSchedulesGPUPod installs the base's ServiceAccount and RBAC for real, then runs both
// containers of the Deployment with the ServiceAccount's token and the Deployment's own command lines:
// kube-scheduler v1.37.2 with the ConfigMap's configuration, and serve-extender in-process. A GPU pod must be
// bound by the extender (HAMi's annotations written, the node lock taken) and a pod that cannot fit must get
// the extender's FilteringFailed event; neither process may log a "forbidden" error. SubjectAccessReviews
// check every call of serve-extender and the built-in roles, and that nothing beyond them is granted.
func TestDeployedRBACSchedulesGPUPod(t *testing.T) {
	t.Parallel()
	deployedSchedulesGPUPod(t, newTestPKI(t))
}

// deployedSchedulesGPUPod is TestDeployedRBACSchedulesGPUPod with the certificates of pki (the test's own, or
// the Helm chart's in helm_test.go).
func deployedSchedulesGPUPod(t *testing.T, pki testPKI) {
	t.Helper()
	b := readBase(t, baseDir)
	ns := b.Kustomization.Namespace
	began := time.Now()
	// The API server presents its client certificate to the webhook (AdmissionConfiguration, docs/deploy.md),
	// as the shipped --webhook-client-ca-file requires.
	env := testenv.Start(t, testenv.WithAPIServerArgs("--admission-control-config-file="+pki.admissionConfig(t)))
	ctx := t.Context()
	t.Logf("control plane up in %s", time.Since(began).Round(time.Millisecond))

	// Install the identity for real (the Deployment, Service and webhook are checked by the dry run only:
	// there is no kubelet, and a live webhook would intercept this test's pods).
	dyn, mapper := newApplier(t, env.Config)
	for _, m := range b.Manifests {
		switch m.Obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap",
			// The admission policies: both containers must do their work under them.
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if err := apply(t, dyn, mapper, m, false); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
		}
	}

	// The API server loads the policies asynchronously: wait until the placement policy refuses a forged pod
	// (a dry run), so that the binds below happen under it.
	forger := rest.CopyConfig(env.Config)
	forger.Impersonate = rest.ImpersonationConfig{UserName: "forger", Groups: []string{"system:masters"}}
	waitFor(t, 30*time.Second, "the placement policy refusing a forged pod", func() error {
		_, err := kubernetes.NewForConfigOrDie(forger).CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "forged-", Namespace: ns, Annotations: map[string]string{"hami.io/vgpu-node": "gpu-1"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/pause"}}},
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("not refused yet: %v", err)
	})

	// RBAC as the apiserver evaluates it, built-in roles included.
	sar := func(a access) bool {
		t.Helper()
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:   "system:serviceaccount:" + ns + ":" + serviceAccount,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.Namespace, Verb: a.Verb, Group: a.Group,
				Resource: a.Resource, Subresource: a.Subresource, Name: a.Name},
		}}
		res, err := env.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview %s: %v", a, err)
		}
		return res.Status.Allowed
	}
	for _, a := range append(extenderCalls(ns), schedulerCalls(ns)...) {
		if !sar(a) {
			t.Errorf("the apiserver denies the ServiceAccount: %s", a)
		}
	}
	// A sample of what kube-scheduler needs from the built-in roles, and its authentication delegation.
	for _, a := range []access{
		{Resource: "pods", Verb: "delete", Namespace: "team-a", Name: "p"}, // preemption
		{Resource: "pods", Subresource: "status", Verb: "patch", Namespace: "team-a", Name: "p"},
		{Resource: "persistentvolumeclaims", Verb: "list"},
		{Group: "storage.k8s.io", Resource: "csinodes", Verb: "watch"},
		{Group: "events.k8s.io", Resource: "events", Verb: "create", Namespace: "team-a"},
		{Group: "authentication.k8s.io", Resource: "tokenreviews", Verb: "create"},
		{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create"},
	} {
		if !sar(a) {
			t.Errorf("the apiserver denies the ServiceAccount (kube-scheduler needs it): %s", a)
		}
	}
	for _, a := range notGranted(ns) {
		if sar(a) {
			t.Errorf("the ServiceAccount may %s, which neither container needs", a)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	saKubeconfig := serviceAccountKubeconfig(t, env, ns)
	saConfig, err := clientcmd.BuildConfigFromFlags("", saKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	saClient := kubernetes.NewForConfigOrDie(saConfig)
	if _, err := saClient.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		t.Fatalf("the ServiceAccount's token does not work: %v", err)
	}

	d := one[*appsv1.Deployment](t, b, "kubectl-hami-extender")
	containers := map[string]corev1.Container{}
	for _, c := range d.Spec.Template.Spec.Containers {
		containers[c.Name] = c
	}
	expand := func(args []string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, "$(POD_NAMESPACE)", ns)
		}
		return out
	}

	// serve-extender with the Deployment's arguments; only the addresses and the certificate files differ.
	extPort, webhookPort := freePort(t), freePort(t)
	var extArgs []string
	for _, a := range expand(containers["extender"].Args) {
		switch {
		case strings.HasPrefix(a, "--listen="):
			a = "--listen=127.0.0.1:" + strconv.Itoa(extPort)
		case strings.HasPrefix(a, "--webhook-listen="):
			a = "--webhook-listen=127.0.0.1:" + strconv.Itoa(webhookPort)
		case strings.HasPrefix(a, "--tls-cert-file="):
			a = "--tls-cert-file=" + pki.serverCert
		case strings.HasPrefix(a, "--tls-key-file="):
			a = "--tls-key-file=" + pki.serverKey
		case strings.HasPrefix(a, "--client-ca-file="):
			a = "--client-ca-file=" + pki.caFile
		case strings.HasPrefix(a, "--webhook-client-ca-file="):
			a = "--webhook-client-ca-file=" + pki.caFile
		}
		extArgs = append(extArgs, a)
	}
	extArgs = append(extArgs, "--kubeconfig="+saKubeconfig)
	extLog := &lockedBuffer{}
	extCtx, stopExt := context.WithCancel(context.Background())
	extDone := make(chan struct{}) // closed when serve-extender returns, with extErr
	var extErr error
	root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: extLog, ErrOut: extLog})
	root.SetArgs(extArgs)
	go func() { extErr = root.ExecuteContext(extCtx); close(extDone) }()
	t.Cleanup(func() {
		stopExt()
		select {
		case <-extDone:
			if extErr != nil {
				t.Logf("serve-extender returned %v", extErr)
			}
		case <-time.After(15 * time.Second):
			t.Error("serve-extender did not stop within 15s")
		}
		if t.Failed() {
			t.Logf("serve-extender log:\n%s", extLog.String())
		}
	})
	extStart := time.Now()
	// /readyz answers 200 once the informers synced (list/watch allowed) and the Lease is held.
	waitFor(t, 60*time.Second, "serve-extender /readyz", func() error {
		select {
		case <-extDone:
			t.Fatalf("serve-extender exited: %v", extErr)
		default:
		}
		return httpsOK(fmt.Sprintf("https://127.0.0.1:%d/readyz", extPort))
	})
	t.Logf("serve-extender %v ready (informers synced, Lease held) in %s", extArgs[:len(extArgs)-1], time.Since(extStart).Round(time.Millisecond))

	// kube-scheduler with the Deployment's command line and the ConfigMap's configuration, as the ServiceAccount.
	_, rawConfig := schedulerConfig(t, b)
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(rawConfig), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": saKubeconfig}
	extCfg := cfg["extenders"].([]any)[0].(map[string]any)
	extCfg["urlPrefix"] = fmt.Sprintf("https://127.0.0.1:%d", extPort)
	// kube-scheduler's client certificate (CN kubectl-hami-scheduler) and the CA it checks the extender with.
	extCfg["tlsConfig"] = map[string]any{"certFile": pki.clientCert, "keyFile": pki.clientKey, "caFile": pki.caFile}
	cfgYAML, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, cfgYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	schedCmd := expand(containers["kube-scheduler"].Command)
	for i, a := range schedCmd {
		if strings.HasPrefix(a, "--config=") {
			schedCmd[i] = "--config=" + cfgPath
		}
	}
	schedPort := freePort(t)
	// In the pod, kube-scheduler delegates the authentication and authorization of its own endpoints with its
	// in-cluster identity; here the same identity comes from the kubeconfig.
	schedArgs := append(slices.Clone(schedCmd[1:]), "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(schedPort),
		"--authentication-kubeconfig="+saKubeconfig, "--authorization-kubeconfig="+saKubeconfig)
	schedLog := filepath.Join(dir, "kube-scheduler.log")
	schedStart := time.Now()
	startProcess(t, filepath.Join(testenv.BinDir(), schedCmd[0]), schedArgs, schedLog)
	waitFor(t, 60*time.Second, "kube-scheduler /readyz", func() error {
		return httpsOK(fmt.Sprintf("https://127.0.0.1:%d/readyz", schedPort))
	})
	t.Logf("kube-scheduler %v ready in %s", schedCmd, time.Since(schedStart).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(schedLog)
			t.Logf("kube-scheduler log (tail):\n%s", tail(string(out), 80))
		}
	})

	// Both leases are held, in the pod's namespace.
	for _, name := range []string{schedulerLease, extenderLease} {
		waitFor(t, 30*time.Second, "Lease "+ns+"/"+name, func() error {
			l, err := env.Client.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
				return fmt.Errorf("no holder")
			}
			return nil
		})
	}

	// Nodes as HAMi's device plugin registers them (two, so that kube-scheduler also calls prioritize), and
	// two pods for the hami-scheduler profile.
	createGPUNode(t, env.Client, "gpu-1")
	createGPUNode(t, env.Client, "gpu-2")
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	scheduleStart := time.Now()
	fits := createGPUPod(t, env.Client, "team-a", "fits", "2048")
	tooBig := createGPUPod(t, env.Client, "team-a", "too-big", "999999")

	var bound *corev1.Pod
	waitFor(t, 60*time.Second, "pod team-a/fits bound by the extender", func() error {
		p, err := env.Client.CoreV1().Pods("team-a").Get(ctx, fits.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Spec.NodeName == "" {
			return fmt.Errorf("not bound")
		}
		bound = p
		return nil
	})
	t.Logf("pod team-a/fits bound to %s in %s", bound.Spec.NodeName, time.Since(scheduleStart).Round(time.Millisecond))
	nodeName := bound.Spec.NodeName
	if nodeName != "gpu-1" && nodeName != "gpu-2" {
		t.Fatalf("pod bound to %q, want gpu-1 or gpu-2", nodeName)
	}
	for _, k := range []string{"hami.io/vgpu-node", "hami.io/vgpu-devices-allocated", "hami.io/vgpu-devices-to-allocate", "hami.io/bind-phase"} {
		if bound.Annotations[k] == "" {
			t.Errorf("bound pod lacks annotation %s (pods patch by the extender): %v", k, bound.Annotations)
		}
	}
	if bound.Labels["hami.io/vgpu-node"] != nodeName || bound.Annotations["hami.io/vgpu-node"] != nodeName {
		t.Errorf("bound pod label and annotation hami.io/vgpu-node = %q, %q, want %s", bound.Labels["hami.io/vgpu-node"],
			bound.Annotations["hami.io/vgpu-node"], nodeName)
	}
	node, err := env.Client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lock := node.Annotations["hami.io/mutex.lock"]; !strings.HasSuffix(lock, ",team-a,fits") {
		t.Errorf("node lock = %q, want it held for team-a/fits (nodes patch by the extender)", lock)
	}

	// HAMi's registration pass stamps every node's handshake (its 60 s device-plugin grace starts there); the
	// shipped serve-extender does the same every 15 s, through the deployed RBAC and node policies.
	waitFor(t, 45*time.Second, "gpu-2's hami.io/node-handshake stamped by serve-extender", func() error {
		n, err := env.Client.CoreV1().Nodes().Get(ctx, "gpu-2", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if hs := n.Annotations["hami.io/node-handshake"]; !strings.HasPrefix(hs, "Requesting_") {
			return fmt.Errorf("handshake %q", hs)
		}
		return nil
	})

	waitFor(t, 60*time.Second, "FilteringFailed event for team-a/too-big", func() error {
		evs, err := env.Client.CoreV1().Events("team-a").List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.name": tooBig.Name, "reason": "FilteringFailed"}.String()})
		if err != nil {
			return err
		}
		if len(evs.Items) == 0 {
			return fmt.Errorf("no event yet")
		}
		t.Logf("event for team-a/too-big: %s", evs.Items[0].Message)
		return nil
	})
	if p, err := env.Client.CoreV1().Pods("team-a").Get(ctx, tooBig.Name, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Errorf("pod team-a/too-big: node %q, %v; want it pending", p.Spec.NodeName, err)
	}

	// kube-scheduler called every verb of the configuration and the extender answered each (a misspelt
	// prioritizeVerb would otherwise go unnoticed: kube-scheduler ignores prioritize errors).
	// /metrics answers a certificate of the client CA (Prometheus's; here kube-scheduler's), and nobody without one.
	schedulerClient := certClient(t, pki.clientCert, pki.clientKey)
	metricsURL := fmt.Sprintf("https://127.0.0.1:%d/metrics", extPort)
	if resp, err := insecureClient.Get(metricsURL); err != nil {
		t.Errorf("GET /metrics: %v", err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics without a client certificate: %s, want 401", resp.Status)
	}
	resp, err := schedulerClient.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics with a client certificate: %s, %v", resp.Status, err)
	}
	metrics := string(raw)
	for _, verb := range []string{"filter", "prioritize", "bind"} {
		if n := metricValue(metrics, `kubectl_hami_extender_request_duration_seconds_count{verb="`+verb+`"}`); n < 1 {
			t.Errorf("serve-extender answered %v %s calls, want at least 1", n, verb)
		}
	}

	// Without kube-scheduler's client certificate the verbs are refused, on the scheduler's port and the webhook's.
	for _, c := range []struct {
		port  int
		path  string
		codes []int
	}{
		{extPort, "/filter", []int{401}}, {extPort, "/prioritize", []int{401}}, {extPort, "/bind", []int{401}},
		{extPort, "/webhook", []int{403}}, {webhookPort, "/filter", []int{404}}, {webhookPort, "/bind", []int{404}},
	} {
		url := fmt.Sprintf("https://127.0.0.1:%d%s", c.port, c.path)
		body := fmt.Sprintf(`{"PodName":%q,"PodNamespace":"team-a","PodUID":%q,"Node":"gpu-1"}`, tooBig.Name, tooBig.UID)
		resp, err := insecureClient.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			t.Errorf("POST %s: %v", url, err)
			continue
		}
		resp.Body.Close()
		if !slices.Contains(c.codes, resp.StatusCode) {
			t.Errorf("POST %s without a client certificate: %s, want %v", url, resp.Status, c.codes)
		}
	}
	if p, err := env.Client.CoreV1().Pods("team-a").Get(ctx, tooBig.Name, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Errorf("pod team-a/too-big after the unauthenticated binds: node %q, %v; want it pending", p.Spec.NodeName, err)
	}
	// The webhook listener serves only the API server's client certificate: not none, and not another
	// certificate of the same CA (issue 26, Why 4: kube-scheduler's was accepted).
	resp, err = insecureClient.Post(fmt.Sprintf("https://127.0.0.1:%d/webhook", webhookPort), "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Errorf("webhook listener: %v", err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("webhook listener answered a review without a client certificate with %s, want 401", resp.Status)
	}
	review := `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"1","kind":{"group":"","version":"v1","kind":"Pod"},` +
		`"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","namespace":"team-a","object":` +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"team-a"},"spec":{"containers":[{"name":"c","image":"i",` +
		`"resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}`
	resp, err = schedulerClient.Post(fmt.Sprintf("https://127.0.0.1:%d/webhook", webhookPort), "application/json", strings.NewReader(review))
	if err != nil {
		t.Errorf("webhook listener: %v", err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("why4: the webhook answered a review from kube-scheduler's client certificate (same CA, not the API server) with %s, want 403", resp.Status)
	}
	checkWebhookThroughAPIServer(t, env, b, pki, webhookPort)

	// Nothing either process did was refused.
	schedOut, _ := os.ReadFile(schedLog)
	for name, log := range map[string]string{"serve-extender": extLog.String(), "kube-scheduler": string(schedOut)} {
		for _, line := range strings.Split(log, "\n") {
			switch {
			case strings.Contains(line, "forbidden") || strings.Contains(line, "Forbidden"):
				t.Errorf("%s was refused: %s", name, line)
			case strings.Contains(line, `configmap \"extension-apiserver-authentication\" not found`):
				// testenv's apiserver has no client CA, so it publishes no such ConfigMap; reading it was allowed.
				continue
			case strings.HasPrefix(line, "W") || strings.HasPrefix(line, "E") || strings.Contains(line, `"level":"WARN"`) ||
				strings.Contains(line, `"level":"ERROR"`):
				t.Logf("%s: %s", name, line)
			}
		}
	}
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the ServiceAccount (TokenRequest API).
func serviceAccountKubeconfig(t *testing.T, env *testenv.Env, ns string) string {
	t.Helper()
	exp := int64(3600)
	tr, err := env.Client.CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for ServiceAccount %s/%s: %v", ns, serviceAccount, err)
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["testenv"] = &clientcmdapi.Cluster{Server: env.APIServerURL, InsecureSkipTLSVerify: true}
	kc.AuthInfos[serviceAccount] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: serviceAccount, Namespace: ns}
	kc.CurrentContext = "testenv"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// createGPUNode creates a Ready node with 4 shared GPUs registered the way HAMi v2.8+ does.
func createGPUNode(t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	var gpus []string
	for i := range 4 {
		gpus = append(gpus, fmt.Sprintf(`{"id":"GPU-%s-%d","index":%d,"count":10,"devmem":16384,"devcore":100,"type":"NVIDIA-Tesla T4","mode":"hami-core","health":true}`, name, i, i))
	}
	node, err := c.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{corev1.LabelHostname: name},
		Annotations: map[string]string{"hami.io/node-nvidia-register": "[" + strings.Join(gpus, ",") + "]"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi"),
		corev1.ResourcePods: resource.MustParse("110"), "nvidia.com/gpu": resource.MustParse("40"),
	}
	node.Status = corev1.NodeStatus{Capacity: res, Allocatable: res, Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
	}}}
	if _, err := c.CoreV1().Nodes().UpdateStatus(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createGPUPod creates a pod for the hami-scheduler profile asking for one GPU with gpumem MiB (what HAMi's
// webhook would have set; no webhook runs in this test).
func createGPUPod(t *testing.T, c kubernetes.Interface, ns, name, gpumem string) *corev1.Pod {
	t.Helper()
	p, err := c.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{SchedulerName: schedulerName, Containers: []corev1.Container{{
			Name: "main", Image: "registry.example/cuda:12",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
				"nvidia.com/gpu": resource.MustParse("1"), "nvidia.com/gpumem": resource.MustParse(gpumem),
			}},
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startProcess runs a binary until the test ends, its output in logPath.
func startProcess(t *testing.T, bin string, args []string, logPath string) {
	t.Helper()
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
	})
}

// waitFor polls check until it returns nil, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// certClient presents the client certificate (and does not check the server's, a test certificate).
func certClient(t *testing.T, certFile, keyFile string) *http.Client {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}}}} //nolint:gosec // self-signed test certificates
}

var insecureClient = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test certificates
}}

func httpsOK(url string) error {
	_, err := httpsGet(url)
	return err
}

func httpsGet(url string) (string, error) {
	resp, err := insecureClient.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// metricValue returns the value of one series in a Prometheus text exposition, or -1 when absent.
func metricValue(exposition, series string) float64 {
	for _, line := range strings.Split(exposition, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testPKI is a CA, the extender's serving certificate for 127.0.0.1 and kube-scheduler's client certificate.
type testPKI struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
	apiserverCert, apiserverKey                          string // the API server's client certificate for webhooks
	caPEM                                                []byte
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubectl-hami-extender-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	write := func(name string, block *pem.Block) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	issue := func(name, cn string, usage x509.ExtKeyUsage, serial int64) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".crt", &pem.Block{Type: "CERTIFICATE", Bytes: der}), write(name+".key", &pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	}
	p := testPKI{caFile: write("ca.crt", &pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	p.serverCert, p.serverKey = issue("server", "kubectl-hami-extender", x509.ExtKeyUsageServerAuth, 2)
	p.clientCert, p.clientKey = issue("client", schedulerClientCN, x509.ExtKeyUsageClientAuth, 3)
	p.apiserverCert, p.apiserverKey = issue("apiserver-webhook-client", "kube-apiserver", x509.ExtKeyUsageClientAuth, 4)
	p.caPEM, _ = os.ReadFile(p.caFile)
	return p
}

// admissionConfig writes the API server's AdmissionConfiguration: for every webhook ("*") it presents the client
// certificate the extender's CA signed, as hack/extender-certs.sh makes it for a real control plane.
func (p testPKI) admissionConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "webhook-kubeconfig.yaml")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate: %s
    client-key: %s
`, p.apiserverCert, p.apiserverKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "admission-config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, kubeconfig)), 0o600); err != nil {
		t.Fatal(err)
	}
	return config
}

// checkWebhookThroughAPIServer installs the shipped MutatingWebhookConfiguration, pointed at the webhook
// listener and limited to one namespace, and creates a GPU pod there without a schedulerName: the API server
// calls the webhook with its client certificate and the pod comes out sent to hami-scheduler.
func checkWebhookThroughAPIServer(t *testing.T, env *testenv.Env, b base, pki testPKI, port int) {
	t.Helper()
	ctx := t.Context()
	hook := one[*admissionregistrationv1.MutatingWebhookConfiguration](t, b, "kubectl-hami-extender").DeepCopy()
	hook.ResourceVersion = ""
	url := fmt.Sprintf("https://127.0.0.1:%d/webhook", port)
	hook.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: pki.caPEM}
	hook.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "hooked"}}
	if _, err := env.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hooked"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The API server reads webhook configurations from its informer: retry until the webhook is seen.
	waitFor(t, 30*time.Second, "the webhook mutating a GPU pod", func() error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "hooked-", Namespace: "hooked"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}}
		got, err := env.Client.CoreV1().Pods("hooked").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if got.Spec.SchedulerName != "hami-scheduler" {
			return fmt.Errorf("schedulerName %q, want hami-scheduler", got.Spec.SchedulerName)
		}
		return nil
	})
}

// lockedBuffer is a bytes.Buffer safe for the extender's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
