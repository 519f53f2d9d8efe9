package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
)

// TestConnectionState: the header follows the API server's answers: live; stale since the last answer, with
// the numbers marked, while it does not answer; live again when it does; unauthorized with the context's user
// when it refuses the credentials.
func TestConnectionState(t *testing.T) {
	s, objs := demoObjects(t)
	now := fixedNow
	for _, width := range []int{80, 200} {
		now = fixedNow
		m, err := New(Options{Snapshot: s, Client: fake.NewClientset(objs...), DeviceConfigMap: snapshot.DefaultDeviceConfigMap,
			Context: "test-ctx", User: "alice", Now: func() time.Time { return now }, NoColor: true})
		if err != nil {
			t.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: width, Height: 24})
		if m.probeFn == nil {
			t.Fatal("a live UI has no probe of the API server")
		}
		if err := m.probeFn(context.Background()); err != nil {
			t.Fatalf("the probe of the fake clientset: %v", err)
		}
		head := func() string { return strings.Join(strings.Split(screen(m), "\n")[:3], "\n") }
		if h := head(); !strings.Contains(h, "● live") || strings.Contains(h, "STALE") {
			t.Errorf("%d: a new live UI's header:\n%s", width, h)
		}

		now = fixedNow.Add(30 * time.Second)
		m.Update(probeMsg{err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")})
		m.Update(probeMsg{err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")})
		h := head()
		for _, want := range []string{"◐ stale since 10:00:00 · reconnecting", "STALE 11 nodes", "reconnecting (try 2)"} {
			if !strings.Contains(h, want) {
				t.Errorf("%d: the header of an API server that does not answer lacks %q:\n%s", width, want, h)
			}
		}
		if strings.Contains(h, "● live") {
			t.Errorf("%d: a stale header still says live:\n%s", width, h)
		}

		m.Update(probeMsg{})
		if h := head(); !strings.Contains(h, "● live") || strings.Contains(h, "STALE") || strings.Contains(h, "reconnecting") {
			t.Errorf("%d: the header once the API server answers again:\n%s", width, h)
		}

		m.Update(probeMsg{err: apierrors.NewUnauthorized("Unauthorized")})
		h = head()
		for _, want := range []string{"✗ unauthorized (user alice)", "STALE"} {
			if !strings.Contains(h, want) {
				t.Errorf("%d: the header of refused credentials lacks %q:\n%s", width, want, h)
			}
		}
		if width == 200 && !strings.Contains(h, "the API server refuses the credentials of user alice (context test-ctx): renew the token") {
			t.Errorf("the header does not say which credentials were refused and what to do:\n%s", h)
		}
	}
}

// TestConnectUnauthorized: a first list refused for its credentials says so, and names the user, not the network.
func TestConnectUnauthorized(t *testing.T) {
	m, err := New(Options{Server: "https://api.example:6443", Context: "prod", User: "bob", NoColor: true,
		Now:  func() time.Time { return fixedNow },
		Load: func(context.Context) (Loaded, error) { return Loaded{}, apierrors.NewUnauthorized("Unauthorized") }})
	if err != nil {
		t.Fatal(err)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24})
	runCmd(m, m.load())
	got := screen(m)
	for _, want := range []string{"✗ unauthorized (user bob)", "the API server refuses the credentials of user bob (context prod)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the refused first list lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "the network") {
		t.Errorf("a refused token gets the network hint:\n%s", got)
	}
}
