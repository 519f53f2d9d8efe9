package device

import (
	"strconv"
	"strings"
)

// LastIndices is the device indices of the last container that has devices, comma-joined in placement order,
// "" when none has: HAMi's PatchAnnotations rewrites one index list container by container for the device
// plugins that read it (Moore Threads' mthreads.com/gpu-index, Kunlunxin's BAIDU_COM_DEVICE_IDX).
func LastIndices(containers [][]Placed) string {
	for i := len(containers) - 1; i >= 0; i-- {
		if len(containers[i]) == 0 {
			continue
		}
		idx := make([]string, len(containers[i]))
		for j, d := range containers[i] {
			idx[j] = strconv.Itoa(d.Index)
		}
		return strings.Join(idx, ",")
	}
	return ""
}
