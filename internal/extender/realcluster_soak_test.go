package extender_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// The fault soak (make soak-extender): the shipped binary's serve-extender, with its default flags, behind a
// real kube-scheduler; a burst of GPU pods (more than fit) and, mid-burst, a fault: the extender killed with
// SIGKILL and started again, or kube-apiserver restarted. After each: no GPU over its capacity, no pod placed
// but unbound, no node lock left, and the time until every pod that fits is bound.
const soakEnv = "KUBECTL_HAMI_SOAK"

// xtSoakExtender is serve-extender running as its own process.
type xtSoakExtender struct {
	t          testing.TB
	bin, kcfg  string
	addr, logs string
	noWait     bool     // start returns at once (a replica that is not the leader is never ready)
	shipped    bool     // the Deployment's flags: no --release-node-lock (a device plugin releases the lock)
	args       []string // beyond the defaults: serve-extender's flags, as a Deployment would set them
	mu         sync.Mutex
	cmd        *exec.Cmd
	starts     int
}

func (x *xtSoakExtender) start() {
	x.t.Helper()
	x.mu.Lock()
	defer x.mu.Unlock()
	x.starts++
	logf, err := os.Create(fmt.Sprintf("%s.%d.log", x.logs, x.starts))
	if err != nil {
		x.t.Fatal(err)
	}
	args := []string{"serve-extender", "--kubeconfig", x.kcfg, "--listen", x.addr}
	if !x.shipped {
		args = append(args, "--release-node-lock")
	}
	cmd := exec.Command(x.bin, append(args, x.args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		x.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); logf.Close() }()
	x.cmd = cmd
	if x.noWait {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + x.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("serve-extender not ready in 30 s: %v (log %s)", err, logf.Name())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL.
func (x *xtSoakExtender) kill() {
	x.signal(os.Kill)
}

// signal sends sig and waits for the process to end.
func (x *xtSoakExtender) signal(sig os.Signal) {
	x.mu.Lock()
	defer x.mu.Unlock()
	_ = x.cmd.Process.Signal(sig)
	_, _ = x.cmd.Process.Wait()
}

// ready reports whether the replica's /readyz answers 200 (informers synced and, with --leader-elect, leading).
func (x *xtSoakExtender) ready() bool {
	c := http.Client{Timeout: 500 * time.Millisecond}
	resp, err := c.Get("http://" + x.addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// xtSoakSetup builds the binary, starts a control plane, serve-extender and kube-scheduler, and 20 nodes of
// one 81,920 MiB GPU.
func xtSoakSetup(t *testing.T) (*testenv.Env, *xtSoakExtender) {
	t.Helper()
	bin := xtSoakBinary(t)
	env := testenv.Start(t)
	x := &xtSoakExtender{t: t, bin: bin, kcfg: env.Kubeconfig, addr: xtFreeAddr(t), logs: filepath.Join(env.Dir, "serve-extender")}
	x.start()
	t.Cleanup(x.kill)
	xtSoakCluster(t, env, "http://"+x.addr)
	return env, x
}

// xtSoakCluster starts kube-scheduler with the extender at url, and makes the soak's 20 nodes and namespace.
func xtSoakCluster(t *testing.T, env *testenv.Env, url string) {
	t.Helper()
	env.StartScheduler(t, xtSchedulerConfig(url))
	for i := range 20 {
		name := fmt.Sprintf("soak-%02d", i)
		xtCreateNode(t, env.Client, xtNode(name, xtGPUs(name, 1, 81920, 10)))
	}
	xtCreateNamespace(t, env.Client, "soak", nil)
	time.Sleep(time.Second) // the extender's informers see the nodes
}

// xtSoakBinary skips unless the soak is asked for, and builds the shipped binary.
func xtSoakBinary(t *testing.T) string {
	t.Helper()
	if os.Getenv(soakEnv) == "" {
		t.Skipf("fault soak: set %s=1 (make soak-extender)", soakEnv)
	}
	bin := filepath.Join(t.TempDir(), "kubectl-hami")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/kubectl-hami")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// xtSoakBurst creates 120 pods of 16,384 MiB (100 fit) and runs fault once bound pods reach 30; it returns
// when every pod that fits is bound and the cluster is clean, or fails after the limit.
func xtSoakBurst(t *testing.T, c kubernetes.Interface, fault func()) {
	t.Helper()
	const total, fits = 120, 100
	ctx := context.Background()
	created := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range total {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			for try := 0; ; try++ { // the fault may be the apiserver's
				_, err := c.CoreV1().Pods("soak").Create(ctx, xtLivePod(xtPod("soak", fmt.Sprintf("s-%03d", i)).GPUs(1).GPUMem(16384).GPUCores(10).Obj()), metav1.CreateOptions{})
				if err == nil || try > 100 {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	state := func() (bound, placedUnbound, locks int, err error) {
		l, err := c.CoreV1().Pods("soak").List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, 0, 0, err
		}
		for _, p := range l.Items {
			if p.Spec.NodeName != "" {
				bound++
			} else if p.Annotations[codec.PodNodeAnnotation] != "" {
				placedUnbound++
			}
		}
		nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, 0, 0, err
		}
		for _, n := range nodes.Items {
			if n.Annotations[codec.NodeLockAnnotation] != "" {
				locks++
			}
		}
		return bound, placedUnbound, locks, nil
	}
	faulted := false
	var faultAt time.Time
	var bound, placed, locks int
	for deadline := created.Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, p, lk, err := state()
		if err != nil {
			continue // the apiserver is restarting
		}
		bound, placed, locks = b, p, lk
		if !faulted && bound >= 30 {
			faulted, faultAt = true, time.Now()
			t.Logf("fault with %d bound, %d placed but unbound, %d locks, %s after the first create", bound, placed, locks, faultAt.Sub(created).Round(time.Millisecond))
			fault()
			t.Logf("fault over %s after it began", time.Since(faultAt).Round(time.Millisecond))
		}
		if faulted && bound >= fits && placed == 0 && locks == 0 {
			break
		}
	}
	wg.Wait()
	recovered := time.Since(faultAt)
	use, b, pending := xtSumAllocations(t, c, "soak")
	xtCheckNoOverbooking(t, use)
	xtCheckNoLocks(t, c)
	if len(b) != fits || len(pending) != total-fits || placed != 0 {
		t.Errorf("%d bound (want %d), %d pending (want %d), %d placed but unbound (want 0)", len(b), fits, len(pending), total-fits, placed)
	}
	t.Logf("every pod that fits bound and the cluster clean %s after the fault began (%s after the first create)",
		recovered.Round(time.Millisecond), time.Since(created).Round(time.Millisecond))
}

// TestSoakExtenderKilled: serve-extender gets SIGKILL mid-burst and is started again at once.
func TestSoakExtenderKilled(t *testing.T) {
	env, x := xtSoakSetup(t)
	xtSoakBurst(t, env.Client, func() {
		x.kill()
		x.start()
	})
}

// TestSoakAPIServerRestarted: kube-apiserver is stopped mid-burst, kept down 2 s and started again.
func TestSoakAPIServerRestarted(t *testing.T) {
	env, _ := xtSoakSetup(t)
	xtSoakBurst(t, env.Client, func() {
		d := env.RestartAPIServer(t, 2*time.Second)
		t.Logf("kube-apiserver unreachable for %s", d.Round(time.Millisecond))
	})
}

// xtSoakReplicas starts two serve-extender replicas with --leader-elect behind a stand-in for their Service
// (requests go to a ready replica, as a Service's endpoints are the ready pods; /readyz of a replica that does
// not lead answers 503) and kube-scheduler pointed at it.
func xtSoakReplicas(t *testing.T) (*testenv.Env, [2]*xtSoakExtender) {
	t.Helper()
	bin := xtSoakBinary(t)
	env := testenv.Start(t)
	var xs [2]*xtSoakExtender
	for i := range xs {
		xs[i] = &xtSoakExtender{t: t, bin: bin, kcfg: env.Kubeconfig, addr: xtFreeAddr(t), noWait: true,
			logs: filepath.Join(env.Dir, fmt.Sprintf("serve-extender-%d", i)),
			args: []string{"--leader-elect", "--leader-elect-lease", "default/kubectl-hami-extender"}}
		xs[i].start()
		t.Cleanup(xs[i].kill)
	}
	svc := &xtService{backends: xs[:]}
	go svc.probe(t.Context())
	front := httptest.NewServer(svc)
	t.Cleanup(front.Close)
	for deadline := time.Now().Add(60 * time.Second); svc.leader() == nil; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no replica became ready (leading) in 60 s")
		}
	}
	xtSoakCluster(t, env, front.URL)
	return env, xs
}

// xtService routes each request to a replica whose /readyz last answered 200, as a Service does.
type xtService struct {
	backends []*xtSoakExtender
	mu       sync.Mutex
	ready    []bool
}

func (s *xtService) probe(ctx context.Context) {
	for ctx.Err() == nil {
		ready := make([]bool, len(s.backends))
		for i, b := range s.backends {
			ready[i] = b.ready()
		}
		s.mu.Lock()
		s.ready = ready
		s.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

// leader is a ready replica, or nil.
func (s *xtService) leader() *xtSoakExtender {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, ok := range s.ready {
		if ok {
			return s.backends[i]
		}
	}
	return nil
}

func (s *xtService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := s.leader()
	if b == nil {
		http.Error(w, "no ready endpoint", http.StatusServiceUnavailable)
		return
	}
	target, _ := url.Parse("http://" + b.addr)
	httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
}

// TestSoakLeaderKilled: two replicas with leader election; the leader gets SIGKILL mid-burst (its Lease is not
// released, so the other takes over when it expires) and is started again, as its Deployment would.
func TestSoakLeaderKilled(t *testing.T) {
	env, xs := xtSoakReplicas(t)
	xtSoakBurst(t, env.Client, func() {
		leader := xtReplicaLeading(t, xs)
		leader.kill()
		leader.start()
	})
}

// TestSoakLeaderHandedOver: two replicas with leader election; the leader is stopped with SIGTERM mid-burst (a
// rollout): it gives the Lease back and the other leads at once.
func TestSoakLeaderHandedOver(t *testing.T) {
	env, xs := xtSoakReplicas(t)
	xtSoakBurst(t, env.Client, func() {
		leader := xtReplicaLeading(t, xs)
		leader.signal(syscall.SIGTERM)
		leader.start()
	})
}

// xtReplicaLeading is the replica that leads now.
func xtReplicaLeading(t *testing.T, xs [2]*xtSoakExtender) *xtSoakExtender {
	t.Helper()
	for _, x := range xs {
		if x.ready() {
			return x
		}
	}
	t.Fatal("no replica leads")
	return nil
}
