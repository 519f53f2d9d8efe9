package tui

import "strings"

// utilHistory is each GPU's recent utilisation readings by UUID, oldest first (nvitop's history): the GPU page
// draws them as a sparkline. A reading without a number for a GPU (no agent, MIG) adds nothing.
type utilHistory map[string][]int

// historyLen is how many readings a GPU keeps: two minutes at the agents' default interval.
const historyLen = 24

// add appends one reading of every GPU it has a utilisation for.
func (h utilHistory) add(mm *MetricsMsg) {
	if mm == nil {
		return
	}
	for uuid, g := range mm.GPUs {
		if g.Utilization < 0 {
			continue
		}
		r := append(h[uuid], g.Utilization)
		if len(r) > historyLen {
			r = r[len(r)-historyLen:]
		}
		h[uuid] = r
	}
}

// sparkBlocks are the eight heights of a sparkline cell, lowest first.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkline draws percentages 0..100 one cell each.
func sparkline(vals []int) string {
	var b strings.Builder
	for _, v := range vals {
		i := min(max(v, 0), 100) * (len(sparkBlocks) - 1) / 100
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}
