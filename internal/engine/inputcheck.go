package engine

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hami/kubectl-hami/internal/device"
)

// maxRequestValue bounds every managed request (device.MaxRequestValue); maxGPUCount a container's GPU count.
const (
	maxRequestValue = device.MaxRequestValue
	maxGPUCount     = device.MaxCount
)

// checkedQuantity is device.CheckedQuantity.
func checkedQuantity(q resource.Quantity, limit int64) (int64, bool) {
	return device.CheckedQuantity(q, limit)
}

// memoryProblems reports requests that no GPU of the cluster could ever hold, saying that gpumem is MiB.
func (c *Cluster) memoryProblems(key string, req *PodRequest) []Problem {
	most := c.largestMem
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
