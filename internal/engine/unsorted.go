package engine

// A container that cannot fit is judged without HAMi's device sort. The sort decides which devices a container
// takes and, through the order it leaves, which the next container sees; a container that fails takes none and
// its node fails with it, so nothing after it reads that order. Its per-device results are the same in any order
// as long as no gate depends on what the walk took before the device: NUMA binding restarts its set by walk
// order, MIG's second look charges the instance it took, and the quota gate adds the memory taken so far. In
// every other case the unsorted walk below gives exactly the statuses of the sorted one.

// certainlyShort reports whether fewer than r.Count of the devices the container is judged on pass two gates
// every device must pass whatever the rest (health and memory), so that the container cannot fit. With revisit
// (MIG's second look) a MIG GPU among them makes the answer no: that walk depends on its order.
func (f *fitter) certainlyShort(n *Node, r *ContainerRequest, judged []bool, revisit bool) bool {
	pass := 0
	for gi := range n.GPUs {
		g := &n.GPUs[gi]
		if judged == nil && int(g.Kind) != r.Kind || judged != nil && !judged[gi] {
			continue
		}
		if revisit && g.Mode == ModeMIG {
			return false
		}
		if !g.Healthy {
			continue
		}
		if g.TotalMem-(g.UsedMem+f.extra[gi].mem) >= r.MemoryOn(g.TotalMem) {
			if pass++; pass >= r.Count {
				return false
			}
		}
	}
	return true
}

// unsortedFailOK reports whether the container's per-device results do not depend on the walk's order (see
// above; certainlyShort looks for MIG GPUs), so that a container certainlyShort may skip the sort.
func (f *fitter) unsortedFailOK(r *ContainerRequest, numaBind bool) bool {
	return !numaBind && !f.detail && unsortedFail &&
		!(f.c.rows[r.Kind].quota && f.limitedByQuota(r.Kind))
}

// failUnsorted is fitContainer's walk for a container that cannot fit: every device judged once, in position
// order, and the ones that passed marked short of the count, as the sorted walk leaves them.
func (f *fitter) failUnsorted(n *Node, r *ContainerRequest, podMem, podCores int64, statuses []GPUStatus, judged []bool) {
	sel := f.sel[:0]
	var selMem, selCores int64
	for gi := range n.GPUs {
		g := &n.GPUs[gi]
		st := &statuses[gi]
		if judged == nil && int(g.Kind) != r.Kind || judged != nil && !judged[gi] {
			st.Selected, st.other = false, true
			st.Result = Check{Gate: "device", Detail: f.c.rows[r.Kind].otherDetail[g.Kind]}
			continue
		}
		st.Selected, st.again, st.instances = false, "", 0
		f.checkInto(n, gi, r, podMem+selMem, podCores+selCores, nil, &st.Result)
		if st.Result.Failed() {
			continue
		}
		sel = append(sel, gi)
		st.instances++
		selMem += r.MemoryOn(g.TotalMem)
		selCores += r.CoresOn(g.TotalCores)
	}
	f.sel = sel
	for _, s := range sel {
		statuses[s].Result = Check{Gate: "set", Code: AllocatedCardsInsufficientRequest, Need: int64(r.Count), Have: int64(len(sel)), Unit: f.c.units[r.Kind]}
	}
}

// unsortedFail switches the unsorted walk of failing containers; tests turn it off to compare both walks.
var unsortedFail = true
