package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadCommandsSayTheAPIServerStalled: an API server that takes the TLS connection and never answers makes
// the read commands fail after the request timeout, saying so, instead of hanging.
func TestReadCommandsSayTheAPIServerStalled(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+srv.URL+`", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"why-pending", "p", "-n", "team"},
		{"top", "-o", "json"},
		{"what-if", "--gpus", "1"},
		{"snapshot"},
	} {
		start := time.Now()
		_, _, err := run(t, append(args, "--kubeconfig", kubeconfig, "--request-timeout", "300ms")...)
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") || !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%v: %v, want it to say the API server at %s did not answer within 300ms", args, err, srv.URL)
		}
		if took > 20*time.Second {
			t.Errorf("%v took %s", args, took)
		}
	}
	// Without the flag the read commands wait defaultReadTimeout, not forever.
	r := &readFlags{}
	if got := r.requestTimeout(nil); got != defaultReadTimeout || defaultReadTimeout <= 0 {
		t.Errorf("default request timeout %s", got)
	}
}
