package ascend_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/device/ascend"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
)

// networkNPUs is an Ascend register annotation of NPUs with customInfo.NetworkID, one slot each; a network of
// -1 registers none, health false when the NPU's index is in sick.
func networkNPUs(word string, networks []int, sick ...int) string {
	var entries []string
	for i, nw := range networks {
		health := true
		for _, s := range sick {
			health = health && s != i
		}
		custom := ""
		if nw >= 0 {
			custom = fmt.Sprintf(`,"customInfo":{"NetworkID":%d}`, nw)
		}
		entries = append(entries, fmt.Sprintf(`{"id":"npu-%d","index":%d,"count":1,"devmem":32768,"devcore":30,"type":%q,"health":%v%s}`, i, i, word, health, custom))
	}
	return "[" + strings.Join(entries, ",") + "]"
}

// HAMi v2.10.0's Ascend Fit on a node whose every NPU registers a NetworkID (pkg/device/ascend/device.go:476-480,
// 593-611, computeBestCombination 631-676): the walk collects every NPU that passes, then takes several by
// NetworkID group, the largest first. The hamioracle's `-family ascend -n 200 -seed 1`, seed 63: NPUs 0-3 on
// network 0 (0 held, 1 held), 4-6 on network 1 (4 unhealthy); one NPU then two.
func TestAscendNetworkIDChoice(t *testing.T) {
	const w = "Ascend910A"
	seed63 := ft.Node("n1", map[string]string{"hami.io/node-register-" + w: networkNPUs(w, []int{0, 0, 0, 0, 1, 1, 1}, 4)}, nil)
	held := func(name, npu string) *corev1.Pod {
		return ft.Counted(ft.Pod(name, nil, map[string]string{"huawei.com/" + w: "1"}), "n1", "hami.io/"+w+"-devices-allocated", npu+","+w+",32768,0:;")
	}
	ask := func(n string) map[string]string { return map[string]string{"huawei.com/" + w: n} }
	noNetwork := ft.Node("n1", map[string]string{"hami.io/node-register-" + w: networkNPUs(w, []int{0, 0, 0, 0, 1, 1, -1}, 4)}, nil)
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "seed 63: the second container takes network 0's two free NPUs", Node: seed63, Counted: []*corev1.Pod{held("h0", "npu-0"), held("h1", "npu-1")},
			Pod: ft.Pod("p", nil, ask("1"), ask("2")), Want: [][]string{{"npu-6"}, {"npu-3", "npu-2"}}},
		{Name: "three: two networks of two free NPUs, the one found first, then the other", Node: seed63, Counted: []*corev1.Pod{held("h0", "npu-0"), held("h1", "npu-1")},
			Pod: ft.Pod("p", nil, ask("3")), Want: [][]string{{"npu-6", "npu-5", "npu-3"}}},
		{Name: "one: the first NPU found", Node: seed63, Pod: ft.Pod("p", nil, ask("1")), Want: [][]string{{"npu-6"}}},
		{Name: "two: network 0 holds four", Node: seed63, Pod: ft.Pod("p", nil, ask("2")), Want: [][]string{{"npu-3", "npu-2"}}},
		{Name: "an NPU without NetworkID: the first NPUs found", Node: noNetwork, Pod: ft.Pod("p", nil, ask("2")), Want: [][]string{{"npu-6", "npu-5"}}},
		{Name: "too few: the walk's own reason", Node: seed63, Counted: []*corev1.Pod{held("h0", "npu-0"), held("h1", "npu-1")},
			Pod: ft.Pod("p", nil, ask("5")), Reason: "1/7 CardNotHealth, 2/7 CardTimeSlicingExhausted, 4/7 AllocatedCardsInsufficientRequest"},
	})
}

// Where the NPUs a request sees were registered by another chip (Kind.Sees: an Ascend910B4 pod on Ascend910B4-1
// NPUs), HAMi's computeBestCombination knows none of them (it reads nodeInfo.Devices[CommonWord],
// pkg/device/ascend/device.go:632-635) and returns none, which its Fit takes as a fit (604-608): the container is
// placed with no NPU. As many as found, or one, are taken before that choice. The hamioracle's `-family ascend
// -n 200 -seed 1`, seed 173.
func TestAscendNetworkIDChoiceOnAnotherChip(t *testing.T) {
	const b4, b41 = "Ascend910B4", "Ascend910B4-1"
	node := ft.Node("n1", map[string]string{"hami.io/node-register-" + b41: networkNPUs(b41, []int{0, 1, 1})}, nil)
	ask := func(n string) map[string]string { return map[string]string{"huawei.com/" + b4: n} }
	ft.Run(t, ft.Kinds(t, ascend.Family{}), []ft.Case{
		{Name: "two of three: none (seed 173)", Node: node, Pod: ft.Pod("p", nil, ask("2")), Want: [][]string{nil}},
		{Name: "one: the first found", Node: node, Pod: ft.Pod("p", nil, ask("1")), Want: [][]string{{"npu-2"}}},
		{Name: "three of three: all", Node: node, Pod: ft.Pod("p", nil, ask("3")), Want: [][]string{{"npu-2", "npu-1", "npu-0"}}},
	})
}

// HAMi v2.10.0's Ascend ScoreNode (pkg/device/ascend/device.go:388-424) adds 10 x each container's share of
// its NPUs in their largest NetworkID group over the pod's device list, the init containers' first
// (pkg/scheduler/score.go:334-342), where scoring the pod's NPUs together would choose another node.
func TestAscendNetworkScorePerContainer(t *testing.T) {
	const w = "Ascend910A"
	node := func(name string, networks ...int) *corev1.Node {
		return ft.Node(name, map[string]string{"hami.io/node-register-" + w: networkNPUs(w, networks)}, nil)
	}
	ask := func(name string, n int) corev1.Container { return ft.Ctr(name, "huawei.com/"+w, n) }
	for _, tc := range []struct {
		name   string
		nodes  []*corev1.Node
		pod    *corev1.Pod
		want   string
		scores map[string]float64
	}{
		{
			// Together, p's 3 of 4 NPUs on network 0 (7.5) beat q's 2 of 4 (5); container by container p's
			// second container takes network 0's last NPU and network 1's (10 + 5), q's two a network each.
			name:  "two app containers: each share apart",
			nodes: []*corev1.Node{node("p", 0, 0, 0, 1), node("q", 0, 0, 1, 1)},
			pod:   ft.MkPod("ns", "pod", ask("c1", 2), ask("c2", 2)),
			want:  "q", scores: map[string]float64{"p": 15, "q": 20},
		},
		{
			// The init container's 3 NPUs: one network on b (10), two on a (2/3 x 10); the app's one NPU 10
			// on both, which alone ties them (a by name).
			name:  "an init container's NPUs count",
			nodes: []*corev1.Node{node("a", 0, 0, 1, 1), node("b", 0, 0, 0, 1)},
			pod: func() *corev1.Pod {
				p := ft.MkPod("ns", "pod", ask("app", 1))
				p.Spec.InitContainers = []corev1.Container{ask("init", 3)}
				return p
			}(),
			want: "b", scores: map[string]float64{"a": float64(float32(2)/float32(3)*10 + 10), "b": 20},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft.PlacedWithScores(t, ft.NewWorld(t, ft.Kinds(t, ascend.Family{}), tc.nodes).Evaluate(tc.pod), tc.want, tc.scores)
		})
	}
}
