package engine

import (
	"fmt"
	"testing"
)

// TestUUIDIndexFindsEveryGPU checks the index against a plain scan on nodes below and above smallNode, with
// UUIDs that share long prefixes and lengths, a UUID listed twice and UUIDs not on the node.
func TestUUIDIndexFindsEveryGPU(t *testing.T) {
	for _, n := range []int{0, 1, 8, smallNode, smallNode + 1, 64} {
		gpus := make([]GPU, n)
		for i := range gpus {
			gpus[i].UUID = fmt.Sprintf("GPU-7f3c2a10-0000-0000-0000-%012d", i*7919%1000)
		}
		if n > 2 {
			gpus[n-1].UUID = gpus[1].UUID // listed twice: the first wins, as a scan finds it
		}
		ix := newUUIDIndex(gpus)
		scan := func(uuid string) int {
			for i := range gpus {
				if gpus[i].UUID == uuid {
					return i
				}
			}
			return -1
		}
		queries := []string{"", "GPU-missing", "GPU-7f3c2a10-0000-0000-0000-999999999999"}
		for i := range gpus {
			queries = append(queries, gpus[i].UUID)
		}
		for _, q := range queries {
			if got, want := ix.find(q), scan(q); got != want {
				t.Errorf("%d GPUs: find(%q) = %d, want %d", n, q, got, want)
			}
		}
	}
}
