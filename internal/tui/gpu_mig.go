package tui

import (
	"fmt"
	"strings"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// The GPU page of a MIG GPU: which profiles and slices are taken and by which pod, from the pods'
// hami.io/vgpu-mig-allocations (what HAMi reserved), beside the instances the node agent lists on the GPU
// (what exists, and whether processes run on it); then what each profile could still get.

// migInstance is one taken placement on the GPU: reserved by a pod, seen by the agent, or both.
type migInstance struct {
	profile        string
	at             codec.MigPlacement
	pod, container string
	live           *MigMetrics
}

// migInstances are the GPU's reservations (by pod, in the node's pod order) and, matched by placement, the
// agent's instances; instances the agent lists that no pod reserved come last.
func (c *common) migInstances(n *NodeView, g *engine.GPU) []migInstance {
	var out []migInstance
	for _, p := range n.Pods {
		for _, ma := range p.Mig() {
			if ma.GPUUUID != g.UUID {
				continue
			}
			ct := ""
			if ma.ContainerIndex >= 0 && ma.ContainerIndex < len(p.Containers) {
				ct = p.Containers[ma.ContainerIndex].Name
			}
			out = append(out, migInstance{profile: ma.Profile, at: ma.Placement, pod: p.Namespace + "/" + p.Name, container: ct})
		}
	}
	if c.metrics == nil {
		return out
	}
	for _, mi := range c.metrics.Migs[g.UUID] {
		mi := mi
		matched := false
		for i := range out {
			if out[i].live == nil && out[i].at.Start == mi.Start && out[i].at.Size == mi.Size {
				out[i].live, matched = &mi, true
				break
			}
		}
		if !matched {
			out = append(out, migInstance{profile: mi.Profile, at: codec.MigPlacement{Start: mi.Start, Size: mi.Size}, pod: mi.Pod, live: &mi})
		}
	}
	return out
}

// migSlices is the number of memory slices the GPU's profiles place on (8 on an A100 or H100).
func migSlices(g *engine.GPU) int32 {
	var n int32
	for _, p := range g.MigProfiles {
		for _, pl := range p.Placements {
			n = max(n, pl.Start+pl.Size)
		}
	}
	return n
}

func overlaps(a, b codec.MigPlacement) bool {
	return a.Start < b.Start+b.Size && b.Start < a.Start+a.Size
}

// migLines is the MIG section of a GPU page.
func (c *common) migLines(n *NodeView, g *engine.GPU) []string {
	s := c.styles
	insts := c.migInstances(n, g)
	slices := migSlices(g)
	taken := make([]codec.MigPlacement, 0, len(insts)+len(g.MigUsed))
	taken = append(taken, g.MigUsed...)
	owner := make([]string, slices)
	for i := range owner {
		owner[i] = "·"
	}
	used := int32(0)
	for i, in := range insts {
		taken = append(taken, in.at)
		for k := in.at.Start; k < in.at.Start+in.at.Size && k < slices; k++ {
			if owner[k] == "·" {
				used++
			}
			owner[k] = string(rune('A' + i%26))
		}
	}
	src := "reserved by the pods' hami.io/vgpu-mig-allocations"
	if c.metrics != nil && c.metrics.Migs != nil {
		src += "; LIVE: the node agent's instances"
	}
	lines := []string{"", s.bold.Render(fmt.Sprintf("MIG: %d of %d slices taken", used, slices)) + s.dim.Render(" · "+src)}
	var idx, own strings.Builder
	for k := int32(0); k < slices; k++ {
		fmt.Fprintf(&idx, " %d", k)
		fmt.Fprintf(&own, " %s", owner[k])
	}
	lines = append(lines, "  slices"+idx.String(), "        "+own.String())
	if len(insts) == 0 {
		lines = append(lines, s.dim.Render("  no instance: every slice is free"))
	} else {
		// The pod's name whole: the other columns are as narrow as their words ("GI 12 · busy" is LIVE's).
		cols := []cell{{2, false}, {8, false}, {6, false}, {min(max(c.width-2-(2+8+6+10+5)-12, 16), 48), false}, {10, false}, {-1, false}}
		lines = append(lines, s.colHeader.Render("  "+line(cols, "ID", "PROFILE", "SLICES", "POD", "CONTAINER", "LIVE")))
		for i, in := range insts {
			pod := in.pod
			if pod == "" {
				pod = s.warn.Render("no pod names it")
			}
			live := s.na.Render("n/a")
			if in.live != nil {
				state := "idle"
				if in.live.Busy {
					state = "busy"
				}
				live = s.live.Render(fmt.Sprintf("GI %d · %s", in.live.GPUInst, state))
			} else if c.metrics != nil && c.metrics.Migs != nil {
				live = s.warn.Render("not created")
			}
			lines = append(lines, "  "+line(cols, string(rune('A'+i%26)), in.profile, sliceRange(in.at), pod, in.container, live))
		}
	}
	// What each profile could still get: its placements that overlap nothing taken.
	var free []string
	for _, p := range g.MigProfiles {
		k := 0
		for _, pl := range p.Placements {
			ok := true
			for _, t := range taken {
				if overlaps(pl, t) {
					ok = false
					break
				}
			}
			if ok {
				k++
			}
		}
		free = append(free, fmt.Sprintf("%s ×%d", p.Name, k))
	}
	if len(free) > 0 {
		lines = append(lines, splitLines(wrapProse("  free placements: "+strings.Join(free, " · "), c.width))...)
	}
	return lines
}

// sliceRange is "0-1", or "3" for one slice.
func sliceRange(p codec.MigPlacement) string {
	if p.Size <= 1 {
		return fmt.Sprint(p.Start)
	}
	return fmt.Sprintf("%d-%d", p.Start, p.Start+p.Size-1)
}
