package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLiveReadIsNotRateLimited reads a cluster whose pod list comes in 20 pages, as a real apiserver pages
// 10,000 pods at the 500 per list call snapshot.Live asks for. The read commands build their client from the
// kubeconfig without setting QPS/Burst, so client-go's default client-side limiter (5 requests/s after a
// burst of 10) holds the 23 list calls back for about 2.6 s: on the 1,000-node benchmark cluster
// (BenchmarkTopLive1000Nodes) `top` takes 2.9 s, of which the reads themselves take 0.6 s unthrottled.
func TestLiveReadIsNotRateLimited(t *testing.T) {
	t.Parallel()
	const pages = 20
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		var obj any
		switch r.URL.Path {
		case "/api/v1/nodes":
			obj = &corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}}
		case "/api/v1/resourcequotas":
			obj = &corev1.ResourceQuotaList{TypeMeta: metav1.TypeMeta{Kind: "ResourceQuotaList", APIVersion: "v1"}}
		case "/api/v1/pods":
			page, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Query().Get("continue"), "page-"))
			list := &corev1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}}
			list.Items = []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p-%d", page)}}}
			if page+1 < pages {
				list.Continue = fmt.Sprintf("page-%d", page+1)
			}
			obj = list
		default:
			w.WriteHeader(http.StatusNotFound)
			obj = &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
				Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound}
		}
		_ = json.NewEncoder(w).Encode(obj)
	}))
	defer srv.Close()
	kc := writeKubeconfig(t, filepath.Join(t.TempDir(), "kubeconfig"), srv.URL, "t", "")

	start := time.Now()
	out, errOut, err := runB(t, "top", "--kubeconfig", kc)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("top: %v\n%s", err, errOut)
	}
	// The server has no nodes: top says so first, then its header.
	if !strings.HasPrefix(out, "The cluster has no nodes") || !strings.Contains(out, "\nSource: cluster "+srv.URL) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	if n := requests.Load(); n < pages+2 {
		t.Fatalf("the server saw %d requests, want at least %d", n, pages+2)
	}
	if took > time.Second {
		t.Errorf("top made %d requests to a local server in %s: client-side rate limiting (client-go's default 5 QPS, burst 10)",
			requests.Load(), took.Round(time.Millisecond))
	}
}
