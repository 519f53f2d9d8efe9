// Package archtest holds the tests that keep the package layering true: docs/architecture.md's package table is
// generated from `go list` (go test ./internal/archtest -update rewrites it), and the rules that keep the pure
// packages pure are checked on the real dependency graph.
package archtest
