package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// cutYAML cuts a YAML stream line by line: documents at "---" lines, and a document's top-level `items:`
// block sequence (kubectl get -o yaml, kubectl hami snapshot) into its items, each re-indented to a document
// of its own, so that a List is decoded one item at a time. Any other document goes whole.
func cutYAML(br *bufio.Reader, name string, p *pipeline) error {
	y := &yamlCutter{p: p, name: name, docLine: 1}
	var buf []byte
	for n := 1; ; n++ {
		line, err := readLine(br, &buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("snapshot %s: %w", name, err)
		}
		if len(line) > 0 {
			if lerr := y.line(line, n); lerr != nil {
				return lerr
			}
		}
		if err != nil {
			return y.endDocument()
		}
	}
}

// readLine returns the next line with its newline; the slice is valid until the next call.
func readLine(br *bufio.Reader, buf *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	*buf = append((*buf)[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		*buf = append(*buf, line...)
	}
	return *buf, err
}

type yamlCutter struct {
	p    *pipeline
	name string
	// The document being read: its text outside an items sequence, where it starts, and whether its
	// items were cut (then the rest of it, a List's kind and metadata, is not needed).
	doc      []byte
	docLine  int
	cutItems bool
	// In a top-level items sequence: the column of its dashes (-1 before the first), and of the open
	// item's content (-1 while it is still unknown: a dash alone on its line).
	inItems    bool
	col        int
	indent     int
	open       bool
	itemStart  int
	itemLine   int
	itemsCount int
}

func (y *yamlCutter) line(l []byte, n int) error {
	text := bytes.TrimRight(l, " \t\r\n")
	if bytes.Equal(text, []byte("---")) || bytes.HasPrefix(text, []byte("--- ")) {
		if err := y.endDocument(); err != nil {
			return err
		}
		y.docLine = n + 1
		return nil
	}
	if y.inItems {
		taken, err := y.place(l, text, n)
		if taken || err != nil {
			return err
		}
	}
	y.doc = append(y.doc, l...)
	if isItemsKey(text) {
		y.inItems, y.col = true, -1
	}
	return nil
}

// isItemsKey: a top-level `items:` whose value is a block on the following lines.
func isItemsKey(text []byte) bool {
	rest, ok := bytes.CutPrefix(text, []byte("items:"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " \t")
	return len(rest) == 0 || rest[0] == '#'
}

// isDash: a block sequence entry ("-" then a space or the line's end).
func isDash(rest []byte) bool {
	return len(rest) > 0 && rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ' || rest[1] == '\n' || rest[1] == '\r')
}

// place places one line met inside the items sequence; false hands it back to the document (the
// sequence ended at a top-level key).
func (y *yamlCutter) place(l, text []byte, n int) (bool, error) {
	k := 0
	for k < len(l) && l[k] == ' ' {
		k++
	}
	rest := l[k:]
	if len(bytes.TrimSpace(rest)) == 0 || (rest[0] == '#' && (y.col < 0 || k <= y.col)) {
		// Blank lines and comments outside any item's content keep their place, for line numbers.
		if y.open {
			y.p.cur.buf = append(y.p.cur.buf, '\n')
		}
		return true, nil
	}
	if y.col < 0 {
		if !isDash(rest) {
			y.inItems = false // `items:` with no sequence under it
			return false, nil
		}
		y.col = k
	}
	switch {
	case k == y.col && isDash(rest):
		if err := y.closeItem(); err != nil {
			return true, err
		}
		y.open, y.itemLine, y.itemStart = true, n, y.p.begin()
		content := rest[1:]
		j := 0
		for j < len(content) && content[j] == ' ' {
			j++
		}
		if t := bytes.TrimSpace(content[j:]); len(t) == 0 || t[0] == '#' {
			y.indent = -1
			y.p.cur.buf = append(y.p.cur.buf, '\n')
		} else {
			y.indent = k + 1 + j
			y.p.cur.buf = append(y.p.cur.buf, content[j:]...)
		}
		return true, nil
	case k == 0:
		// A top-level key: the sequence has ended.
		if err := y.closeItem(); err != nil {
			return true, err
		}
		y.inItems = false
		return false, nil
	case k <= y.col || !y.open:
		return true, fmt.Errorf("%s:%d: yaml: this line is indented less than the List item it is in: %.40q", y.name, n, text)
	}
	if y.indent < 0 {
		y.indent = k
	}
	y.p.cur.buf = append(y.p.cur.buf, l[min(k, y.indent):]...)
	return true, nil
}

func (y *yamlCutter) closeItem() error {
	if !y.open {
		return nil
	}
	y.open, y.cutItems = false, true
	if len(y.p.cur.buf) > 0 && y.p.cur.buf[len(y.p.cur.buf)-1] != '\n' {
		y.p.cur.buf = append(y.p.cur.buf, '\n')
	}
	i := y.itemsCount
	y.itemsCount++
	return y.p.add(y.itemStart, y.itemLine, i, true)
}

// endDocument sends the document's last item, or the whole document when it had no items cut.
func (y *yamlCutter) endDocument() error {
	if err := y.closeItem(); err != nil {
		return err
	}
	var err error
	if !y.cutItems && len(y.doc) > 0 {
		start := y.p.begin()
		y.p.cur.buf = append(y.p.cur.buf, y.doc...)
		err = y.p.add(start, y.docLine, -1, true)
	}
	y.doc, y.cutItems, y.inItems, y.itemsCount = y.doc[:0], false, false, 0
	return err
}
