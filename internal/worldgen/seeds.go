package worldgen

import (
	"os"
	"strconv"
)

// Seeds is the range of worlds a property test runs: WORLDS worlds (else def) from WORLD_SEED (else 1), so that
// `make soak-worlds WORLDS=N WORLD_SEED=S` runs more, and a failure's seed reruns alone with WORLDS=1.
func Seeds(def int) (first uint64, n int) {
	n, first = def, 1
	if v, err := strconv.Atoi(os.Getenv("WORLDS")); err == nil && v > 0 {
		n = v
	}
	if v, err := strconv.ParseUint(os.Getenv("WORLD_SEED"), 10, 64); err == nil {
		first = v
	}
	return first, n
}
