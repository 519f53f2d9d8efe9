// Package tui will hold the `kubectl hami top` terminal UI. It is built in the TUI issue.
package tui
