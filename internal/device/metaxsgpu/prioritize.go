package metaxsgpu

import (
	"sort"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// AppClassAnnotation is the pod's application class (online, offline): a pod that names one is placed by
// prioritizeOnlineDevices or by HAMi's order, never by the MetaLink rule (sdevice.go:441-450).
const AppClassAnnotation = "metax-tech.com/sgpu-app-class"

// Prioritize is HAMi v2.10.0's choice among more sGPUs than asked for (Fit, pkg/device/metax/sdevice.go:
// 439-451): a container asking for every core (exclusive) of a pod without an app class takes
// prioritizeExclusiveDevices' (579-645) devices; any other takes the first of the walk. The rule groups the
// candidates by MetaLink zone (linkZone; 0 or none: no link) and takes, in the walk's order: the smallest
// zone holding them all; else the zones' devices one after another, smallest zone first; else the unlinked
// devices after them. HAMi ranges over a map of zones and sorts them by size, so zones of one size come in the
// map's order there, which for a few zones is mostly the order they were added (the walk's); here always the
// walk's, one of HAMi's answers and its likeliest.
func Prioritize(walk []device.Candidate, count int, cores int64, pod map[string]string) []int {
	if _, ok := pod[AppClassAnnotation]; ok || cores != 100 || len(walk) <= count {
		return nil
	}
	byZone := map[int][]int{}
	var zones, other []int
	for _, c := range walk {
		if c.Group == nil || *c.Group <= 0 {
			other = append(other, c.Index)
			continue
		}
		z := *c.Group
		if _, seen := byZone[z]; !seen {
			zones = append(zones, z)
		}
		byZone[z] = append(byZone[z], c.Index)
	}
	sort.SliceStable(zones, func(i, j int) bool { return len(byZone[zones[i]]) < len(byZone[zones[j]]) })
	for _, z := range zones {
		if len(byZone[z]) >= count {
			return byZone[z][:count]
		}
	}
	var out []int
	for _, z := range zones {
		for _, i := range byZone[z] {
			if out = append(out, i); len(out) == count {
				return out
			}
		}
	}
	for _, i := range other {
		if out = append(out, i); len(out) == count {
			return out
		}
	}
	return nil
}
