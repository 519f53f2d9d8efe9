// Package tui is the terminal UI of `kubectl hami top`: per-GPU allocation bars for every node, a node's
// GPUs and the pods on each, namespace GPU quotas, pending GPU pods with the engine's explanation, a
// what-if form and Volcano's queue card quotas, all one keypress apart (k9s keys: / filter, : jump, tab and
// the number keys, enter, esc, ?, q).
//
// Views as components. Each view is one type in its own file implementing the view interface (views.go):
// nodes.go, node.go, quotas.go, pending.go, whatif_view.go and queues.go are the tabs, verdict.go (why
// pending) and gpu.go the pages their enter opens. The registry in views.go lists them in display order; the
// tabs, number keys, `:` words and completions and the help screen are derived from it. The Model only wires
// the program, the header and footer, the history, the overlays, the `:` prompt and the window size, and
// dispatches to the focused view. Adding a view is its file plus one line in the registry.
//
// Data flow. A world (world.go: the object mirror, one handler per kind) holds the engine model and the
// objects it was built from (pods in podstore.go: a file's compact records, built only where a screen reads
// one); data.go builds the immutable Data the views read, queries.go answers verdicts,
// explanations and what-if through the engine and internal/query. The world is fed once by
// a snapshot (--demo, --snapshot) or, for a live cluster, by informers (live.go) whose events go into a
// coalescing queue and a one-slot channel. The model waits on that channel in a tea.Cmd; each wake-up applies
// the queued changes to the engine model incrementally and hands the UI a new immutable Data (a full rebuild
// of a 50,000-pod engine model takes half a second; applying one pod takes microseconds). Verdicts of pending
// pods are computed after the first frame and after each update in a second Cmd, so neither the start nor a
// burst of events waits for them (the Nodes view shows none).
//
// The UI never writes to the cluster. Live GPU usage (memory used, utilisation) comes from MetricsMsg: a live UI
// reads the node agents' GET /usage through the API server's pod proxy (internal/usage) in a tea.Cmd every few
// seconds (metrics.go); without agents, and for --demo and --snapshot, those columns show "n/a".
package tui
