package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// cutJSON cuts a JSON snapshot: one object or a List (its items one at a time), or several such values one
// after another. It checks only the structure it walks (objects, arrays, strings); each item's own syntax is
// checked where it is decoded, with the line of the error.
func cutJSON(br *bufio.Reader, name string, p *pipeline) error {
	c := &jsonCutter{br: br, p: p, name: name, line: 1}
	for {
		b, err := c.skipSpace()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch b {
		case '{':
			err = c.object()
		case '[':
			c.discard(1)
			err = c.items()
		default:
			return c.errorf("invalid character %q after top-level value", b)
		}
		if err != nil {
			return err
		}
	}
}

type jsonCutter struct {
	br      *bufio.Reader
	p       *pipeline
	name    string
	line    int
	capture *[]byte // when set, every byte consumed is also appended here (a single object's text)
}

func (c *jsonCutter) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", c.name, c.line, fmt.Sprintf(format, args...))
}

func (c *jsonCutter) eof(err error) error {
	if errors.Is(err, io.EOF) {
		return c.errorf("unexpected end of JSON input")
	}
	return fmt.Errorf("snapshot %s: %w", c.name, err)
}

// chunk is the buffered input, refilled when empty.
func (c *jsonCutter) chunk() ([]byte, error) {
	if c.br.Buffered() == 0 {
		if _, err := c.br.Peek(1); err != nil {
			return nil, err
		}
	}
	return c.br.Peek(c.br.Buffered())
}

// consume takes n bytes of the chunk: counted for lines, captured when a single object is being read.
func (c *jsonCutter) consume(chunk []byte, n int) {
	c.line += bytes.Count(chunk[:n], []byte{'\n'})
	if c.capture != nil {
		*c.capture = append(*c.capture, chunk[:n]...)
	}
	_, _ = c.br.Discard(n) // n bytes are buffered
}

func (c *jsonCutter) discard(n int) {
	chunk, _ := c.br.Peek(n)
	c.consume(chunk, len(chunk))
}

// skipSpace consumes white space and returns the next byte, unread.
func (c *jsonCutter) skipSpace() (byte, error) {
	for {
		chunk, err := c.chunk()
		if err != nil {
			return 0, err
		}
		i := 0
		for i < len(chunk) && isSpace(chunk[i]) {
			i++
		}
		c.consume(chunk, i)
		if i < len(chunk) {
			return chunk[i], nil
		}
	}
}

// object reads one top-level object: a List's items go to the pipeline one by one; any other object goes
// whole, as one document.
func (c *jsonCutter) object() error {
	startLine := c.line
	var text []byte
	c.capture = &text
	defer func() { c.capture = nil }()
	c.discard(1) // {
	isList := false
	for first := true; ; first = false {
		b, err := c.skipSpace()
		if err != nil {
			return c.eof(err)
		}
		if b == '}' {
			c.discard(1)
			break
		}
		if !first {
			if b != ',' {
				return c.errorf("invalid character %q after object key:value pair", b)
			}
			c.discard(1)
			if b, err = c.skipSpace(); err != nil {
				return c.eof(err)
			}
		}
		if b != '"' {
			return c.errorf("invalid character %q looking for beginning of object key string", b)
		}
		var key []byte
		if err := c.value(&key); err != nil {
			return err
		}
		isItems := string(key) == `"items"`
		if b, err = c.skipSpace(); err != nil {
			return c.eof(err)
		}
		if b != ':' {
			return c.errorf("invalid character %q after object key", b)
		}
		c.discard(1)
		if b, err = c.skipSpace(); err != nil {
			return c.eof(err)
		}
		if isItems && b == '[' {
			// A List: its items are cut one by one, the rest of the object is not needed.
			isList = true
			c.capture = nil
			c.discard(1)
			if err := c.items(); err != nil {
				return err
			}
			continue
		}
		if err := c.value(nil); err != nil { // kept by the capture, until the object turns out a List
			return err
		}
	}
	if isList {
		return nil
	}
	start := c.p.begin()
	c.p.cur.buf = append(c.p.cur.buf, text...)
	return c.p.add(start, startLine, -1, false)
}

// items reads the elements of an array whose '[' is consumed, each one an item.
func (c *jsonCutter) items() error {
	for i := 0; ; i++ {
		b, err := c.skipSpace()
		if err != nil {
			return c.eof(err)
		}
		if b == ']' {
			c.discard(1)
			return nil
		}
		if i > 0 {
			if b != ',' {
				return c.errorf("invalid character %q after array element", b)
			}
			c.discard(1)
			if _, err = c.skipSpace(); err != nil {
				return c.eof(err)
			}
		}
		line := c.line
		start := c.p.begin()
		if err := c.value(&c.p.cur.buf); err != nil {
			return err
		}
		if err := c.p.add(start, line, i, false); err != nil {
			return err
		}
	}
}

// value consumes one JSON value (its first byte is next), appending its bytes to dst unless dst is nil
// (then only the capture, if any, keeps them).
func (c *jsonCutter) value(dst *[]byte) error {
	var st valueScan
	for {
		chunk, err := c.chunk()
		if err != nil {
			if errors.Is(err, io.EOF) && st.literal {
				return nil // a number or word that ends the input
			}
			return c.eof(err)
		}
		n, done := st.scan(chunk)
		if dst != nil {
			*dst = append(*dst, chunk[:n]...)
		}
		c.consume(chunk, n)
		if done {
			return nil
		}
	}
}

// valueScan finds where a JSON value ends, across buffer refills.
type valueScan struct {
	started, literal, inString, escape bool
	depth                              int
}

// scan consumes bytes of chunk and says how many, and whether the value ended with them.
func (st *valueScan) scan(chunk []byte) (int, bool) {
	for i := 0; i < len(chunk); i++ {
		b := chunk[i]
		if !st.started {
			st.started = true
			switch b {
			case '{', '[':
				st.depth = 1
			case '"':
				st.inString = true
			default:
				st.literal = true
			}
			continue
		}
		if st.literal {
			if b == ',' || b == '}' || b == ']' || b == ':' || isSpace(b) {
				return i, true
			}
			continue
		}
		if st.inString {
			if st.escape {
				st.escape = false
				continue
			}
			// Skip to the next quote or backslash.
			for i < len(chunk) && chunk[i] != '"' && chunk[i] != '\\' {
				i++
			}
			if i == len(chunk) {
				return len(chunk), false
			}
			if chunk[i] == '\\' {
				st.escape = true
				continue
			}
			st.inString = false
			if st.depth == 0 {
				return i + 1, true
			}
			continue
		}
		switch b {
		case '"':
			st.inString = true
		case '{', '[':
			st.depth++
		case '}', ']':
			st.depth--
			if st.depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(chunk), false
}
