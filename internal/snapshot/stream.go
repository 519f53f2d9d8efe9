package snapshot

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/yaml"
)

// The streaming reader: a snapshot is cut into items (a List's items, a YAML stream's documents) as it is
// read, the items are decoded by every core a batch at a time and added to the Snapshot in file order. No
// more than a few batches of the file's text are held at once, so memory follows the objects kept, not the
// file: a 200 MB List reads in the memory of its model, and input past the cap is refused where the cap is
// crossed, without having been held.

// LoadReader reads a snapshot from r (a file, or standard input for "-"), at most MaxFileBytes. Input that is
// not a regular file (a pipe) is first copied to a temporary file, removed when read: a pipe past the cap is
// then refused before any of it is decoded, holding neither its bytes nor its objects.
func LoadReader(r io.Reader, path string) (*Snapshot, error) {
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			return read(f, path, MaxFileBytes)
		}
	}
	spool, err := os.CreateTemp("", "kubectl-hami-snapshot-*")
	if err != nil {
		return read(r, path, MaxFileBytes) // no temporary file: refused where the cap is crossed
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	cr := &cappedReader{r: r, left: MaxFileBytes}
	br := bufio.NewReaderSize(cr, headBytes)
	head, err := br.Peek(headBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, errOverCap) {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if bytes.IndexByte(head, 0) >= 0 { // /dev/zero is refused before it is copied
		return read(bytes.NewReader(head), path, -1)
	}
	if _, err := io.Copy(spool, br); err != nil && !errors.Is(err, errOverCap) {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if cr.over {
		return nil, overCap(path, MaxFileBytes)
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return read(spool, path, -1)
}

// Parse decodes snapshot bytes; name is used in errors ("FILE:LINE: ...").
func Parse(data []byte, name string) (*Snapshot, error) {
	return read(bytes.NewReader(data), name, -1)
}

// headBytes is how much of the input is looked at for binary data before anything is decoded.
const headBytes = 64 << 10

// errOverCap is what the capped reader returns past the cap; read turns it into the error that names the input.
var errOverCap = errors.New("over the snapshot size cap")

type cappedReader struct {
	r    io.Reader
	left int64 // bytes still allowed; < 0 is no cap
	over bool
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return c.r.Read(p)
	}
	if c.left == 0 {
		// One byte more tells a file of exactly the cap from a longer one.
		var one [1]byte
		n, err := c.r.Read(one[:])
		if n > 0 {
			c.over = true
			return 0, errOverCap
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// read is LoadReader and Parse: limit < 0 reads without a cap.
func read(r io.Reader, name string, limit int64) (*Snapshot, error) {
	cr := &cappedReader{r: r, left: limit}
	br := bufio.NewReaderSize(cr, 256<<10)
	head, err := br.Peek(headBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, errOverCap) {
		return nil, fmt.Errorf("snapshot %s: %w", name, err)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return nil, fmt.Errorf("%s: binary data (a NUL byte in the first %d bytes); a snapshot is YAML or JSON text (kubectl hami snapshot writes one)", name, len(head))
	}
	s := &Snapshot{Source: "file " + name, file: name}
	p := newPipeline(s, name)
	// The first byte that is not white space tells JSON from YAML; nothing is consumed, for YAML's indentation
	// and the line numbers. Past 64 KiB of white space, it is read as YAML (which JSON also is).
	i := 0
	for i < len(head) && isSpace(head[i]) {
		i++
	}
	switch {
	case i == len(head) && len(head) < headBytes:
		err = fmt.Errorf("%s: the snapshot is empty", name)
	case i < len(head) && (head[i] == '{' || head[i] == '['):
		err = cutJSON(br, name, p)
	default:
		err = cutYAML(br, name, p)
	}
	if perr := p.finish(); perr != nil && (err == nil || errors.Is(err, errStopped)) {
		err = perr
	}
	if cr.over {
		return nil, overCap(name, limit)
	}
	if err != nil {
		return nil, err
	}
	return s, s.readSomething(name)
}

func overCap(name string, limit int64) error {
	return fmt.Errorf("%s: more than %d MiB; a snapshot is a List or multi-document YAML/JSON of nodes, pods, quotas and Volcano objects (kubectl hami snapshot writes one)", name, limit>>20)
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// ReadCapped reads all of r, failing with a clear error when it holds more than limit bytes (for inputs that
// are small by nature: what-if's pod manifest).
func ReadCapped(r io.Reader, path string, limit int64) ([]byte, error) {
	cr := &cappedReader{r: r, left: limit}
	head := make([]byte, headBytes)
	n, err := io.ReadFull(cr, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errOverCap) {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return nil, fmt.Errorf("%s: binary data (a NUL byte in the first %d bytes); a snapshot is YAML or JSON text (kubectl hami snapshot writes one)", path, n)
	}
	var buf bytes.Buffer
	buf.Write(head[:n])
	if !cr.over {
		if _, err := buf.ReadFrom(cr); err != nil && !errors.Is(err, errOverCap) {
			return nil, fmt.Errorf("snapshot %s: %w", path, err)
		}
	}
	if cr.over {
		return nil, overCap(path, limit)
	}
	return buf.Bytes(), nil
}

// rawItem is one cut item: a List's element (index >= 0) or a whole document (index -1), in JSON or YAML.
type rawItem struct {
	start, end int // its bytes in the batch's buffer
	line       int // 1-based line of its first byte in the input
	index      int
	yaml       bool
}

// batch is a run of cut items sharing one buffer.
type batch struct {
	buf   []byte
	items []rawItem
	// recs are the records of the batch's pods, by item (decodeShared writes a pod's there, listCache.into),
	// copied into the Snapshot's chunks as they are added: a record costs no allocation of its own.
	recs []podRecord
}

const batchItems = 512

// errStopped ends cutting once an item failed to decode: the pipeline's error is the one to report.
var errStopped = errors.New("stopped")

// pipeline decodes batches on every core while the input is cut into the next one; items are added to the
// Snapshot in input order, and the first item (in input order) that fails stops the read.
type pipeline struct {
	s       *Snapshot
	name    string
	cur     *batch
	batches chan *batch
	free    chan *batch
	done    chan struct{}
	failed  atomic.Bool
	err     error // set by the consumer; read after done
	shared  sharing
}

func newPipeline(s *Snapshot, name string) *pipeline {
	p := &pipeline{s: s, name: name, batches: make(chan *batch, 2), free: make(chan *batch, 4), done: make(chan struct{})}
	p.cur = p.newBatch()
	go p.consume()
	return p
}

func (p *pipeline) newBatch() *batch {
	select {
	case b := <-p.free:
		b.buf, b.items = b.buf[:0], b.items[:0]
		return b
	default:
		return &batch{items: make([]rawItem, 0, batchItems)}
	}
}

// begin starts an item whose bytes the cutter appends to p.cur.buf; add closes it.
func (p *pipeline) begin() int { return len(p.cur.buf) }

// add closes the item that began at start.
func (p *pipeline) add(start, line, index int, isYAML bool) error {
	if p.failed.Load() {
		return errStopped
	}
	p.cur.items = append(p.cur.items, rawItem{start: start, end: len(p.cur.buf), line: line, index: index, yaml: isYAML})
	if len(p.cur.items) == batchItems {
		p.flush()
	}
	return nil
}

func (p *pipeline) flush() {
	if len(p.cur.items) == 0 {
		return
	}
	p.batches <- p.cur
	p.cur = p.newBatch()
}

// finish decodes what is left and returns the first item's error, if any.
func (p *pipeline) finish() error {
	p.flush()
	close(p.batches)
	<-p.done
	return p.err
}

func (p *pipeline) consume() {
	defer close(p.done)
	workers := runtime.GOMAXPROCS(0)
	caches := make([]listCache, workers) // each worker's, kept from batch to batch
	for b := range p.batches {
		if p.err != nil {
			continue
		}
		objs := make([]any, len(b.items)) // an item's object, or its document's objects ([]any)
		errs := make([]error, len(b.items))
		if cap(b.recs) < len(b.items) {
			b.recs = make([]podRecord, batchItems)
		}
		for w := range caches {
			caches[w].reuseSlabs() // the last batch's records are packed: their lists are copied (Pods.pack)
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range min(workers, len(b.items)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cache := &caches[w]
				for i := int(next.Add(1) - 1); i < len(b.items); i = int(next.Add(1) - 1) {
					cache.into = &b.recs[i]
					objs[i], errs[i] = p.decode(b, &b.items[i], cache)
					cache.into = nil
				}
			}()
		}
		wg.Wait()
		for i := range b.items {
			if errs[i] != nil {
				p.err = errs[i]
				p.failed.Store(true)
				break
			}
			if doc, ok := objs[i].([]any); ok {
				for _, o := range doc {
					p.s.add(p.shared.compact(o))
				}
			} else if objs[i] != nil {
				p.s.add(p.shared.compact(objs[i]))
			}
		}
		select {
		case p.free <- b:
		default:
		}
	}
}

// decode turns one cut item into the object it holds, or a document's objects as an []any (a document may
// itself be a List); nil for none.
func (p *pipeline) decode(b *batch, it *rawItem, cache *listCache) (any, error) {
	js := b.buf[it.start:it.end]
	if it.yaml {
		if len(bytes.TrimSpace(stripComments(js))) == 0 {
			return nil, nil
		}
		var err error
		if js, err = yaml.YAMLToJSON(js); err != nil {
			return nil, fmt.Errorf("%s:%s", p.name, shiftYAMLLine(err.Error(), it.line))
		}
	}
	if it.index >= 0 {
		o, err := decodeShared(js, cache)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: items[%d]: %w", p.name, it.line+errLine(js, err, it.yaml)-1, it.index, err)
		}
		return o, nil
	}
	objs, err := decodeDocument(js)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", p.name, it.line+errLine(js, err, it.yaml)-1, err)
	}
	return objs, nil
}

// errLine is the line of a decoding error within the item's JSON; YAML converted to JSON has no lines of its
// own, so there the item's first line is the answer.
func errLine(js []byte, err error, isYAML bool) int {
	if isYAML {
		return 1
	}
	return jsonLine(js, err)
}
