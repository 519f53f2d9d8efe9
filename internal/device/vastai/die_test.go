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
	var entries []string
	for c := 0; c < cards; c++ {
		for k := 0; k < dies; k++ {
			i := c*dies + k
			health := true
			for _, u := range unhealthy {
				health = health && u != i
			}
			entries = append(entries, fmt.Sprintf(`{"id":"%s-d%d","index":%d,"count":1,"devmem":16384,"devcore":100,"type":"Vastai","numa":%d,"health":%v,"customInfo":{"DeviceStrategy":"die","AIC":"aic-%d"}}`,
				name, i, i, c*2/cards, health, c))
		}
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{vaReg: "[" + strings.Join(entries, ",") + "]",
		"hami.io/node-handshake-va": "Reported 2026-01-01 00:00:00"}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{vaNum: resource.MustParse(fmt.Sprint(cards * dies))},
			Allocatable: corev1.ResourceList{vaNum: resource.MustParse(fmt.Sprint(cards * dies))}}}
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

// TestVastaiDieScore: of two nodes that fit, binpack's higher score is the one whose two dies share a card
// (ScoreNode, 181-219, adds 1 there, 0.5 where the dies sit on two cards).
func TestVastaiDieScore(t *testing.T) {
	w := ft.NewWorld(t, ft.Kinds(t, vastai.Family{}), []*corev1.Node{dieNode("a", 2, 2, 1, 3), dieNode("b", 2, 2, 3)})
	v := w.Evaluate(ft.MkPod("ns", "p", ft.Ctr("c", vaNum, 2)))
	if !v.Fits || v.Placement.Node != "b" {
		t.Fatalf("placed on %+v, want b (fits %v: %s)", v.Placement, v.Fits, v.Summary)
	}
	var a, b float64
	for _, ns := range v.Nodes {
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
