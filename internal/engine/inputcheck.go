package engine

import (
	"fmt"
	"math/big"

	"k8s.io/apimachinery/pkg/api/resource"
)

// maxRequestValue bounds every managed request (a GPU count, MiB, percent): 2^40 MiB is a million times the
// largest GPU, and far enough below int64's limit that sums over containers and GPUs never wrap.
const maxRequestValue int64 = 1 << 40

// maxGPUCount bounds a container's GPU count: no node has more.
const maxGPUCount = 1 << 16

// checkedQuantity reads a quantity as an integer (fractions rounded up, as Kubernetes does for counts) and
// clamps it to [-limit, limit]; clamped reports a value that did not fit, so it is never wrapped around.
func checkedQuantity(q resource.Quantity, limit int64) (v int64, clamped bool) {
	if v, ok := q.AsInt64(); ok {
		if v > limit {
			return limit, true
		}
		if v < -limit {
			return -limit, true
		}
		return v, false
	}
	dec := q.AsDec()
	switch {
	case dec.Sign() > 0 && q.CmpInt64(limit) > 0:
		return limit, true
	case dec.Sign() < 0 && q.CmpInt64(-limit) < 0:
		return -limit, true
	}
	return q.Value(), false
}

// unitMiB says what a memory quantity written with a unit suffix (16Gi, 16G, 500M) was probably meant to be,
// in MiB: HAMi reads nvidia.com/gpumem as a plain number of MiB, so "16Gi" asks for 17179869184 MiB.
func unitMiB(q resource.Quantity) (int64, bool) {
	s := q.String()
	if s == "" || s[len(s)-1] >= '0' && s[len(s)-1] <= '9' {
		return 0, false
	}
	if q.Format == resource.DecimalSI {
		// 16000 is printed 16k: only values at or above a gigabyte are plainly bytes, not MiB.
		if q.CmpInt64(1<<30) < 0 {
			return 0, false
		}
	}
	b := q.AsDec().UnscaledBig()
	b = new(big.Int).Set(b)
	scale := q.AsDec().Scale()
	if scale > 0 {
		b.Quo(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	} else if scale < 0 {
		b.Mul(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
	}
	b.Quo(b, big.NewInt(1<<20))
	if !b.IsInt64() || b.Int64() <= 0 {
		return 0, false
	}
	return b.Int64(), true
}

// memoryProblems reports requests that no GPU of the cluster could ever hold, saying that gpumem is MiB.
func (c *Cluster) memoryProblems(key string, req *PodRequest) []Problem {
	var most int64
	for _, n := range c.nodeList {
		for i := range n.GPUs {
			most = max(most, n.GPUs[i].TotalMem)
		}
	}
	if most == 0 {
		return nil
	}
	var out []Problem
	for _, cr := range req.Containers {
		if cr.MemoryMiB > most {
			kind := "containers"
			if cr.Init {
				kind = "initContainers"
			}
			out = append(out, Problem{Kind: "Pod", Object: key,
				Field: fmt.Sprintf("spec.%s[%s].resources[%s]", kind, cr.Name, c.cfg.ResourceMemoryName),
				Message: fmt.Sprintf("%d MiB is more than any GPU of the cluster has (the largest has %d MiB); %s is in MiB",
					cr.MemoryMiB, most, c.cfg.ResourceMemoryName)})
		}
	}
	return out
}
