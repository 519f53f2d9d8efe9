package iluvatar_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	ft "github.com/kubectl-hami/kubectl-hami/internal/device/familytest"
	"github.com/kubectl-hami/kubectl-hami/internal/device/iluvatar"
)

// Iluvatar's rules (pkg/device/iluvatar/device.go): one type per chip, memory in 256 MiB units, and a
// container asking for several GPUs takes each one's every core (the webhook sets vCore to count x 100).
func TestIluvatarRules(t *testing.T) {
	const w = "MR-V100"
	reg := ft.Register(
		codec.DeviceInfo{ID: "ix-0", Index: 0, Count: 4, Devmem: 32768, Devcore: 100, Type: w, Health: true},
		codec.DeviceInfo{ID: "ix-1", Index: 1, Count: 4, Devmem: 32768, Devcore: 100, Type: w, Health: true})
	node := ft.Node("n1", map[string]string{"hami.io/node-" + w + "-register": reg}, nil)
	used := []*corev1.Pod{ft.Counted(ft.Pod("a", nil, map[string]string{"iluvatar.ai/" + w + "-vgpu": "1"}), "n1", "hami.io/"+w+"-devices-allocated", "ix-0,"+w+",1024,10:;")}
	ask := func(count, mem, cores string) map[string]string {
		return map[string]string{"iluvatar.ai/" + w + "-vgpu": count, "iluvatar.ai/" + w + ".vMem": mem, "iluvatar.ai/" + w + ".vCore": cores}
	}
	ft.Run(t, ft.Kinds(t, iluvatar.Family{}), []ft.Case{
		{Name: "memory in 256 MiB units", Node: node, Counted: used, Pod: ft.Pod("p", map[string]string{"hami.io/no-use-" + w + "-uuid": "ix-1"}, ask("1", "4", "50")),
			Want: [][]string{{"ix-0"}}, Annotations: map[string]string{"hami.io/" + w + "-devices-allocated": "ix-0," + w + ",1024,50:;"}},
		{Name: "several GPUs take every core", Node: node, Counted: used, Pod: ft.Pod("p", nil, ask("2", "4", "20")),
			Want: nil, Reason: "1/2 AllocatedCardsInsufficientRequest, 1/2 CardInsufficientCore"},
		{Name: "a node of one chip has none of another's", Node: node, Pod: ft.Pod("p", nil, map[string]string{"iluvatar.ai/BI-V150-vgpu": "1"}),
			Want: nil, Reason: "NodeInsufficientDevice"},
	})
}
