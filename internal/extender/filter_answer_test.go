package extender

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
	"github.com/kubectl-hami/kubectl-hami/internal/snapshot"
	"github.com/kubectl-hami/kubectl-hami/internal/worldgen"
)

// TestFilterAnswersAsBefore: /filter and /prioritize, answering from a Summary into the wire buffer, send byte
// for byte what the handlers sent when they answered from a full verdict through maps (referenceFilter and
// referencePrioritize keep that code): over generated worlds (NVIDIA, worldgen's vendor families, Volcano
// cards, kube-scheduler's constraints) with and without their quotas and a world of every device type, for
// every candidate list kube-scheduler may send (every node; a shuffled subset with a repeated and an
// unknown name; whole Node objects), prioritize both from filter's verdict and evaluating anew.
func TestFilterAnswersAsBefore(t *testing.T) {
	first, n := worldgen.Seeds(40)
	calls := 0
	for seed := first; seed < first+uint64(n); seed++ {
		for _, kube := range []bool{false, true} {
			w := worldgen.World(seed, worldgen.Options{Kube: kube})
			for _, quotas := range []bool{true, false} {
				calls += compareAnswers(t, fmt.Sprintf("seed %d kube=%v quotas=%v", seed, kube, quotas), w, quotas, seed)
			}
		}
	}
	calls += compareAnswers(t, "every kind", worldgen.EveryKind(engine.DefaultConfig().Kinds()), false, 1)
	if calls == 0 {
		t.Fatal("no pending pod in any world: the generators are broken")
	}
	t.Logf("%d worlds from seed %d and every kind: %d answers compared", n, first, calls)
}

func compareAnswers(t *testing.T, what string, w *snapshot.Snapshot, quotas bool, seed uint64) int {
	t.Helper()
	state := NewState(engine.DefaultConfig())
	now := worldgen.Epoch.Add(10 * time.Minute)
	var names []string
	var nodes corev1.NodeList
	for _, node := range w.Nodes {
		state.SetNode(node)
		names = append(names, node.Name)
		nodes.Items = append(nodes.Items, *node)
	}
	for i, p := range w.Pods.Slice() {
		if p.UID == "" {
			p.UID = types.UID(fmt.Sprintf("uid-%d", i))
		}
		state.SetPod(p, now)
	}
	if quotas {
		for _, q := range w.Quotas {
			state.SetQuota(q)
		}
	}
	state.SetSynced()
	srv := NewServer(state, nil, Options{}, nil, func() time.Time { return now })
	h := srv.Handler()
	rng := rand.New(rand.NewPCG(seed, 11))
	subset := []string{"no-such-node"}
	for _, name := range names {
		if rng.IntN(3) > 0 {
			subset = append(subset, name)
		}
	}
	if len(names) > 0 {
		subset = append(subset, names[rng.IntN(len(names))])
	}
	rng.Shuffle(len(subset), func(i, j int) { subset[i], subset[j] = subset[j], subset[i] })
	calls := 0
	for _, p := range w.Pods.Slice() {
		if p.Spec.NodeName != "" {
			continue
		}
		for _, args := range []extenderv1.ExtenderArgs{{Pod: p, NodeNames: &names}, {Pod: p, NodeNames: &subset}, {Pod: p, Nodes: &nodes}, {Pod: p}} {
			label := fmt.Sprintf("%s pod %s/%s names=%v nodes=%v", what, p.Namespace, p.Name, args.NodeNames != nil, args.Nodes != nil)
			got := answerOf(t, h, "/filter", args)
			want := referenceFilter(srv, &args, now)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: filter answers\n%s\nthe handler before\n%s", label, got, want)
			}
			var fr extenderv1.ExtenderFilterResult
			if err := json.Unmarshal(got, &fr); err != nil {
				t.Fatal(err)
			}
			kept := extenderv1.ExtenderArgs{Pod: p, NodeNames: fr.NodeNames}
			if fr.NodeNames == nil {
				kept.NodeNames = &[]string{}
				for _, n := range fr.Nodes.Items {
					*kept.NodeNames = append(*kept.NodeNames, n.Name)
				}
			}
			// From filter's verdict (same pod, cluster unchanged) with its nodes in filter's order and reversed,
			// then anew (another pod object: no verdict).
			reversed := slices.Clone(*kept.NodeNames)
			slices.Reverse(reversed)
			fresh := p.DeepCopy()
			fresh.UID += "-fresh"
			for _, pa := range []extenderv1.ExtenderArgs{kept, {Pod: p, NodeNames: &reversed}, {Pod: fresh, NodeNames: args.NodeNames, Nodes: args.Nodes}} {
				if got, want := answerOf(t, h, "/prioritize", pa), referencePrioritize(srv, &pa, now); !bytes.Equal(got, want) {
					t.Fatalf("%s: prioritize answers\n%s\nthe handler before\n%s", label, got, want)
				}
			}
			calls += 4
		}
	}
	return calls
}

func answerOf(t *testing.T, h http.Handler, path string, args extenderv1.ExtenderArgs) []byte {
	t.Helper()
	body, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body.Bytes())
	}
	return rec.Body.Bytes()
}

// referenceFilter is handleFilter's answer as it was written before the summary (a full verdict, maps of
// the fitting and failed nodes), without its metrics, events and preemption notices.
func referenceFilter(s *Server, args *extenderv1.ExtenderArgs, now time.Time) []byte {
	if args.Pod == nil {
		b, _ := appendFilterResult(nil, &extenderv1.ExtenderFilterResult{Error: "the request has no pod"})
		return append(b, '\n')
	}
	names := candidates(args)
	var v *engine.Verdict
	s.state.Read(func(c *engine.Cluster) {
		v = c.Evaluate(args.Pod, engine.EvalOptions{Now: now, Nodes: nonNil(names), Unranked: true, Kube: engine.KubeOff})
	})
	locks := s.state.NodeLocks()
	res := extenderv1.ExtenderFilterResult{FailedNodes: extenderv1.FailedNodesMap{}, FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}}
	fits := make(map[string]bool, len(v.Nodes()))
	if v.NoGPURequest {
		for _, n := range names {
			fits[n] = true
		}
	} else {
		for i := range v.Nodes() {
			ns := &v.Nodes()[i]
			switch {
			case ns.Fits:
				if why := s.lockedReason(locks[ns.Node], ns.Node, args.Pod, now); why != "" {
					res.FailedNodes[ns.Node] = why
					continue
				}
				fits[ns.Node] = true
			case ns.Code == engine.NodeUnregistered:
				res.FailedAndUnresolvableNodes[ns.Node] = hamiUnregistered
			case engine.Unresolvable(ns.Code):
				res.FailedAndUnresolvableNodes[ns.Node] = ns.Reason
			default:
				res.FailedNodes[ns.Node] = ns.Reason
			}
		}
		for _, n := range names {
			if !fits[n] && res.FailedNodes[n] == "" && res.FailedAndUnresolvableNodes[n] == "" {
				res.FailedAndUnresolvableNodes[n] = hamiUnregistered
			}
		}
	}
	if !v.NoGPURequest && !s.opts.DisablePreemption {
		for node, why := range s.state.heldNodes(args.Pod, fits, now) {
			delete(fits, node)
			res.FailedNodes[node] = why
		}
	}
	if args.NodeNames != nil || args.Nodes == nil {
		kept := make([]string, 0, len(fits))
		for _, n := range names {
			if fits[n] {
				kept = append(kept, n)
			}
		}
		res.NodeNames = &kept
	} else {
		kept := &corev1.NodeList{}
		for i := range args.Nodes.Items {
			if fits[args.Nodes.Items[i].Name] {
				kept.Items = append(kept.Items, args.Nodes.Items[i])
			}
		}
		res.Nodes = kept
	}
	b, _ := appendFilterResult(nil, &res)
	return append(b, '\n')
}

// referencePrioritize is handlePrioritize's answer as it was written before the summary.
func referencePrioritize(s *Server, args *extenderv1.ExtenderArgs, now time.Time) []byte {
	names := candidates(args)
	out := make(extenderv1.HostPriorityList, 0, len(names))
	if args.Pod == nil {
		return append(appendPriorities(nil, out), '\n')
	}
	var v *engine.Verdict
	s.state.Read(func(c *engine.Cluster) {
		v = c.Evaluate(args.Pod, engine.EvalOptions{Now: now, Nodes: nonNil(names), Kube: engine.KubeOff})
	})
	score := make(map[string]int64, len(v.Nodes()))
	if !v.NoGPURequest {
		for i := range v.Nodes() {
			if ns := &v.Nodes()[i]; ns.Fits {
				score[ns.Node] = extenderScore(v.Request.NodePolicy, ns.Score)
				if v.Card != nil && v.Card.Enforced && len(v.Card.Alternatives) > 1 {
					score[ns.Node] = cardBand(ns.CardRank, score[ns.Node])
				}
			}
		}
	}
	for _, n := range names {
		out = append(out, extenderv1.HostPriority{Host: n, Score: score[n]})
	}
	return append(appendPriorities(nil, out), '\n')
}
