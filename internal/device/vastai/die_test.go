package vastai_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/vastai"
)

const vaNum, vaAlloc, vaReg = "vastaitech.com/va", "hami.io/Vastai-devices-allocated", "hami.io/node-va-register"

// dieNode is a node of cards of dies each in die mode (customInfo DeviceStrategy "die", AIC), the first half
// of the cards on NUMA 0, as the device plugin registers them; unhealthy dies by index.
func dieNode(name string, cards, dies int, unhealthy ...int) *corev1.Node {
	perCard := make([]int, cards)
	for c := range perCard {
		perCard[c] = dies
	}
	return cardsNode(name, perCard, unhealthy...)
}

// cardsNode is dieNode with each card's own number of dies.
func cardsNode(name string, perCard []int, unhealthy ...int) *corev1.Node {
	var entries []string
	i := 0
	for c, dies := range perCard {
		for range dies {
			health := true
			for _, u := range unhealthy {
				health = health && u != i
			}
			entries = append(entries, fmt.Sprintf(`{"id":"%s-d%d","index":%d,"count":1,"devmem":16384,"devcore":100,"type":"Vastai","numa":%d,"health":%v,"customInfo":{"DeviceStrategy":"die","AIC":"aic-%d"}}`,
				name, i, i, c*2/len(perCard), health, c))
			i++
		}
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{vaReg: "[" + strings.Join(entries, ",") + "]",
		"hami.io/node-handshake-va": "Reported 2026-01-01 00:00:00"}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{vaNum: resource.MustParse(fmt.Sprint(i))},
			Allocatable: corev1.ResourceList{vaNum: resource.MustParse(fmt.Sprint(i))}}}
}

// TestVastaiDieMode are HAMi v2.10.0's die-mode rules (pkg/device/vastai/device.go): every fitting die is
// collected (250-306); one die is the walk's first (313-314), several the best combination, cards with the
// most fitting dies first (computeBestCombination, 336-374).
func TestVastaiDieMode(t *testing.T) {
	used := func(name, node, die string) *corev1.Pod {
		return ft.Counted(ft.MkPod("ns", name, ft.Ctr("c", vaNum, 1)), node, vaAlloc, die+",Vastai,0,0:;")
	}
	ft.Run(t, ft.Kinds(t, vastai.Family{}), []ft.Case{
		{Name: "two dies of one card, not the walk's first two across cards", Node: dieNode("v1", 2, 2, 3),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 2)), Want: [][]string{{"v1-d1", "v1-d0"}},
			Annotations: map[string]string{vaAlloc: "v1-d1,Vastai,0,0:v1-d0,Vastai,0,0:;"}},
		{Name: "three dies: the card with more first", Node: dieNode("v1", 2, 4),
			Counted: []*corev1.Pod{used("a", "v1", "v1-d1"), used("b", "v1", "v1-d2")},
			Pod:     ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 3)), Want: [][]string{{"v1-d7", "v1-d6", "v1-d5"}}},
		{Name: "one die: the walk's first", Node: dieNode("v1", 2, 2),
			Pod: ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 1)), Want: [][]string{{"v1-d3"}}},
	})
}

// TestVastaiDieMutex: under the mutex policy a card is taken whole (device.go:236-287): an idle die on a card
// another of whose dies is in use conflicts (ExclusiveDeviceAllocateConflict), a die in use fails its slots
// first (count 1); card mode and pods without the policy are not concerned.
func TestVastaiDieMutex(t *testing.T) {
	used := func(name, node, die string) *corev1.Pod {
		return ft.Counted(ft.MkPod("ns", name, ft.Ctr("c", vaNum, 1)), node, vaAlloc, die+",Vastai,0,0:;")
	}
	mutex := func(p *corev1.Pod) *corev1.Pod { return ft.WithAnno(p, "hami.io/gpu-scheduler-policy", "mutex") }
	one := func() *corev1.Pod { return ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 1)) }
	ft.Run(t, ft.Kinds(t, vastai.Family{}), []ft.Case{
		{Name: "without mutex: the used card's idle die", Node: dieNode("v1", 2, 2), Counted: []*corev1.Pod{used("a", "v1", "v1-d3")},
			Pod: one(), Want: [][]string{{"v1-d2"}}},
		{Name: "mutex: the idle card's die", Node: dieNode("v1", 2, 2), Counted: []*corev1.Pod{used("a", "v1", "v1-d3")},
			Pod: mutex(one()), Want: [][]string{{"v1-d1"}}},
		{Name: "mutex: a die used on every card", Node: dieNode("v1", 2, 2), Counted: []*corev1.Pod{used("a", "v1", "v1-d3"), used("b", "v1", "v1-d1")},
			Pod: mutex(one()), Reason: "2/4 CardTimeSlicingExhausted, 2/4 ExclusiveDeviceAllocateConflict",
			Detail: "die v1-d3 of its card is in use; the mutex policy takes a card whole"},
		{Name: "mutex: an earlier container's die holds its card", Node: dieNode("v1", 2, 2),
			Pod: mutex(ft.MkPod("ns", "p", ft.Ctr("c1", vaNum, 1), ft.Ctr("c2", vaNum, 1))), Want: [][]string{{"v1-d3"}, {"v1-d1"}}},
	})
}

// TestVastaiDieScore: of two nodes that fit, binpack's higher score is the one whose two dies share a card
// (ScoreNode, 181-219, adds 1 there, 0.5 where the dies sit on two cards).
func TestVastaiDieScore(t *testing.T) {
	w := ft.NewWorld(t, ft.Kinds(t, vastai.Family{}), []*corev1.Node{dieNode("a", 2, 2, 1, 3), dieNode("b", 2, 2, 3)})
	v := w.Evaluate(ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 2)))
	if !v.Fits || v.Placement.Node != "b" {
		t.Fatalf("placed on %+v, want b (fits %v: %s)", v.Placement, v.Fits, v.Summary)
	}
	var a, b float64
	for _, ns := range v.Nodes() {
		switch ns.Node {
		case "a":
			a = ns.Score
		case "b":
			b = ns.Score
		}
	}
	if b-a != 0.5 {
		t.Errorf("scores a %v, b %v: want b's half a point above a's", a, b)
	}
}

// TestVastaiDieScorePerContainer: HAMi's ScoreNode adds each container's share of dies on its most used card
// (device.go:181-219) over the pod's device list, the init containers' first (pkg/scheduler/score.go:334-342),
// where scoring the pod's dies together would choose another node.
func TestVastaiDieScorePerContainer(t *testing.T) {
	withInit := func(p *corev1.Pod, init ...corev1.Container) *corev1.Pod {
		p.Spec.InitContainers = init
		return p
	}
	for _, tc := range []struct {
		name   string
		nodes  []*corev1.Node
		pod    *corev1.Pod
		want   string
		scores map[string]float64
	}{
		{
			// The hamioracle's `-family vastai-die -n 500 -seed 1`, seed 293 (classes/vastai-die/die-init-score):
			// the init container's 4 dies on two cards of node-0 (0.5) or one of node-1 (1), the app's one die 1.
			name:  "seed 293: an init container's dies count",
			nodes: []*corev1.Node{dieNode("node-0", 4, 2), dieNode("node-1", 4, 4)},
			pod:   withInit(ft.MkPod("ns", "p", ft.Ctr("app", vaNum, 1)), ft.Ctr("init", vaNum, 4)),
			want:  "node-1", scores: map[string]float64{"node-0": 1.5, "node-1": 2},
		},
		{
			// Together, a's 3 of 4 dies on one card (0.75) beat b's 2 of 4 (0.5); container by container a's
			// second container takes its last die and the single-die card (1 + 0.5), b's two take a card each.
			name:  "two app containers: each share apart",
			nodes: []*corev1.Node{cardsNode("a", []int{3, 1}), cardsNode("b", []int{2, 2})},
			pod:   ft.MkPod("ns", "p", ft.Ctr("c1", vaNum, 2), ft.Ctr("c2", vaNum, 2)),
			want:  "b", scores: map[string]float64{"a": 1.5, "b": 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft.PlacedWithScores(t, ft.NewWorld(t, ft.Kinds(t, vastai.Family{}), tc.nodes).Evaluate(tc.pod), tc.want, tc.scores)
		})
	}
}
