package engine

// SetParallelMinNodes lets the external tests force the sequential or the parallel walk; it returns the
// restore.
func SetParallelMinNodes(n int) func() {
	old := parallelMinNodes
	parallelMinNodes = n
	return func() { parallelMinNodes = old }
}

// SetUnsortedFail turns the unsorted walk of failing containers (unsorted.go) on or off; it returns the restore.
func SetUnsortedFail(on bool) func() {
	old := unsortedFail
	unsortedFail = on
	return func() { unsortedFail = old }
}
