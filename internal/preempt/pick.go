package preempt

import (
	"math"
	"sort"
)

// better is kube-scheduler's pickOneNodeForPreemption order, one rule after the other: fewest PodDisruptionBudget
// violations, the lowest highest-priority victim, the smallest sum of priorities, the fewest victims, the latest
// start among the highest-priority victims; then the node's name, where kube-scheduler takes whichever it
// listed first.
func better(a, b *Candidate) bool {
	if a.PDBViolations != b.PDBViolations {
		return a.PDBViolations < b.PDBViolations
	}
	if ha, hb := a.Victims[0].Priority, b.Victims[0].Priority; ha != hb {
		return ha < hb
	}
	if sa, sb := prioritySum(a.Victims), prioritySum(b.Victims); sa != sb {
		return sa < sb
	}
	if len(a.Victims) != len(b.Victims) {
		return len(a.Victims) < len(b.Victims)
	}
	if ea, eb := earliestStart(a.Victims), earliestStart(b.Victims); ea != eb {
		return ea > eb
	}
	return a.Node < b.Node
}

// prioritySum adds each priority shifted by MaxInt32+1, as kube-scheduler does, so that negative priorities
// still count as something.
func prioritySum(vs []Victim) int64 {
	var s int64
	for _, v := range vs {
		s += int64(v.Priority) + math.MaxInt32 + 1
	}
	return s
}

// earliestStart is kube-scheduler's GetEarliestPodStartTime: the earliest start among the victims of the
// highest priority.
func earliestStart(vs []Victim) int64 {
	top := vs[0].Priority
	e := int64(noStart)
	for _, v := range vs {
		if v.Priority > top {
			top, e = v.Priority, v.start
		} else if v.Priority == top && v.start < e {
			e = v.start
		}
	}
	return e
}

// sortVictims orders victims most important first.
func sortVictims(vs []Victim) {
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].Priority != vs[j].Priority {
			return vs[i].Priority > vs[j].Priority
		}
		if vs[i].start != vs[j].start {
			return vs[i].start < vs[j].start
		}
		return vs[i].Key() < vs[j].Key()
	})
}
