package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedNow is one hour after the demo cluster's pods were created (2026-11-20 09:00 UTC).
var fixedNow = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// run executes the root command in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runB(t, args...)
}

func runB(t testing.TB, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	cmd := newRoot(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, func() time.Time { return fixedNow })
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// TestGolden pins the exact output of each read command on the embedded demo cluster.
func TestGolden(t *testing.T) {
	cases := []struct {
		golden string
		args   []string
	}{
		{"top.txt", []string{"top", "--demo"}},
		{"top-wide.txt", []string{"top", "--demo", "-o", "wide"}},
		{"why-pending-quota.txt", []string{"why-pending", "llm-serve-2", "-n", "inference", "--demo"}},
		{"why-pending-memory-wide.txt", []string{"why-pending", "pretrain-2", "-n", "ml-research", "--demo", "-o", "wide", "--node", "gpu-a100-02"}},
		{"why-pending-running.txt", []string{"why-pending", "finetune-a", "-n", "ml-research", "--demo"}},
		{"what-if-fits.txt", []string{"what-if", "--demo", "-n", "team-vision", "--gpus", "1", "--gpumem", "8000", "--gpucores", "20", "--count", "10"}},
		{"what-if-mig.txt", []string{"what-if", "--demo", "-n", "team-vision", "--gpumem", "9000", "--annotation", "nvidia.com/vgpu-mode=mig"}},
		{"what-if-too-big.txt", []string{"what-if", "--demo", "-n", "ml-research", "--gpus", "8", "--gpumem", "70000"}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, err := run(t, tc.args...)
			if err != nil {
				t.Fatalf("%v: %v\n%s", tc.args, err, errOut)
			}
			checkGolden(t, tc.golden, tc.args, out)
		})
	}
}

// diff shows the first differing line, enough to see what changed.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + wl + "\n  got: " + gl
		}
	}
	return "(same lines)"
}

// checkGolden compares a command's output with testdata/<golden>, rewriting it first with -update.
func checkGolden(t *testing.T, golden string, args []string, out string) {
	t.Helper()
	path := filepath.Join("testdata", golden)
	if *update {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if out != string(want) {
		t.Errorf("output of %v differs from %s:\n%s", args, path, diff(string(want), out))
	}
}
