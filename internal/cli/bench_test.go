package cli

import (
	"os"
	"testing"
)

// The end-to-end read benchmarks run the commands in-process on a large snapshot file made by hack/genbig
// (see docs/benchmarks.md); without KUBECTL_HAMI_BIG_SNAPSHOT they are skipped.
func bigSnapshot(b *testing.B) string {
	path := os.Getenv("KUBECTL_HAMI_BIG_SNAPSHOT")
	if path == "" {
		b.Skip("set KUBECTL_HAMI_BIG_SNAPSHOT to a file made by `go run ./hack/genbig`")
	}
	return path
}

func BenchmarkWhyPendingBigSnapshot(b *testing.B) {
	path := bigSnapshot(b)
	for b.Loop() {
		if _, errOut, err := runB(b, "why-pending", "pending-big", "-n", "team-1", "--snapshot", path); err != nil {
			b.Fatal(err, errOut)
		}
	}
}

func BenchmarkWhatIfCount10BigSnapshot(b *testing.B) {
	path := bigSnapshot(b)
	for b.Loop() {
		if _, errOut, err := runB(b, "what-if", "--gpus", "2", "--gpumem", "8000", "--count", "10", "-n", "team-1", "--snapshot", path); err != nil {
			b.Fatal(err, errOut)
		}
	}
}
