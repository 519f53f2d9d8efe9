package testenv

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// RestartAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after a grace period), keeps it down for
// down, and starts it again on the same port with the same flags, returning once it is ready. Clients
// built from Config keep working: the URL, token and certificates do not change. It returns how long the
// apiserver was unreachable.
func (e *Env) RestartAPIServer(t testing.TB, down time.Duration) time.Duration {
	t.Helper()
	u, err := url.Parse(e.APIServerURL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("testenv: apiserver URL %s: %v", e.APIServerURL, err)
	}
	began := time.Now()
	e.apiserver.stop()
	time.Sleep(down)
	p, err := e.startAPIServer(t, e.apiserverBin, e.etcd, port)
	if err != nil {
		t.Fatal(fmt.Errorf("testenv: restart kube-apiserver on port %d: %w", port, err))
	}
	e.apiserver = p
	return time.Since(began)
}
