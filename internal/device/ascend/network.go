package ascend

import (
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// networkWeight is Ascend910NetworkWeight (pkg/device/ascend/device.go:44 at v2.10.0).
const networkWeight = 10

// scoreNode is HAMi v2.10.0's Ascend ScoreNode (pkg/device/ascend/device.go:388-424) for the chip word: on an
// Ascend910* chip, the share of the pod's NPUs in its largest NetworkID group, times 10; 0 when an NPU the pod
// takes registers no NetworkID. HAMi sums the share per container; kubectl-hami takes the pod's NPUs as one
// group (the same for a pod of one NPU container).
func scoreNode(word string) func(node []device.ScoredDevice, placed []int) float64 {
	if !strings.HasPrefix(word, "Ascend910") {
		return nil
	}
	sees := device.TypeContains(word)
	return func(node []device.ScoredDevice, placed []int) float64 {
		if len(placed) == 0 {
			return 0
		}
		byNetwork := map[int]int{}
		for _, idx := range placed {
			d := deviceOf(node, sees, idx)
			if d == nil || d.NetworkID == nil {
				return 0
			}
			byNetwork[*d.NetworkID]++
		}
		most := 0
		for _, n := range byNetwork {
			most = max(most, n)
		}
		// HAMi computes in float32.
		return float64(float32(most) / float32(len(placed)) * networkWeight)
	}
}

// deviceOf is the node's device with Index idx among those a request of the chip sees (its own, and those
// whose type contains its word: Kind.Sees), nil when none.
func deviceOf(node []device.ScoredDevice, sees func(string) bool, idx int) *device.ScoredDevice {
	for i := range node {
		if node[i].Index == idx && sees(node[i].Type) {
			return &node[i]
		}
	}
	return nil
}

// networkTopology is HAMi v2.10.0's needTopology for the Ascend910* chip word (pkg/device/ascend/device.go:
// 476-480, 595-610): when every NPU the request sees registers a NetworkID (hasNetworkID, 619-629), the Fit
// collects every NPU that passes and then takes them all when they are as many as asked, the first for one NPU,
// else by NetworkID group, the largest first (computeBestCombination, 631-676; device.GroupsLargestFirst).
// computeBestCombination knows only the NPUs the chip's own plugin registered (nodeInfo.Devices[CommonWord]):
// another chip's NPU the request sees (Kind.Sees) is dropped, so an Ascend910B4 request on Ascend910B4-1 NPUs
// gets none of them, and HAMi's Fit still succeeds with what is left (none).
func networkTopology(word string) func(devs []device.ScoredDevice) func(cands []device.ScoredDevice, count int) []int {
	return func(devs []device.ScoredDevice) func(cands []device.ScoredDevice, count int) []int {
		for i := range devs {
			if devs[i].NetworkID == nil {
				return nil
			}
		}
		return func(cands []device.ScoredDevice, count int) []int { return byNetwork(word, cands, count) }
	}
}

func byNetwork(word string, cands []device.ScoredDevice, count int) []int {
	if len(cands) <= count || count == 1 {
		out := make([]int, 0, count)
		for i := 0; i < len(cands) && i < count; i++ {
			out = append(out, i)
		}
		return out
	}
	var keys, pos []int
	for i := range cands {
		if cands[i].Vendor == word {
			keys, pos = append(keys, *cands[i].NetworkID), append(pos, i)
		}
	}
	out := device.GroupsLargestFirst(keys, count)
	for i := range out {
		out[i] = pos[out[i]]
	}
	return out
}
