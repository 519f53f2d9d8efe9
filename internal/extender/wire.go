package extender

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// The scheduler verbs' wire: kube-scheduler sends every candidate node's name to /filter and /prioritize and
// reads one answer per node back, thousands per pod. ExtenderArgs is decoded by hand (the pod by json-iterator,
// the names as views of the request body), and the answers are written by hand into a pooled buffer, in the
// bytes encoding/json writes for the same values (wire_test.go compares them over generated worlds).

// readBody reads the body into buf's room, grown once to its announced length (bounded by the verb's limit).
func readBody(r *http.Request, buf []byte) ([]byte, error) {
	b := bytes.NewBuffer(buf[:0])
	if r.ContentLength > 0 && r.ContentLength <= 64<<20 {
		b.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// pooledBody is a request body and its list of node names, read into buffers kept between requests (two
// of 70 + 80 KB for each pod at 5,000 nodes). The names are views of the body: release it only when
// nothing holds one.
type pooledBody struct{ bufs *requestBuffers }

type requestBuffers struct {
	body  []byte
	names []string
}

var requestPool = sync.Pool{New: func() any { return &requestBuffers{body: make([]byte, 0, 64<<10)} }}

// maxPooledBody bounds what the pool keeps: a rare huge body is left to the collector.
const maxPooledBody = 4 << 20

func (p pooledBody) release() {
	if p.bufs != nil && cap(p.bufs.body) <= maxPooledBody {
		requestPool.Put(p.bufs)
	}
}

// decodePooledArgs reads an ExtenderArgs body into pooled buffers, which the caller releases when done,
// answering 400 (or 413) itself on failure, like decode.
func decodePooledArgs(w http.ResponseWriter, r *http.Request, args *extenderv1.ExtenderArgs) (pooledBody, bool) {
	bufs := requestPool.Get().(*requestBuffers)
	body, err := readBody(r, bufs.body)
	bufs.body = body[:0]
	if err == nil {
		err = parseArgsInto(body, args, bufs.names)
	}
	if args.NodeNames != nil && cap(*args.NodeNames) <= maxPooledBody/16 {
		bufs.names = (*args.NodeNames)[:0] // the list read, or one grown from it, is the next request's room
	}
	if !decodeFailed(w, err) {
		pooledBody{bufs}.release()
		return pooledBody{}, false
	}
	return pooledBody{bufs}, true
}

// decodeFailed answers 400, or 413 for a body over the limit, when err is set.
func decodeFailed(w http.ResponseWriter, err error) bool {
	if err == nil {
		return true
	}
	status := http.StatusBadRequest
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		status = http.StatusRequestEntityTooLarge
	}
	http.Error(w, fmt.Sprintf("cannot decode the request body: %v", err), status)
	return false
}

// parseArgs decodes an ExtenderArgs as encoding/json does (field names in any case, the last of a repeated
// field winning, null leaving a field nil). The node names are views of body, which must not change after.
func parseArgs(body []byte, args *extenderv1.ExtenderArgs) error {
	return parseArgsInto(body, args, nil)
}

// parseArgsInto is parseArgs reading NodeNames into room's array when it is large enough.
func parseArgsInto(body []byte, args *extenderv1.ExtenderArgs, room []string) error {
	if i := bytes.IndexByte(body, 0); i >= 0 {
		return fmt.Errorf("invalid character NUL at offset %d", i)
	}
	d := wireDecoder{buf: body, room: room}
	d.space()
	if d.literal("null") {
		return d.end()
	}
	if !d.take('{') {
		return d.syntax("looking for the beginning of an object")
	}
	for first := true; ; first = false {
		d.space()
		if d.take('}') {
			return d.end()
		}
		if !first {
			if !d.take(',') {
				return d.syntax("after an object field")
			}
			d.space()
		}
		key, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		if !d.take(':') {
			return d.syntax("after an object key")
		}
		d.space()
		switch {
		case strings.EqualFold(key, "NodeNames"):
			err = d.names(args)
		case strings.EqualFold(key, "Pod"):
			err = d.object(func(raw []byte) error {
				if args.Pod == nil {
					args.Pod = &corev1.Pod{}
				}
				return fastJSON.Unmarshal(raw, args.Pod)
			}, func() { args.Pod = nil })
		case strings.EqualFold(key, "Nodes"):
			err = d.object(func(raw []byte) error {
				if args.Nodes == nil {
					args.Nodes = &corev1.NodeList{}
				}
				return fastJSON.Unmarshal(raw, args.Nodes)
			}, func() { args.Nodes = nil })
		default:
			err = d.object(func(raw []byte) error {
				if !json.Valid(raw) {
					return errors.New("invalid JSON in field " + strconv.Quote(key))
				}
				return nil
			}, func() {})
		}
		if err != nil {
			return err
		}
	}
}

type wireDecoder struct {
	buf  []byte
	pos  int
	room []string // an array for NodeNames, kept between requests
}

func (d *wireDecoder) syntax(where string) error {
	if d.pos >= len(d.buf) {
		return errors.New("unexpected end of JSON input")
	}
	return fmt.Errorf("invalid character %q %s at offset %d", d.buf[d.pos], where, d.pos)
}

func (d *wireDecoder) space() {
	for d.pos < len(d.buf) && isJSONSpace(d.buf[d.pos]) {
		d.pos++
	}
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func (d *wireDecoder) take(b byte) bool {
	if d.pos < len(d.buf) && d.buf[d.pos] == b {
		d.pos++
		return true
	}
	return false
}

func (d *wireDecoder) literal(word string) bool {
	if bytes.HasPrefix(d.buf[d.pos:], []byte(word)) {
		d.pos += len(word)
		return true
	}
	return false
}

// end accepts only white space after the value: anything else means a broken or forged request.
func (d *wireDecoder) end() error {
	d.space()
	if d.pos < len(d.buf) {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// str reads a string. One without escapes or multi-byte characters (a node name) is a view of the buffer;
// others are decoded by encoding/json, for its exact rules.
func (d *wireDecoder) str() (string, error) {
	if !d.take('"') {
		return "", d.syntax("looking for the beginning of a string")
	}
	start := d.pos
	for i := start; i < len(d.buf); i++ {
		switch b := d.buf[i]; {
		case b == '"':
			d.pos = i + 1
			if i == start {
				return "", nil
			}
			return unsafe.String(&d.buf[start], i-start), nil
		case b == '\\' || b < 0x20 || b >= utf8.RuneSelf:
			return d.slowStr(start - 1)
		}
	}
	d.pos = len(d.buf)
	return "", errors.New("unexpected end of JSON input")
}

func (d *wireDecoder) slowStr(open int) (string, error) {
	i := open + 1
	for ; i < len(d.buf); i++ {
		if d.buf[i] == '\\' {
			i++
			continue
		}
		if d.buf[i] == '"' {
			break
		}
	}
	if i >= len(d.buf) {
		d.pos = len(d.buf)
		return "", errors.New("unexpected end of JSON input")
	}
	var s string
	if err := json.Unmarshal(d.buf[open:i+1], &s); err != nil {
		return "", err
	}
	d.pos = i + 1
	return s, nil
}

// names reads NodeNames: null, or an array of strings (null elements are "", as encoding/json leaves them).
func (d *wireDecoder) names(args *extenderv1.ExtenderArgs) error {
	if d.literal("null") {
		args.NodeNames = nil
		return nil
	}
	if !d.take('[') {
		return d.syntax("where NodeNames' array begins")
	}
	// Counting the commas sizes the slice once; a name holds no comma unless escaped, when this only
	// over-allocates.
	size := 1 + bytes.Count(d.buf[d.pos:min(len(d.buf), d.pos+1<<24)], []byte{','})
	list := d.room[:0]
	d.room = nil // a repeated NodeNames field gets its own array: the first may be the one kept
	if cap(list) < size {
		list = make([]string, 0, size)
	}
	for first := true; ; first = false {
		d.space()
		if d.take(']') {
			break
		}
		if !first {
			if !d.take(',') {
				return d.syntax("after an array element")
			}
			d.space()
		}
		if d.literal("null") {
			list = append(list, "")
			continue
		}
		s, err := d.str()
		if err != nil {
			return err
		}
		list = append(list, s)
	}
	args.NodeNames = &list
	return nil
}

// object hands the bytes of the next value to set, or calls clear for null.
func (d *wireDecoder) object(set func([]byte) error, clear func()) error {
	if d.literal("null") {
		clear()
		return nil
	}
	start := d.pos
	if err := d.skip(); err != nil {
		return err
	}
	return set(d.buf[start:d.pos])
}

// skip passes over one value, finding its end; its own syntax is checked by whoever decodes it.
func (d *wireDecoder) skip() error {
	if d.pos >= len(d.buf) {
		return errors.New("unexpected end of JSON input")
	}
	switch d.buf[d.pos] {
	case '"':
		return d.skipString()
	case '{', '[':
		depth := 0
		for ; d.pos < len(d.buf); d.pos++ {
			switch d.buf[d.pos] {
			case '"':
				if err := d.skipString(); err != nil {
					return err
				}
				d.pos--
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					d.pos++
					return nil
				}
			}
		}
		return errors.New("unexpected end of JSON input")
	}
	for d.pos < len(d.buf) && !isJSONSpace(d.buf[d.pos]) && d.buf[d.pos] != ',' && d.buf[d.pos] != '}' && d.buf[d.pos] != ']' {
		d.pos++
	}
	return nil
}

// skipString passes over a string whose quote is next.
func (d *wireDecoder) skipString() error {
	for i := d.pos + 1; i < len(d.buf); i++ {
		switch d.buf[i] {
		case '\\':
			i++
		case '"':
			d.pos = i + 1
			return nil
		}
	}
	d.pos = len(d.buf)
	return errors.New("unexpected end of JSON input")
}

// wireBuffers keeps answer buffers between requests: an answer for 5,000 nodes is about 100 KB.
var wireBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// writeWire sends bytes built by fill, with encoding/json's trailing newline.
func writeWire(w http.ResponseWriter, fill func([]byte) ([]byte, error)) {
	bp := wireBuffers.Get().(*[]byte)
	defer wireBuffers.Put(bp)
	out, err := fill((*bp)[:0])
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	*bp = out[:0]
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(out, '\n'))
}

// appendFilterResult writes an ExtenderFilterResult as encoding/json does (struct fields in order, map keys
// sorted, nil maps and pointers as null).
func appendFilterResult(b []byte, res *extenderv1.ExtenderFilterResult) ([]byte, error) {
	b = append(b, `{"Nodes":`...)
	if res.Nodes == nil {
		b = append(b, "null"...)
	} else {
		js, err := json.Marshal(res.Nodes) // full node objects: a cluster without nodeCacheCapable, rare
		if err != nil {
			return nil, err
		}
		b = append(b, js...)
	}
	b = append(b, `,"NodeNames":`...)
	if res.NodeNames == nil {
		b = append(b, "null"...)
	} else {
		b = appendStrings(b, *res.NodeNames)
	}
	b = append(b, `,"FailedNodes":`...)
	b = appendFailedNodes(b, res.FailedNodes)
	b = append(b, `,"FailedAndUnresolvableNodes":`...)
	b = appendFailedNodes(b, res.FailedAndUnresolvableNodes)
	b = append(b, `,"Error":`...)
	b = appendString(b, res.Error)
	return append(b, '}'), nil
}

func appendStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendFailedNodes(b []byte, m extenderv1.FailedNodesMap) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

// appendPriorities writes a HostPriorityList as encoding/json does.
func appendPriorities(b []byte, list extenderv1.HostPriorityList) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Host":`...)
		b = appendString(b, list[i].Host)
		b = append(b, `,"Score":`...)
		b = strconv.AppendInt(b, list[i].Score, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendString is encoding/json's string encoding with its HTML escaping: <, >, & and the control characters
// as \u00XX (\b \f \n \r \t short), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
