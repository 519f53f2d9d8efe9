package ascend

import (
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// networkWeight is Ascend910NetworkWeight (pkg/device/ascend/device.go:44 at v2.10.0).
const networkWeight = 10

// scoreNode is HAMi v2.10.0's Ascend ScoreNode (pkg/device/ascend/device.go:388-424) for the chip word: on an
// Ascend910* chip, for each container the share of its NPUs in their largest NetworkID group, summed over the
// pod's containers (init containers' included) and times 10, in float32 as HAMi computes it; 0 when any NPU the
// pod takes registers no NetworkID. An NPU of another chip the request sees (Kind.Sees) is scored by its own
// NetworkID, as HAMi reads it from the device it took.
func scoreNode(word string) func(node []device.ScoredDevice, placed [][]int) float64 {
	if !strings.HasPrefix(word, "Ascend910") {
		return nil
	}
	return func(node []device.ScoredDevice, placed [][]int) float64 {
		return float64(device.GroupShareSum(node, placed) * networkWeight)
	}
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
