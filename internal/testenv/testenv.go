// Package testenv starts a real Kubernetes control plane (etcd, kube-apiserver and optionally
// kube-scheduler, built from the upstream sources by hack/k8s-binaries.sh) for tests.
//
// Each Start is independent: it gets its own temporary directory, its own etcd and apiserver on free
// loopback ports, and stops every process it started in t.Cleanup, so parallel tests can each have one.
// There is no kube-controller-manager and no kubelet: Nodes are plain API objects created by the test,
// pods that the scheduler binds stay bound (Pending) without running, namespaces are not garbage-collected
// on delete, and no ServiceAccount objects are created. So the admission plugins ServiceAccount (pods would
// need a ServiceAccount) and TaintNodesByCondition (new Nodes would keep a node.kubernetes.io/not-ready
// taint forever) are disabled.
//
// The binaries are looked up in $KUBECTL_HAMI_K8S_BIN, else in the cache folder that
// hack/k8s-binaries.sh fills (${KUBECTL_HAMI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-hami}/k8s-v1.37.2).
// When they are missing the test fails (it does not skip): run `make k8s-binaries`.
package testenv

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	// KubernetesVersion is the version of the control-plane binaries the harness expects.
	KubernetesVersion = "v1.37.2"
	// BinDirEnv names the environment variable holding the folder with kube-apiserver, kube-scheduler
	// and etcd (the Makefile sets it from hack/k8s-binaries.sh).
	BinDirEnv = "KUBECTL_HAMI_K8S_BIN"
	// KubeconfigPlaceholder is replaced by the Env's kubeconfig path in a scheduler configuration.
	KubeconfigPlaceholder = "{{KUBECONFIG}}"
	// ContextName is the name of the context (and cluster) in the written kubeconfig.
	ContextName = "testenv"

	etcdReadyTimeout      = 30 * time.Second
	apiserverReadyTimeout = 90 * time.Second
	schedulerReadyTimeout = 60 * time.Second
	pollInterval          = 100 * time.Millisecond
	portAttempts          = 3
	portSettle            = 150 * time.Millisecond // see startWithPortRetry
	logTailLines          = 60
)

// Env is a running control plane.
type Env struct {
	// Config reaches the apiserver as a member of system:masters (bearer token, TLS verification off).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for the same identity, current context "testenv".
	Kubeconfig string
	// Client is a clientset built from Config.
	Client kubernetes.Interface
	// Dir is the Env's temporary directory: logs (*.log), etcd data, certificates, configuration.
	Dir string
	// APIServerURL is the apiserver's https URL on 127.0.0.1.
	APIServerURL string
	// Token is the admin bearer token.
	Token string
	// EtcdURL is etcd's client URL.
	EtcdURL string
	// BinDir is the folder the binaries were taken from.
	BinDir string

	apiserverArgs []string
	mu            sync.Mutex
	schedulers    int
	// apiserver, apiserverBin and etcd let RestartAPIServer start the apiserver again on its port.
	apiserver    *process
	apiserverBin string
	etcd         *process
}

// Option configures Start.
type Option func(*options)

type options struct {
	schedulerConfigs []string
	apiserverArgs    []string
}

// WithScheduler also starts a kube-scheduler with the given KubeSchedulerConfiguration YAML, in which
// every "{{KUBECONFIG}}" is replaced by the Env's kubeconfig path (for clientConnection.kubeconfig: with
// --config, kube-scheduler ignores its --kubeconfig flag). Start returns once the scheduler's /readyz
// answers ok, i.e. its informers and event handlers have synced (and it leads, if it elects a leader).
// It may be given more than once to start several schedulers.
func WithScheduler(configYAML string) Option {
	return func(o *options) { o.schedulerConfigs = append(o.schedulerConfigs, configYAML) }
}

// WithAPIServerArgs appends flags to kube-apiserver's command line (a later flag overrides an earlier one,
// e.g. "--feature-gates=...").
func WithAPIServerArgs(args ...string) Option {
	return func(o *options) { o.apiserverArgs = append(o.apiserverArgs, args...) }
}

// BinDir returns the folder holding the control-plane binaries: $KUBECTL_HAMI_K8S_BIN when set, else the
// default cache folder of hack/k8s-binaries.sh.
func BinDir() string {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d
	}
	root := os.Getenv("KUBECTL_HAMI_CACHE")
	if root == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		root = filepath.Join(cache, "kubectl-hami")
	}
	return filepath.Join(root, "k8s-"+KubernetesVersion)
}

// binaries returns the paths of the named binaries in BinDir, or an error that says how to build them.
func binaries(names ...string) (string, []string, error) {
	dir := BinDir()
	paths := make([]string, len(names))
	var missing []string
	for i, n := range names {
		paths[i] = filepath.Join(dir, n)
		if st, err := os.Stat(paths[i]); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return dir, nil, fmt.Errorf("testenv: %s missing in %s (from $%s or the default cache folder); run `make k8s-binaries` (or `bash hack/k8s-binaries.sh`) to build them",
			strings.Join(missing, ", "), dir, BinDirEnv)
	}
	return dir, paths, nil
}

// Start starts etcd and kube-apiserver (and the schedulers asked for with WithScheduler) and waits until
// they are ready. It fails the test when they cannot start; everything is stopped in t.Cleanup, and on
// failure the tail of every process log is written with t.Log.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	binDir, bins, err := binaries("etcd", "kube-apiserver")
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()

	e := &Env{Dir: t.TempDir(), BinDir: binDir, apiserverArgs: o.apiserverArgs}
	// Registered first so it runs last, once every process has stopped and its log is complete.
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpLogs(t)
		}
	})

	etcd, err := e.startEtcd(t, bins[0])
	if err != nil {
		t.Fatal(err)
	}
	etcdReady := time.Since(began)
	if err := e.writeCredentials(); err != nil {
		t.Fatal(err)
	}
	apiserver, err := e.startAPIServer(t, bins[1], etcd, 0)
	if err != nil {
		t.Fatal(err)
	}
	e.apiserver, e.apiserverBin, e.etcd = apiserver, bins[1], etcd
	if err := e.buildClients(); err != nil {
		t.Fatal(err)
	}
	if err := e.waitForDefaultNamespace(); err != nil {
		t.Fatal(err)
	}
	t.Logf("testenv: etcd ready in %s, apiserver %s ready in %s (dir %s)",
		etcdReady.Round(time.Millisecond), e.APIServerURL, time.Since(began).Round(time.Millisecond), e.Dir)

	for _, cfg := range o.schedulerConfigs {
		e.StartScheduler(t, cfg)
	}
	return e
}

// StartScheduler starts a kube-scheduler against the Env (see WithScheduler) and waits until it is
// ready. It is stopped in t.Cleanup. Use it instead of WithScheduler when the configuration depends on
// something that needs the Env first (for example an extender that reads from the apiserver).
func (e *Env) StartScheduler(t testing.TB, configYAML string) {
	t.Helper()
	_, bins, err := binaries("kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	e.schedulers++
	n := e.schedulers
	e.mu.Unlock()
	name := "kube-scheduler"
	if n > 1 {
		name += "-" + strconv.Itoa(n)
	}
	cfgPath := filepath.Join(e.Dir, name+".yaml")
	cfg := strings.ReplaceAll(configYAML, KubeconfigPlaceholder, e.Kubeconfig)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	var port int
	_, err = e.startWithPortRetry(t, name, bins[0], func() ([]string, error) {
		p, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		port = p[0]
		return []string{
			"--kubeconfig", e.Kubeconfig,
			"--config", cfgPath,
			"--bind-address", "127.0.0.1",
			"--secure-port", strconv.Itoa(port),
		}, nil
	}, func(ctx context.Context) error {
		// /readyz is always allowed without credentials; it includes the handler-sync check and, with leader
		// election, the leader watchdog.
		return httpOK(ctx, fmt.Sprintf("https://127.0.0.1:%d/readyz", port), "")
	}, schedulerReadyTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("testenv: %s ready in %s", name, time.Since(began).Round(time.Millisecond))
}

func (e *Env) startEtcd(t testing.TB, bin string) (*process, error) {
	dataDir := filepath.Join(e.Dir, "etcd-data")
	return e.startWithPortRetry(t, "etcd", bin, func() ([]string, error) {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		_ = os.RemoveAll(dataDir) // a failed attempt may have initialised it with other peer URLs
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		e.EtcdURL = client
		return []string{
			"--name", "default",
			"--data-dir", dataDir,
			"--listen-client-urls", client,
			"--advertise-client-urls", client,
			"--listen-peer-urls", peer,
			"--initial-advertise-peer-urls", peer,
			"--initial-cluster", "default=" + peer,
			"--unsafe-no-fsync", // test data need not survive a machine crash
		}, nil
	}, func(ctx context.Context) error {
		return httpOK(ctx, e.EtcdURL+"/health", "")
	}, etcdReadyTimeout)
}

// startAPIServer starts kube-apiserver on port, or on a free port when port is 0.
func (e *Env) startAPIServer(t testing.TB, bin string, etcd *process, port int) (*process, error) {
	return e.startWithPortRetry(t, "kube-apiserver", bin, func() ([]string, error) {
		if etcd.exited() {
			return nil, etcd.exitError()
		}
		ports := []int{port}
		if port == 0 {
			var err error
			if ports, err = freePorts(1); err != nil {
				return nil, err
			}
		}
		e.APIServerURL = fmt.Sprintf("https://127.0.0.1:%d", ports[0])
		args := []string{
			"--etcd-servers", e.EtcdURL,
			"--bind-address", "127.0.0.1",
			"--secure-port", strconv.Itoa(ports[0]),
			"--cert-dir", filepath.Join(e.Dir, "apiserver-certs"),
			"--token-auth-file", filepath.Join(e.Dir, "tokens.csv"),
			"--authorization-mode", "RBAC",
			"--service-account-key-file", filepath.Join(e.Dir, "sa.pub"),
			"--service-account-signing-key-file", filepath.Join(e.Dir, "sa.key"),
			"--service-account-issuer", "https://kubernetes.default.svc",
			"--service-cluster-ip-range", "10.0.0.0/24",
			// ServiceAccount: no controller creates ServiceAccounts. TaintNodesByCondition: it taints every
			// new Node not-ready, and no node lifecycle controller would ever lift the taint.
			"--disable-admission-plugins", "ServiceAccount,TaintNodesByCondition",
			"--allow-privileged=true",
		}
		return append(args, e.apiserverArgs...), nil
	}, func(ctx context.Context) error {
		if etcd.exited() {
			return backoffStop{etcd.exitError()}
		}
		return httpOK(ctx, e.APIServerURL+"/readyz", e.Token)
	}, apiserverReadyTimeout)
}

// backoffStop makes the readiness poll give up at once.
type backoffStop struct{ error }

// startWithPortRetry starts a process with the arguments from args (which picks fresh ports) and polls
// ready until it succeeds. When the process exits because a port was taken meanwhile (free ports are
// found by binding and releasing them, so another process can grab one), it retries with new ports.
func (e *Env) startWithPortRetry(t testing.TB, name, bin string, args func() ([]string, error),
	ready func(context.Context) error, timeout time.Duration) (*process, error) {
	logPath := filepath.Join(e.Dir, name+".log")
	for attempt := 1; ; attempt++ {
		a, err := args()
		if err != nil {
			return nil, err
		}
		p, err := startProcess(name, bin, logPath, a)
		if err != nil {
			return nil, err
		}
		t.Cleanup(p.stop)
		err = waitReady(p, ready, timeout)
		if err == nil {
			// Another test's process may have taken the port between freePorts and the start: then the
			// readiness check was answered by that process and this one dies of "address already in use" a few
			// milliseconds later. Give it that moment before trusting the answer.
			time.Sleep(portSettle)
			if !p.exited() {
				return p, nil
			}
			err = p.exitError()
		}
		p.stop()
		if attempt < portAttempts && p.logContains("address already in use") {
			t.Logf("testenv: %s: a port was taken, retrying with other ports", name)
			continue
		}
		return nil, err
	}
}

// waitReady polls ready until it returns nil, the process exits, or timeout passes.
func waitReady(p *process, ready func(context.Context) error, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if p.exited() {
			return p.exitError()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		last = ready(ctx)
		cancel()
		if last == nil {
			return nil
		}
		var stop backoffStop
		if errors.As(last, &stop) {
			return stop.error
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testenv: %s not ready after %s: %w (its log %s is dumped below)", p.name, timeout, last, p.logPath)
		}
		select {
		case <-p.done:
		case <-time.After(pollInterval):
		}
	}
}

var insecureHTTP = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed test certificates
		DisableKeepAlives: true,
	},
}

// httpOK returns nil when GET url answers 200.
func httpOK(ctx context.Context, url, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureHTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// freePorts returns n distinct free TCP ports on 127.0.0.1 (held together so they differ).
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close() // only held to keep the ports distinct; a close error leaves nothing to do
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// writeCredentials writes the token file and the service-account signing key pair.
func (e *Env) writeCredentials() error {
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	e.Token = hex.EncodeToString(tok)
	if err := os.WriteFile(filepath.Join(e.Dir, "tokens.csv"), []byte(e.Token+`,admin,1,"system:masters"`+"\n"), 0o600); err != nil {
		return err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "sa.key"),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.Dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

// buildClients sets Config and Client and writes the kubeconfig file.
func (e *Env) buildClients() error {
	e.Config = &rest.Config{
		Host:            e.APIServerURL,
		BearerToken:     e.Token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             1000,
		Burst:           2000,
		UserAgent:       "kubectl-hami-testenv",
	}
	client, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return err
	}
	e.Client = client

	kc := clientcmdapi.NewConfig()
	kc.Clusters[ContextName] = &clientcmdapi.Cluster{Server: e.APIServerURL, InsecureSkipTLSVerify: true}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: e.Token}
	kc.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: "admin", Namespace: "default"}
	kc.CurrentContext = ContextName
	e.Kubeconfig = filepath.Join(e.Dir, "kubeconfig")
	return clientcmd.WriteToFile(*kc, e.Kubeconfig)
}

// waitForDefaultNamespace waits for the "default" namespace, which the apiserver creates shortly after
// it reports ready.
func (e *Env) waitForDefaultNamespace() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, err := e.Client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			return fmt.Errorf("testenv: get namespace default: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("testenv: namespace default not created: %w", err)
		case <-time.After(pollInterval):
		}
	}
}

// dumpLogs writes the tail of every process log in Dir with t.Log.
func (e *Env) dumpLogs(t testing.TB) {
	logs, _ := filepath.Glob(filepath.Join(e.Dir, "*.log"))
	for _, l := range logs {
		t.Logf("testenv: ===== last %d lines of %s =====\n%s", logTailLines, l, tailFile(l, logTailLines))
	}
}
