package tui_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hami/kubectl-hami/internal/cli"
	"github.com/kubectl-hami/kubectl-hami/internal/tui"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsWhatIfSameOnCLIAndUI: what-if's answer for a pod (each pending pod of a generated world,
// kube constraints included) is the same on the CLI's -o json and the UI's what-if form: both render
// query.WhatIf, and this fails the day one of them composes an answer of its own.
func TestGeneratedWorldsWhatIfSameOnCLIAndUI(t *testing.T) {
	first, n := worldgen.Seeds(40)
	dir := t.TempDir()
	compared := 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{Kube: seed%2 == 1})
		var buf bytes.Buffer
		if err := w.WriteList(&buf, "yaml"); err != nil {
			t.Fatal(err)
		}
		snap := filepath.Join(dir, "world.yaml")
		if err := os.WriteFile(snap, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		// One clock for both: the CLI reads the real one.
		now := time.Now()
		for _, pod := range w.Pods.Slice() {
			if pod.Spec.NodeName != "" {
				continue
			}
			p := pod.DeepCopy()
			p.APIVersion, p.Kind = "v1", "Pod"
			y, err := yaml.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "pod.yaml")
			if err := os.WriteFile(file, y, 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			root.SetArgs([]string{"what-if", "-f", file, "-o", "json", "-n", p.Namespace, "--snapshot", snap})
			if err := root.Execute(); err != nil {
				t.Fatalf("seed %d: what-if %s/%s: %v: %s", seed, p.Namespace, p.Name, err, errOut.String())
			}
			var fromCLI map[string]any
			if err := json.Unmarshal(out.Bytes(), &fromCLI); err != nil {
				t.Fatal(err)
			}
			delete(fromCLI, "apiVersion")
			delete(fromCLI, "kind")
			delete(fromCLI, "wanted")
			ui, err := json.Marshal(tui.WhatIfForTest(w, pod, func() time.Time { return now }))
			if err != nil {
				t.Fatal(err)
			}
			var fromUI map[string]any
			if err := json.Unmarshal(ui, &fromUI); err != nil {
				t.Fatal(err)
			}
			for k, v := range fromUI {
				if v == nil || isEmpty(v) {
					delete(fromUI, k) // omitempty on the CLI's side
				}
			}
			a, _ := json.Marshal(fromCLI)
			b, _ := json.Marshal(fromUI)
			if !bytes.Equal(a, b) {
				t.Fatalf("seed %d (WORLD_SEED=%d WORLDS=1): what-if %s/%s differs between the CLI and the UI\nCLI: %s\nUI:  %s", seed, seed, p.Namespace, p.Name, a, b)
			}
			compared++
		}
	}
	if compared == 0 {
		t.Fatal("no pending pod in any world: the generator is broken")
	}
	t.Logf("%d worlds from seed %d: %d pending pods, the same what-if answer on the CLI and the UI", n, first, compared)
}

// TestGeneratedWorldsWhyPendingSameOnCLIAndUI: why-pending's answer for each pod of a generated world (kube
// constraints, unbound holders and bound pods included) reads the same on the CLI and on the UI's why-pending
// page (and in -o wide's form, every part of the answer): both render query.Explain, and this fails the day one of them composes or drops a part of its own.
func TestGeneratedWorldsWhyPendingSameOnCLIAndUI(t *testing.T) {
	first, n := worldgen.Seeds(30)
	dir := t.TempDir()
	compared, pending := 0, 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{Kube: seed%2 == 1})
		var buf bytes.Buffer
		if err := w.WriteList(&buf, "yaml"); err != nil {
			t.Fatal(err)
		}
		snap := filepath.Join(dir, "world.yaml")
		if err := os.WriteFile(snap, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		for i, pod := range w.Pods.Slice() {
			// Every pending pod, and a few bound ones (the placed answer).
			if pod.Spec.NodeName != "" && i%5 != 0 {
				continue
			}
			// One clock for both, to the second the CLI's text shows (event and holder ages).
			now := time.Now()
			page, wide := tui.WhyPendingPageForTest(w, pod.Namespace, pod.Name, func() time.Time { return now })
			for _, c := range []struct {
				flags []string
				ui    string
			}{{nil, page}, {[]string{"-o", "wide"}, wide}} {
				var out, errOut bytes.Buffer
				root := cli.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
				root.SetArgs(append([]string{"why-pending", pod.Name, "-n", pod.Namespace, "--snapshot", snap}, c.flags...))
				if err := root.Execute(); err != nil {
					t.Fatalf("seed %d: why-pending %s/%s %v: %v: %s", seed, pod.Namespace, pod.Name, c.flags, err, errOut.String())
				}
				if cliText := strings.TrimRight(out.String(), "\n"); cliText != c.ui {
					t.Fatalf("seed %d (WORLD_SEED=%d WORLDS=1): why-pending %s/%s %v differs between the CLI and the UI\nCLI:\n%s\nUI:\n%s",
						seed, seed, pod.Namespace, pod.Name, c.flags, cliText, c.ui)
				}
			}
			compared++
			if pod.Spec.NodeName == "" {
				pending++
			}
		}
	}
	if pending == 0 {
		t.Fatal("no pending pod in any world: the generator is broken")
	}
	t.Logf("%d worlds from seed %d: %d pods (%d pending), the same why-pending answer on the CLI and the UI", n, first, compared, pending)
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
