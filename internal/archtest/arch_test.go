package archtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/architecture.md's package table from go list")

const module = "github.com/kubectl-hami/kubectl-hami/"

// notes says, per package, what the table's last column says. A package missing here fails the test: a new
// package gets a line in the doc.
var notes = map[string]string{
	"cmd/kubectl-hami":                        "`main`; `KUBECTL_HAMI_CPUPROFILE`",
	"internal/cli":                            "cobra commands, one Options struct each (`Complete`, `Validate`, `Run`), kubectl's global flags (`genericclioptions.ConfigFlags`), shell completion",
	"internal/engine":                         "pure: no client-go, no clock (kubefit's standard checks judge the pods of other schedulers)",
	"internal/codec":                          "pure; HAMi's annotation formats; fuzz targets",
	"internal/kubefit":                        "kube-scheduler's own helpers (`k8s.io/component-helpers`)",
	"internal/snapshot":                       "client-go reads and file parsing; HAMi's device ConfigMap to `engine.Config`; Volcano queues",
	"internal/render":                         "text only",
	"internal/resolve":                        "typed names to real ones: exact, case, prefix, closest (did you mean)",
	"internal/lint":                           "`kubectl hami lint`'s checks",
	"internal/preempt":                        "pure: preemption's victim search (kube-scheduler's method, the engine's gates through `engine.Probe`); no client-go, no clock",
	"internal/query":                          "the questions every surface asks, answered once: why-pending's and what-if's answers (`Explain`, `WhatIf`), pending GPU pods, kube checks and quota used, what-if's pod, event time, node totals, known names; no client-go (render imports it)",
	"internal/tui":                            "Bubble Tea v2; reads live usage through `internal/usage` (never links the agent)",
	"internal/usage":                          "reads the agents' GET /usage",
	"internal/extender":                       "HTTP server, informers, bind, node locks, leader election",
	"internal/agent":                          "the node agent: registration, health, usage, metrics; NVML behind `GPUSource`",
	"internal/agent/agentapi":                 "the agent's wire types (GET /usage, GET /devices), for readers",
	"internal/agent/deviceplugin":             "the kubelet device plugin of the agent's full mode: Allocate gives containers the GPUs the scheduler chose",
	"internal/agent/nvmlsource":               "NVML (cgo, `linux && cgo`) as a `GPUSource`",
	"internal/agent/withnvml":                 "puts NVML and the device plugin into the binary when built with their tags; empty without",
	"internal/agent/nvmlmock":                 "completes go-nvml's mock servers (`pkg/nvml/mock/dgx*`) for the agent's tests and benchmarks",
	"internal/agent/agenttest":                "helpers the agent's tests share: Nodes and pods on a real API server",
	"internal/agent/deviceplugin/kubelettest": "a fake kubelet (registration and the device plugin API over its socket) for the device plugin's tests",
	"internal/agent/deviceplugin/migtest":     "test only: MIG at Allocate on go-nvml's dgxa100/dgxh100 mocks with the real extender (apart: kustomize must not link into the NVML tests)",
	"internal/agent/agenttest/manifests":      "the deploy tests' helpers: kustomize builds and server-side apply (apart: kustomize must not link into the NVML tests)",
	"internal/worldgen":                       "seeded random clusters for the property tests and `make soak-worlds`",
	"internal/oracle":                         "test only: the real kube-scheduler and serve-extender (deploy/extender) as the oracle of what-if's verdict; `make soak-oracle`",
	"internal/testbuild":                      "named builders of pods and containers for tests (kube-scheduler's `st.MakePod()` style), and the demo cluster with issue 25's cordon, taint and selecting pod (`KubeGatesDemo`); only tests import it",
	"internal/version":                        "set with `-ldflags -X` by `make build`, `make dist` and the Dockerfiles",
	"internal/testenv":                        "real etcd, kube-apiserver and kube-scheduler for tests, built by `hack/k8s-binaries.sh`",
	"internal/device":                         "the device seam: the `Family` interface, a family's `Kind` (annotations, resources, units, hooks) and its gate rows (`Row`); pure",
	"internal/device/all":                     "the registry of device families: one line per family, NVIDIA's included",
	"internal/device/familytest":              "test only: a family's Kinds run through the engine on a one-node world, for each family's table tests",
	"internal/device/nvidia":                  "NVIDIA GPUs: its request and register readers and the engine's rows it opts into (devices-ready, numa, quota, MIG)",
	"internal/device/vastai":                  "Vastaitech accelerators, whole-card mode: a slot each",
	"internal/device/awsneuron":               "AWS Inferentia and Trainium: devices from the node's capacity, NeuronCores as a bit mask, contiguous runs",
	"internal/device/amd":                     "AMD GPUs: cores as a share of each GPU's compute units",
	"internal/device/ascend":                  "Huawei Ascend NPUs: vNPU templates, the 910C module rule",
	"internal/device/biren":                   "Biren GPUs: a slot each, no memory or cores",
	"internal/device/cambricon":               "Cambricon MLUs",
	"internal/device/enflame":                 "Enflame GCUs, taken whole",
	"internal/device/hygon":                   "Hygon DCUs",
	"internal/device/iluvatar":                "Iluvatar CoreX GPUs",
	"internal/device/metax":                   "MetaX GPUs, taken whole",
	"internal/device/metaxsgpu":               "MetaX shared GPUs (sGPU) with their QoS row",
	"internal/device/kunlun":                  "Kunlunxin XPUs, whole and vXPU, with the interconnect rule and the equal-share row",
	"internal/device/mthreads":                "Moore Threads GPUs: devices from the node's capacity, the one-device row",
	"internal/volcano":                        "Volcano's Queue and PodGroup resources and their conversion into the engine's types",
	"internal/archtest":                       "this table and the layering rules",
	"examples":                                "the embedded demo cluster, generated by `hack/gendemo` with the engine's own placements",
	"deploy":                                  "manifests and their tests (real API server)",
	"build":                                   "Dockerfiles and their tests",
	"hack/gendemo":                            "generates the demo cluster",
	"hack/genbig":                             "generates large clusters for benchmarks",
	"hack/release":                            "reproducible release archives (`make dist`)",
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list runs go list over the module.
func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].ImportPath < pkgs[j].ImportPath })
	return pkgs
}

func table(t *testing.T, pkgs []pkg) string {
	var b strings.Builder
	b.WriteString("| package | imports (in this module) | notes |\n|---|---|---|\n")
	for _, p := range pkgs {
		var deps []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				deps = append(deps, "`"+strings.TrimPrefix(imp, module)+"`")
			}
		}
		note, ok := notes[p.ImportPath]
		if !ok {
			t.Errorf("package %s has no note: add one to internal/archtest/arch_test.go", p.ImportPath)
		}
		d := strings.Join(deps, ", ")
		if d == "" {
			d = "-"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", p.ImportPath, d, note)
	}
	return b.String()
}

const begin, end = "<!-- packages: generated by go test ./internal/archtest -update -->\n", "<!-- packages: end -->\n"

// TestArchitectureDocPackageTable: docs/architecture.md's package table is what go list says.
func TestArchitectureDocPackageTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "architecture.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q and %q around the package table", path, begin, end)
	}
	want := table(t, list(t))
	if got := s[i+len(begin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/architecture.md's package table differs from go list; run go test ./internal/archtest -update. Want:\n%s", want)
	}
}

// TestLayers: the pure packages stay pure and the readers do not link what they only read.
func TestLayers(t *testing.T) {
	forbidden := map[string][]string{
		// The engine decides; it never talks to a cluster.
		"internal/engine": {"k8s.io/client-go", module + "internal/snapshot", module + "internal/extender"},
		"internal/codec":  {"k8s.io/client-go", module + "internal/engine"},
		// A device family describes; the engine decides.
		"internal/device/all": {"k8s.io/client-go", module + "internal/engine$", module + "internal/snapshot"},
		// The UI reads the agent's wire types, not the agent (NVML, Prometheus).
		"internal/tui":   {module + "internal/agent", "github.com/NVIDIA/go-nvml", "github.com/prometheus/client_golang"},
		"internal/usage": {module + "internal/agent", "github.com/prometheus/client_golang"},
		// Only the agent links NVML.
		// The extender watches what it needs itself; the snapshot reader is the commands'.
		"internal/extender": {"github.com/NVIDIA/go-nvml", module + "internal/tui", module + "internal/cli", module + "internal/snapshot"},
		"internal/render":   {"k8s.io/client-go"},
		// Every package's tests may build objects with it, so it imports none of them.
		"internal/testbuild": {module + "internal"},
		// The shared queries read objects already fetched: the renderers import them.
		"internal/query": {"k8s.io/client-go", module + "internal/snapshot", module + "internal/render"},
		// The victim search is pure, like the engine it asks.
		"internal/preempt": {"k8s.io/client-go", module + "internal/snapshot", module + "internal/extender"},
	}
	seen := 0
	for _, p := range list(t) {
		bad, ok := forbidden[p.ImportPath]
		if !ok {
			continue
		}
		seen++
		for _, dep := range p.Deps {
			for _, b := range bad {
				if exact, ok := strings.CutSuffix(b, "$"); ok { // the package itself, not the ones below it
					if dep == exact {
						t.Errorf("%s depends on %s", p.ImportPath, dep)
					}
					continue
				}
				if dep == b || (strings.HasPrefix(dep, b+"/") && !strings.HasPrefix(dep, module+"internal/agent/agentapi")) {
					t.Errorf("%s depends on %s", p.ImportPath, dep)
				}
			}
		}
	}
	if seen != len(forbidden) {
		t.Errorf("checked %d of the %d packages with rules: a package was renamed", seen, len(forbidden))
	}
	for _, p := range list(t) {
		for _, dep := range p.Deps {
			if dep == module+"internal/testbuild" {
				t.Errorf("%s depends on internal/testbuild, which only tests may use", p.ImportPath)
			}
		}
	}
}
