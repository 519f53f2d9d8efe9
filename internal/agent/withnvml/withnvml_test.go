//go:build linux && cgo

package withnvml_test

import (
	"debug/elf"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/agent"
)

// build builds ./cmd/kubectl-hami with the tags into dir.
func build(t *testing.T, dir, tags string) string {
	t.Helper()
	bin := filepath.Join(dir, "kubectl-hami")
	args := []string{"build", "-ldflags=-s -w", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "../../../cmd/kubectl-hami")...)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, tail(out))
	}
	return bin
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

func run(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// undefinedNVML counts the NVML symbols the binary leaves to the dynamic loader.
func undefinedNVML(t *testing.T, bin string) int {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	n := 0
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF && strings.HasPrefix(s.Name, "nvml") {
			n++
		}
	}
	return n
}

// TestDefaultBuildHasNoNVML: without the tags, kubectl-hami does not link go-nvml, whose undefined NVML symbols
// would stop every command at start (the binary links Go's plugin package through k8s.io/cli-runtime).
func TestDefaultBuildHasNoNVML(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../../cmd/kubectl-hami").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, tail(out))
	}
	deps := strings.Fields(string(out))
	if slices.Contains(deps, "github.com/NVIDIA/go-nvml/pkg/nvml") {
		t.Errorf("the default build of kubectl-hami links go-nvml")
	}
	// The device plugin comes with NVML: a kubectl plugin that cannot run the agent needs no gRPC.
	if slices.Contains(deps, "google.golang.org/grpc") {
		t.Errorf("the default build of kubectl-hami links gRPC")
	}
	if !slices.Contains(deps, "github.com/kubectl-hami/kubectl-hami/internal/agent/withnvml") {
		t.Log("kubectl-hami does not import the agent command yet")
	}
}

// TestBinaryWithNVML builds the real kubectl-hami with agent.BuildTags and runs it: it links go-nvml, starts (its
// NVML symbols are bound lazily, once libnvidia-ml.so.1 is loaded), and its agent, on a machine without the
// NVIDIA driver, names the missing library instead of crashing.
func TestBinaryWithNVML(t *testing.T) {
	withNVML := build(t, t.TempDir(), agent.BuildTags)
	if n := undefinedNVML(t, withNVML); n == 0 {
		t.Errorf("the build with -tags %s links no NVML", agent.BuildTags)
	}
	// The device plugin's gRPC without golang.org/x/net/trace, whose html/template costs 30 MB (grpcnotrace).
	info, err := exec.Command("go", "version", "-m", withNVML).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, info)
	}
	if !strings.Contains(string(info), "google.golang.org/grpc") || !strings.Contains(string(info), "grpcnotrace") {
		t.Errorf("the build with -tags %s lacks the device plugin's gRPC or grpcnotrace:\n%s", agent.BuildTags, tail(info))
	}
	if out, err := run(t, withNVML, "version"); err != nil {
		t.Fatalf("build with NVML: version (the binary must start without libnvidia-ml.so.1): %v\n%s", err, out)
	}
	out, err := run(t, withNVML, "agent", "--node-name", "n")
	switch {
	case strings.Contains(out, `unknown command "agent"`):
		t.Log("the agent command is not registered in the root command yet")
	case strings.Contains(out, "libnvidia-ml.so.1 not found"):
		t.Logf("agent: %s", strings.TrimSpace(out))
	case err == nil:
		t.Errorf("agent ran on a machine without NVML:\n%s", out)
	default:
		// A machine with the driver: NVML started and the agent failed later (no cluster).
		t.Logf("agent (NVML present?): %v\n%s", err, out)
	}
}
