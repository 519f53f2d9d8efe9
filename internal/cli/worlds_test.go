package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestGeneratedWorldsEveryCommand drives the commands over generated worlds. Invariants: nothing panics; every
// command exits 0 or 1 (lint's findings, what-if --exit-code); top's text and JSON list the same pending pods
// with the same reason why-pending gives (one verdict per pod); a snapshot written and read back gives the
// same verdicts.
func TestGeneratedWorldsEveryCommand(t *testing.T) {
	first, n := worldgen.Seeds(300)
	dir := t.TempDir()
	pods, pending := 0, 0
	for seed := first; seed < first+uint64(n); seed++ {
		w := worldgen.World(seed, worldgen.Options{})
		// Odd seeds are written as YAML, even ones as JSON (kubectl get -o yaml|json): both readers are used.
		format := "yaml"
		if seed%2 == 0 {
			format = "json"
		}
		var buf bytes.Buffer
		if err := w.WriteList(&buf, format); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		file := filepath.Join(dir, "world."+format)
		if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		p, q := checkWorldCommands(t, seed, file, dir)
		pods, pending = pods+p, pending+q
		if t.Failed() {
			t.Fatalf("seed %d failed; rerun with WORLD_SEED=%d WORLDS=1; the world:\n%s", seed, seed, buf.String())
		}
	}
	t.Logf("%d worlds from seed %d: %d pods, %d pending pods explained on every command", n, first, pods, pending)
	if pending == 0 {
		t.Error("no pending pod in any world: the generator is broken")
	}
}

// cmd runs one command in-process, turning a panic into a test failure that names the seed.
func cmdOK(t *testing.T, seed uint64, allowed func(error) bool, args ...string) (out string) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("seed %d: %v panicked: %v\n%s", seed, args, r, debug.Stack())
		}
	}()
	out, errOut, err := run(t, args...)
	if err != nil && (allowed == nil || !allowed(err)) {
		t.Errorf("seed %d: %v: %v\n%s", seed, args, err, errOut)
	}
	return out
}

func checkWorldCommands(t *testing.T, seed uint64, file, dir string) (pods, pending int) {
	text := cmdOK(t, seed, nil, "top", "--once", "--snapshot", file)
	cmdOK(t, seed, nil, "top", "--once", "-o", "wide", "--snapshot", file)
	var top Top
	if js := cmdOK(t, seed, nil, "top", "--once", "-o", "json", "--snapshot", file); json.Unmarshal([]byte(js), &top) != nil {
		t.Errorf("seed %d: top -o json is not JSON", seed)
		return
	}
	cmdOK(t, seed, lintFound, "lint", "--snapshot", file)
	cmdOK(t, seed, wouldNotFit, "what-if", "--snapshot", file, "--gpus", "1", "--gpumem", "4000", "--exit-code")
	cmdOK(t, seed, wouldNotFit, "what-if", "--snapshot", file, "--gpus", "2", "--gpumem-percentage", "50", "-n", "team-a", "--exit-code")
	// The snapshot round trip.
	again := filepath.Join(dir, "again.json")
	if err := os.WriteFile(again, []byte(cmdOK(t, seed, nil, "snapshot", "--snapshot", file, "-o", "json")), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range top.Pending {
		pending++
		if !bytes.Contains([]byte(text), []byte(p.Reason)) {
			t.Errorf("seed %d: top's text lacks %s/%s's reason %q", seed, p.Namespace, p.Name, p.Reason)
		}
		var answers [2]WhyPending
		for i, f := range []string{file, again} {
			js := cmdOK(t, seed, nil, "why-pending", p.Name, "-n", p.Namespace, "--snapshot", f, "-o", "json")
			if err := json.Unmarshal([]byte(js), &answers[i]); err != nil || answers[i].Verdict == nil {
				t.Errorf("seed %d: why-pending %s/%s -o json: %v", seed, p.Namespace, p.Name, err)
				return
			}
		}
		v := answers[0].Verdict
		if v.Summary != p.Summary {
			t.Errorf("seed %d: %s/%s: top says %q, why-pending %q", seed, p.Namespace, p.Name, p.Summary, v.Summary)
		}
		if w := answers[1].Verdict; w.Summary != v.Summary || w.Fits != v.Fits || fmt.Sprint(w.Feasible()) != fmt.Sprint(v.Feasible()) {
			t.Errorf("seed %d: %s/%s after the snapshot round trip: %q, before %q", seed, p.Namespace, p.Name, w.Summary, v.Summary)
		}
		if v.Fits && !v.NotHAMi && !v.NoGPURequest && v.Placement == nil {
			t.Errorf("seed %d: %s/%s: HAMi's pod fits without a placement", seed, p.Namespace, p.Name)
		}
		cmdOK(t, seed, nil, "why-pending", p.Name, "-n", p.Namespace, "--snapshot", file, "-o", "wide")
	}
	s, err := snapshot.LoadFile(file)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	for _, p := range s.Pods.Slice() {
		pods++
		if p.Spec.NodeName != "" {
			continue
		}
		if req, _ := engine.ParseRequest(p, engine.DefaultConfig()); req.WantsGPU() && p.Status.Phase == corev1.PodPending && !listed(top.Pending, p) {
			t.Errorf("seed %d: pending GPU pod %s/%s is not in top's pending list", seed, p.Namespace, p.Name)
		}
	}
	return pods, pending
}

func listed(rows []PendingPod, p *corev1.Pod) bool {
	for _, r := range rows {
		if r.Namespace == p.Namespace && r.Name == p.Name {
			return true
		}
	}
	return false
}

// lintFound and wouldNotFit are the commands' exit status 1 with an answer, not a failure.
func lintFound(err error) bool   { var e errLintFailed; return errors.As(err, &e) }
func wouldNotFit(err error) bool { return errors.Is(err, errWouldNotFit) }
