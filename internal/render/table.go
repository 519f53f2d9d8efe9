// Package render turns engine answers into text for people: the why-pending explanation and the tables of
// `top`. The CLI and the TUI both use it, so a verdict reads the same everywhere.
package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table writes kubectl-style aligned columns.
type Table struct {
	tw *tabwriter.Writer
}

// NewTable starts a table with the given headers (none on a writer from NoHeaders).
func NewTable(w io.Writer, headers ...string) *Table {
	if h, ok := w.(noHeaders); ok {
		return &Table{tw: tabwriter.NewWriter(h.Writer, 0, 8, 3, ' ', 0)}
	}
	t := &Table{tw: tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)}
	t.Row(headers...)
	return t
}

// noHeaders marks a writer whose tables have no header row.
type noHeaders struct{ io.Writer }

// NoHeaders wraps w so that the tables written to it leave out their header row (kubectl's --no-headers).
func NoHeaders(w io.Writer) io.Writer { return noHeaders{w} }

// Row adds one row.
func (t *Table) Row(cells ...string) { fmt.Fprintln(t.tw, strings.Join(cells, "\t")) }

// Flush writes the table out.
func (t *Table) Flush() error { return t.tw.Flush() }

// Ratio formats "used/total unit" with a percentage, e.g. "40960/81920 MiB (50%)".
func Ratio(used, total int64, unit string) string {
	pct := int64(0)
	if total > 0 {
		pct = used * 100 / total
	}
	if unit != "" {
		unit = " " + unit
	}
	return fmt.Sprintf("%d/%d%s (%d%%)", used, total, unit, pct)
}
