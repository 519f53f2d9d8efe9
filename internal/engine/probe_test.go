package engine_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestFitsNowIsEvaluateFits: the proven fixes' searches ask fitsNow, which walks without rows and stops at the
// first node that fits; it must answer what Evaluate's verdict says, with the facts judging and without, on
// every node and on a candidate list, the kube checks on and off.
func TestFitsNowIsEvaluateFits(t *testing.T) {
	first, n := worldgen.Seeds(100)
	var fits, fails int
	check := func(what string, seed uint64, c *engine.Cluster, pods []*corev1.Pod) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var subset []string
		for _, name := range c.NodeNames() {
			if rng.IntN(2) == 0 {
				subset = append(subset, name)
			}
		}
		now := worldgen.Epoch.Add(time.Hour)
		for _, p := range pods {
			for _, facts := range []bool{true, false} {
				restore := engine.SetJudgeByFacts(facts)
				for _, opts := range []engine.EvalOptions{{Now: now}, {Now: now, Nodes: subset}, {Now: now, Kube: engine.KubeOff}, {}} {
					want := c.Evaluate(p, opts).Fits
					if got := engine.FitsNow(c, p, opts); got != want {
						t.Fatalf("%s: pod %s/%s (facts %v, %d nodes asked, kube %v): FitsNow %v, Evaluate's verdict %v",
							what, p.Namespace, p.Name, facts, len(opts.Nodes), opts.Kube, got, want)
					}
					if want {
						fits++
					} else {
						fails++
					}
				}
				restore()
			}
		}
	}
	eachWorld(first, n, check)
	c, pods := everyKindWorld(t)
	check("every kind", 1, c, pods)
	if fits == 0 || fails == 0 {
		t.Fatalf("%d fitting and %d failing evaluations: the generators give one side only", fits, fails)
	}
	t.Log(fmt.Sprintf("%d worlds from seed %d: %d fitting, %d failing evaluations compared", n, first, fits, fails))
}

// TestPodCountIsPodsOnsLength: the tables count a node's pods with PodCount; it must be PodsOn's length on every
// node, a node that is not there included.
func TestPodCountIsPodsOnsLength(t *testing.T) {
	first, n := worldgen.Seeds(20)
	counted := 0
	eachWorld(first, n, func(what string, _ uint64, c *engine.Cluster, _ []*corev1.Pod) {
		for _, name := range append(c.NodeNames(), "no-such-node") {
			if got, want := c.PodCount(name), len(c.PodsOn(name)); got != want {
				t.Fatalf("%s: node %s: PodCount %d, PodsOn %d pods", what, name, got, want)
			}
			counted += c.PodCount(name)
		}
	})
	if counted == 0 {
		t.Fatal("no pod counted: the generators place none")
	}
}
