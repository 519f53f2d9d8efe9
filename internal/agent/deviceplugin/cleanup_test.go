package deviceplugin

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// TestSweepContainerDirs: folders of pods gone from the node are removed once older than the grace; folders of
// live pods, young folders and files that are not <uid>_<container> folders stay.
func TestSweepContainerDirs(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, hostContainersSubdir)
	old := time.Now().Add(-time.Hour)
	mk := func(name string, at time.Time, isDir bool) {
		t.Helper()
		path := filepath.Join(dir, name)
		var err error
		if isDir {
			err = os.MkdirAll(path, 0o755)
		} else {
			err = os.WriteFile(path, nil, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, at, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mk("live-uid_main", old, true)
	mk("gone-uid_main", old, true)
	mk("gone-uid_sidecar", old, true)
	mk("young-uid_main", time.Now(), true)
	mk("other-node-uid_main", old, true)
	mk("not-a-container", old, true)
	mk("gone2-uid_main", old, false)
	client := fake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "live", UID: types.UID("live-uid")}, Spec: corev1.PodSpec{NodeName: "gpu-a"}},
	)
	p := &Plugin{client: client, opts: Options{NodeName: "gpu-a", HamiCoreDir: root}, log: slog.New(slog.DiscardHandler)}
	n, err := p.sweepContainerDirs(context.Background(), time.Now())
	if err != nil || n != 3 {
		t.Fatalf("removed %d, err %v; want 3", n, err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	want := []string{"gone2-uid_main", "live-uid_main", "not-a-container", "young-uid_main"}
	if len(names) != len(want) {
		t.Fatalf("left %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("left %v, want %v", names, want)
		}
	}
}
