package extender_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/extender"
	"github.com/kubectl-hami/kubectl-hami/internal/testenv"
)

// nodeGets counts the GETs of single nodes a client makes.
type nodeGets struct {
	rt http.RoundTripper
	n  atomic.Int32
}

func (c *nodeGets) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/nodes/") {
		c.n.Add(1)
	}
	return c.rt.RoundTrip(r)
}

// TestBindLockReusesItsOwnWrite (real apiserver): consecutive binds to one node start from the node as the
// previous lock write returned it, so they do not read the node again; a lock someone else released in the
// meantime (HAMi's device plugin after Allocate) is seen on a fresh read, never refused from the stale copy.
// TestBindLockReusesItsOwnWrite (real apiserver): consecutive binds to one node start from the node as the
// previous lock write returned it, so they do not read the node again; a lock someone else released in the
// meantime (HAMi's device plugin after Allocate) is seen on a fresh read, never refused from the stale copy.
func TestBindLockReusesItsOwnWrite(t *testing.T) {
	t.Parallel()
	env := testenv.Start(t)
	ctx := context.Background()
	counter := &nodeGets{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { counter.rt = rt; return counter }
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	xtCreateNode(t, env.Client, xtNode("b1", xtGPUs("b1", 2, 80000, 10)))

	// binder starts one extender server; the function it returns creates the named pods and binds each to b1.
	binder := func(t *testing.T, release bool) func(names ...string) {
		st := extender.NewState(engine.DefaultConfig())
		opts := extender.DefaultOptions()
		opts.ReleaseLockAfterBind = release
		srv := httptest.NewServer(extender.NewServer(st, client, opts, nil, time.Now).Handler())
		t.Cleanup(srv.Close)
		n, err := env.Client.CoreV1().Nodes().Get(ctx, "b1", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st.SetNode(n)
		return func(names ...string) {
			t.Helper()
			for _, name := range names {
				p, err := env.Client.CoreV1().Pods("default").Create(ctx, xtLivePod(xtPod("default", name).GPUs(1).GPUMem(1000).GPUCores(10).Obj()), metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				st.SetPod(p, time.Now())
				body, _ := json.Marshal(extenderv1.ExtenderBindingArgs{PodName: name, PodNamespace: "default", PodUID: p.UID, Node: "b1"})
				resp, err := http.Post(srv.URL+"/bind", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				var res extenderv1.ExtenderBindingResult
				err = json.NewDecoder(resp.Body).Decode(&res)
				resp.Body.Close()
				if err != nil || res.Error != "" {
					t.Fatalf("bind %s: %v %s", name, err, res.Error)
				}
			}
		}
	}

	t.Run("consecutive binds read the node once", func(t *testing.T) {
		bind := binder(t, true)
		counter.n.Store(0)
		bind("p1", "p2", "p3")
		xtCheckNoLocks(t, env.Client) // released LockHold after the last bind
		if got := counter.n.Load(); got != 1 {
			t.Errorf("3 binds with lock and release read the node %d times, want 1", got)
		}
	})
	t.Run("a lock released by someone else is read afresh", func(t *testing.T) {
		// q1 keeps its lock (no release after bind: HAMi's device plugin would release it after Allocate).
		bind := binder(t, false)
		bind("q1")
		// The lock goes (a device plugin releasing it before it writes q1's bind-phase, or an operator): q1
		// still reads "allocating", so only a fresh read of b1 tells that nothing blocks q2.
		unlock := []byte(`{"metadata":{"annotations":{"` + codec.NodeLockAnnotation + `":null}}}`)
		if _, err := env.Client.CoreV1().Nodes().Patch(ctx, "b1", types.MergePatchType, unlock, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		bind("q2") // this server's copy of b1 still shows q1's lock: it must read b1 again, not refuse
	})
}
