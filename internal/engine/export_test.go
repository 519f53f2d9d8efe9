package engine

// SetParallelMinNodes lets the external tests force the sequential or the parallel walk; it returns the
// restore.
func SetParallelMinNodes(n int) func() {
	old := parallelMinNodes
	parallelMinNodes = n
	return func() { parallelMinNodes = old }
}
