package oracle_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// The shipped manifests the control plane is wired from.
const (
	deployDir       = "../../deploy/extender"
	deployNamespace = "kube-system" // the base's namespace: $(POD_NAMESPACE)
)

// plane is the control plane every world of a run shares: the API server (with the shipped webhook), the
// shipped serve-extender, kube-scheduler with the shipped configuration calling it through a recorder, and a
// second kube-scheduler with the default profile.
type plane struct {
	env      *testenv.Env
	filters  *filterRecorder
	extLog   *lockedBuffer
	deployed string // what runs, in words, for the report
}

// pki is a CA, the extender's serving certificate (127.0.0.1), kube-scheduler's client certificate (the CN the
// Deployment allows) and the API server's client certificate for webhooks, as hack/extender-certs.sh makes them.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey, apiserverCert, apiserverKey string
	caPEM                                                                             []byte
}

func newPKI(t testing.TB, clientCN string) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubectl-hami-extender-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
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
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
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
	p := pki{caFile: write("ca.crt", &pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	p.serverCert, p.serverKey = issue("server", "kubectl-hami-extender", x509.ExtKeyUsageServerAuth, 2)
	p.clientCert, p.clientKey = issue("client", clientCN, x509.ExtKeyUsageClientAuth, 3)
	p.apiserverCert, p.apiserverKey = issue("apiserver", "kube-apiserver", x509.ExtKeyUsageClientAuth, 4)
	p.caPEM, _ = os.ReadFile(p.caFile)
	return p
}

// admissionConfig makes the API server present its client certificate to every webhook (docs/deploy.md).
func (p pki) admissionConfig(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	kc := filepath.Join(dir, "webhook-kubeconfig.yaml")
	must(t, os.WriteFile(kc, []byte(fmt.Sprintf("apiVersion: v1\nkind: Config\nusers:\n- name: \"*\"\n  user:\n    client-certificate: %s\n    client-key: %s\n",
		p.apiserverCert, p.apiserverKey)), 0o600))
	cfg := filepath.Join(dir, "admission.yaml")
	must(t, os.WriteFile(cfg, []byte(fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, kc)), 0o600))
	return cfg
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readManifest decodes one shipped manifest.
func readManifest(t testing.TB, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir, name))
	must(t, err)
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// startPlane starts the control plane of the shipped manifests (see plane).
func startPlane(t testing.TB) *plane {
	t.Helper()
	began := time.Now()
	var dep appsv1.Deployment
	readManifest(t, "deployment.yaml", &dep)
	var cm corev1.ConfigMap
	readManifest(t, "scheduler-config.yaml", &cm)
	var hook admissionregistrationv1.MutatingWebhookConfiguration
	readManifest(t, "mutatingwebhook.yaml", &hook)
	containers := map[string]corev1.Container{}
	for _, c := range dep.Spec.Template.Spec.Containers {
		containers[c.Name] = c
	}
	ext, sched := containers["extender"], containers["kube-scheduler"]
	if len(ext.Args) == 0 || len(sched.Command) == 0 {
		t.Fatalf("%s/deployment.yaml: no extender args or kube-scheduler command", deployDir)
	}
	expand := func(a string) string { return strings.ReplaceAll(a, "$(POD_NAMESPACE)", deployNamespace) }
	clientCN := "kubectl-hami-scheduler"
	for _, a := range ext.Args {
		if v, ok := strings.CutPrefix(a, "--client-allowed-cn="); ok {
			clientCN = strings.Split(v, ",")[0]
		}
	}
	keys := newPKI(t, clientCN)
	env := testenv.Start(t, testenv.WithAPIServerArgs("--admission-control-config-file="+keys.admissionConfig(t)))
	p := &plane{env: env, extLog: &lockedBuffer{}}

	// serve-extender in-process with the Deployment's arguments: only the addresses, the certificate files and
	// the kubeconfig (the admin's: RBAC is deploy's own test) differ.
	extPort, hookPort := freePort(t), freePort(t)
	var args []string
	for _, a := range ext.Args {
		a = expand(a)
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--listen":
			a = "--listen=127.0.0.1:" + strconv.Itoa(extPort)
		case "--webhook-listen":
			a = "--webhook-listen=127.0.0.1:" + strconv.Itoa(hookPort)
		case "--tls-cert-file":
			a = "--tls-cert-file=" + keys.serverCert
		case "--tls-key-file":
			a = "--tls-key-file=" + keys.serverKey
		case "--client-ca-file", "--webhook-client-ca-file":
			a = name + "=" + keys.caFile
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+env.Kubeconfig)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: p.extLog, ErrOut: p.extLog})
	root.SetArgs(args)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve-extender did not stop within 15s")
		}
		if t.Failed() {
			t.Logf("serve-extender log (tail):\n%s", tail(p.extLog.String(), 60))
		}
	})
	waitFor(t, 60*time.Second, "serve-extender /readyz", func() error {
		select {
		case err := <-done:
			t.Fatalf("serve-extender exited: %v\n%s", err, p.extLog.String())
		default:
		}
		return httpsOK(fmt.Sprintf("https://127.0.0.1:%d/readyz", extPort))
	})

	// kube-scheduler reaches the extender through a recorder that keeps each /filter call (kube-scheduler's own
	// feasible nodes, sent, and the extender's answer): the same TLS both ways, the same client certificate.
	p.filters = startRecorder(t, keys, fmt.Sprintf("https://127.0.0.1:%d", extPort))

	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Fatalf("scheduler-config.yaml config.yaml: %v", err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": testenv.KubeconfigPlaceholder}
	if le, ok := cfg["leaderElection"].(map[string]any); ok {
		le["resourceNamespace"] = deployNamespace // --leader-elect-resource-namespace=$(POD_NAMESPACE)
	}
	extCfg := cfg["extenders"].([]any)[0].(map[string]any)
	extCfg["urlPrefix"] = p.filters.url
	extCfg["tlsConfig"] = map[string]any{"certFile": keys.clientCert, "keyFile": keys.clientKey, "caFile": keys.caFile}
	y, err := yaml.Marshal(cfg)
	must(t, err)
	env.StartScheduler(t, string(y))
	// The default scheduler, as a cluster runs it, for every pod not addressed to HAMi's profile.
	env.StartScheduler(t, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: "`+testenv.KubeconfigPlaceholder+`"
profiles:
- schedulerName: default-scheduler
`)

	// The shipped webhook, called by URL (no Service routing here) with the CA's bundle; its selectors as shipped.
	url := fmt.Sprintf("https://127.0.0.1:%d/webhook", hookPort)
	hook.ResourceVersion = ""
	hook.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: keys.caPEM}
	_, err = env.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(context.Background(), &hook, metav1.CreateOptions{})
	must(t, err)
	waitFor(t, 30*time.Second, "the webhook mutating a GPU pod", func() error {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Namespace: "default"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}}}
		got, err := env.Client.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if got.Spec.SchedulerName != "hami-scheduler" {
			return fmt.Errorf("schedulerName %q", got.Spec.SchedulerName)
		}
		return nil
	})
	p.deployed = fmt.Sprintf("kube-scheduler %s (deploy/extender/scheduler-config.yaml) + serve-extender %s + the shipped webhook; default-scheduler beside",
		testenv.KubernetesVersion, strings.Join(args[1:len(args)-1], " "))
	t.Logf("control plane of deploy/extender ready in %s", time.Since(began).Round(time.Millisecond))
	return p
}

// filterCall is one /filter exchange: the nodes kube-scheduler's own filters kept, and the extender's answer.
type filterCall struct {
	Sent   []string
	Kept   []string
	Failed map[string]string
	Error  string
}

// filterRecorder forwards kube-scheduler's extender calls to serve-extender and keeps the last /filter per pod.
type filterRecorder struct {
	url   string
	mu    sync.Mutex
	calls map[string]filterCall // namespace/name
}

func startRecorder(t testing.TB, keys pki, target string) *filterRecorder {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(keys.caPEM)
	cert, err := tls.LoadX509KeyPair(keys.clientCert, keys.clientKey)
	must(t, err)
	serverCert, err := tls.LoadX509KeyPair(keys.serverCert, keys.serverKey)
	must(t, err)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	r := &filterRecorder{calls: map[string]filterCall{}}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		out, err := http.NewRequestWithContext(req.Context(), req.Method, target+req.URL.Path, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = req.Header.Clone()
		resp, err := client.Do(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if strings.HasSuffix(req.URL.Path, "/filter") {
			var args extenderv1.ExtenderArgs
			var res extenderv1.ExtenderFilterResult
			if json.Unmarshal(body, &args) == nil && args.Pod != nil && json.Unmarshal(answer, &res) == nil {
				fc := filterCall{Failed: res.FailedNodes, Error: res.Error}
				if args.NodeNames != nil {
					fc.Sent = append([]string(nil), *args.NodeNames...)
				}
				if res.NodeNames != nil {
					fc.Kept = append([]string(nil), *res.NodeNames...)
				}
				r.mu.Lock()
				r.calls[args.Pod.Namespace+"/"+args.Pod.Name] = fc
				r.mu.Unlock()
			}
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// take returns and forgets the last /filter call for the pod.
func (r *filterRecorder) take(key string) (filterCall, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fc, ok := r.calls[key]
	delete(r.calls, key)
	return fc, ok
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var insecure = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // test certificates

func httpsOK(url string) error {
	resp, err := insecure.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

func waitFor(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

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
