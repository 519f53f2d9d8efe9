package tui

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryInTmuxFeel drives the built binary in tmux: the window grows after G and the first nodes come
// back with no blank rows; against an API server that accepts connections and never answers, the UI says at
// once what it is connecting to.
func TestBinaryInTmuxFeel(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is not on PATH (%v): run `bash hack/ensure-tmux.sh` to install it", err)
	}
	bin := buildBinary(t)

	t.Run("resize after G", func(t *testing.T) {
		tm := startTmux(t, 80, 24, bin, "top", "--demo")
		tm.waitFor("the first frame", "cpu-01", "? help • q quit")
		tm.keys("G")
		tm.waitFor("the last node", "▸ gpu-t4-03")
		tm.resize(200, 66)
		tm.waitFor("the grown frame", "cpu-01", "gpu-a100-01", "▸ gpu-t4-03")
		// Every node fits 66 lines: the table starts again at its first row, right under the heading.
		lines := strings.Split(tm.screen(), "\n")
		if len(lines) <= headerLines+1 || !strings.Contains(lines[headerLines+1], "cpu-01") {
			t.Errorf("the first node is not the first row after growing:\n%s", strings.Join(lines, "\n"))
		}
		tm.keys("q")
		tm.waitExit()
	})

	t.Run("hung API server", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() { // accept and never answer
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { _ = c.Close() })
			}
		}()
		kc := filepath.Join(t.TempDir(), "kubeconfig")
		cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: hung, cluster: {server: "http://%s"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: hung, context: {cluster: hung, user: u}}]
current-context: hung
`, ln.Addr())
		if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		tm := startTmux(t, 100, 24, bin, "top", "--kubeconfig", kc, "--request-timeout", "2s")
		tm.waitFor("the connecting line", "connecting to http://"+ln.Addr().String(), "◌ connecting…", "context hung")
		tm.waitFor("the error", "cannot list the cluster at http://"+ln.Addr().String(), "r retry now")
		tm.keys("q")
		tm.waitExit()
	})
}
