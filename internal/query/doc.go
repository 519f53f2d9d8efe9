// Package query answers, once, the questions every surface (the commands, the UI, the renderers and lint) asks
// of a cluster's objects and of the engine's model: which pods wait for a GPU, what kube-scheduler's own checks
// say, what Kubernetes' ResourceQuota status reports, the hypothetical pod of what-if, when an event happened,
// a node's totals. It reads objects already fetched (no client-go), so render may import it; the engine stays
// the one that decides.
package query
