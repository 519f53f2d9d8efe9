package codec

import (
	"math"
	"strings"
	"unicode/utf8"
)

// fastRegister reads the shape every HAMi device plugin writes, a JSON array of flat device objects, in one
// pass without reflection: each node's register is read when a snapshot is read and on every change of the
// Node, and the general reader (encoding/json's validity scan, then json-iterator) cost about 20 µs per 8-GPU
// node. It answers only for what it can read exactly as encoding/json would: keys spelled as the fields'
// tags, strings without escapes, integers within their field's type, true and false; any other key is
// skipped when it differs from every field name in any case (encoding/json ignores it), after checking its
// value is valid JSON. Anything else (a null, an escape, a fraction, a field in another case, migProfiles,
// invalid UTF-8) gives ok false, and the caller reads the value the general way. value is the trimmed array.
// FuzzFastRegisterAsStandard holds it to encoding/json's answer.
func fastRegister(value string) (devs []DeviceInfo, ok bool) {
	if !utf8.ValidString(value) {
		return nil, false
	}
	r := fastReader{s: value}
	if !r.byte('[') {
		return nil, false
	}
	devs = make([]DeviceInfo, 0, strings.Count(value, "{")) // one a device, more where a value nests
	if r.peek() == ']' {
		r.i++
		return devs, r.end()
	}
	for {
		var d DeviceInfo
		if !r.device(&d) {
			return nil, false
		}
		devs = append(devs, d)
		switch r.next() {
		case ',':
			continue
		case ']':
			return devs, r.end()
		}
		return nil, false
	}
}

// fastReader walks a JSON text; i is the next byte.
type fastReader struct {
	s string
	i int
}

func (r *fastReader) space() {
	for r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek is the next byte after whitespace, 0 at the end.
func (r *fastReader) peek() byte {
	r.space()
	if r.i < len(r.s) {
		return r.s[r.i]
	}
	return 0
}

// next takes the next byte after whitespace.
func (r *fastReader) next() byte {
	c := r.peek()
	if c != 0 {
		r.i++
	}
	return c
}

func (r *fastReader) byte(c byte) bool { return r.next() == c }

// end reports whether only whitespace is left.
func (r *fastReader) end() bool { return r.peek() == 0 && r.i == len(r.s) }

// device reads one object into d.
func (r *fastReader) device(d *DeviceInfo) bool {
	if !r.byte('{') {
		return false
	}
	if r.peek() == '}' {
		r.i++
		return true
	}
	for {
		key, ok := r.plainString()
		if !ok || !r.byte(':') {
			return false
		}
		if !r.field(d, key) {
			return false
		}
		switch r.next() {
		case ',':
			continue
		case '}':
			return true
		}
		return false
	}
}

// jsonRegisterFields are DeviceInfo's JSON names: a key that matches one only in another case is left to
// encoding/json, which matches keys in any case.
var jsonRegisterFields = [...]string{"id", "index", "count", "devmem", "devcore", "type", "numa", "mode", "health", "migProfiles"}

func (r *fastReader) field(d *DeviceInfo, key string) bool {
	var ok bool
	switch key {
	case "id":
		d.ID, ok = r.plainString()
	case "type":
		d.Type, ok = r.plainString()
	case "mode":
		d.Mode, ok = r.plainString()
	case "index":
		var v int64
		v, ok = r.integer(math.MinInt, math.MaxInt)
		d.Index = int(v)
	case "numa":
		var v int64
		v, ok = r.integer(math.MinInt, math.MaxInt)
		d.Numa = int(v)
	case "count":
		var v int64
		v, ok = r.integer(math.MinInt32, math.MaxInt32)
		d.Count = int32(v)
	case "devmem":
		d.Devmem, ok = r.integer(math.MinInt64, math.MaxInt64)
	case "devcore":
		d.Devcore, ok = r.integer(math.MinInt64, math.MaxInt64)
	case "health":
		d.Health, ok = r.boolean()
	default:
		for _, name := range jsonRegisterFields {
			if strings.EqualFold(key, name) {
				return false
			}
		}
		for i := 0; i < len(key); i++ {
			if key[i] >= utf8.RuneSelf { // encoding/json folds a few non-ASCII letters (the Kelvin sign) onto ASCII ones
				return false
			}
		}
		return r.skip(0)
	}
	return ok
}

// plainString reads a string without escapes or control characters, as a view of the text.
func (r *fastReader) plainString() (string, bool) {
	if !r.byte('"') {
		return "", false
	}
	start := r.i
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return r.s[start : r.i-1], true
		case c == '\\' || c < 0x20:
			return "", false
		}
		r.i++
	}
	return "", false
}

// integer reads -?(0|[1-9][0-9]*) within [lo, hi]; a fraction or exponent is not read here.
func (r *fastReader) integer(lo, hi int64) (int64, bool) {
	r.space()
	neg := false
	if r.i < len(r.s) && r.s[r.i] == '-' {
		neg = true
		r.i++
	}
	start := r.i
	var v uint64
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		if v > (math.MaxUint64-9)/10 {
			return 0, false
		}
		v = v*10 + uint64(r.s[r.i]-'0')
		r.i++
	}
	digits := r.i - start
	if digits == 0 || digits > 1 && r.s[start] == '0' {
		return 0, false
	}
	if r.i < len(r.s) && (r.s[r.i] == '.' || r.s[r.i] == 'e' || r.s[r.i] == 'E') {
		return 0, false
	}
	if neg {
		switch {
		case v == 0:
			return 0, true
		case v-1 > uint64(-(lo + 1)): // -v < lo
			return 0, false
		}
		return -int64(v-1) - 1, true
	}
	if v > uint64(hi) {
		return 0, false
	}
	return int64(v), true
}

func (r *fastReader) boolean() (bool, bool) {
	r.space()
	switch {
	case strings.HasPrefix(r.s[r.i:], "true"):
		r.i += 4
		return true, true
	case strings.HasPrefix(r.s[r.i:], "false"):
		r.i += 5
		return false, true
	}
	return false, false
}

// maxSkipDepth bounds the nesting of a skipped value; deeper values are left to encoding/json.
const maxSkipDepth = 32

// skip passes over one valid JSON value.
func (r *fastReader) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	switch c := r.peek(); {
	case c == '"':
		return r.skipString()
	case c == '{' || c == '[':
		r.i++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if r.peek() == closing {
			r.i++
			return true
		}
		for {
			if c == '{' {
				if r.peek() != '"' || !r.skipString() || !r.byte(':') {
					return false
				}
			}
			if !r.skip(depth + 1) {
				return false
			}
			switch r.next() {
			case ',':
				continue
			case closing:
				return true
			}
			return false
		}
	case c == 't':
		return r.literal("true")
	case c == 'f':
		return r.literal("false")
	case c == 'n':
		return r.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return r.skipNumber()
	}
	return false
}

func (r *fastReader) literal(word string) bool {
	if !strings.HasPrefix(r.s[r.i:], word) {
		return false
	}
	r.i += len(word)
	return true
}

// skipString passes over a string, escapes included, checking them as JSON defines them.
func (r *fastReader) skipString() bool {
	r.i++ // the opening quote
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			r.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if r.i+1 >= len(r.s) {
				return false
			}
			switch r.s[r.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.i += 2
			case 'u':
				if r.i+6 > len(r.s) {
					return false
				}
				for _, h := range []byte(r.s[r.i+2 : r.i+6]) {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false
					}
				}
				r.i += 6
			default:
				return false
			}
		default:
			r.i++
		}
	}
	return false
}

// skipNumber passes over -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (r *fastReader) skipNumber() bool {
	s := r.s
	if s[r.i] == '-' {
		r.i++
	}
	digits := func() int {
		start := r.i
		for r.i < len(s) && s[r.i] >= '0' && s[r.i] <= '9' {
			r.i++
		}
		return r.i - start
	}
	start := r.i
	n := digits()
	if n == 0 || n > 1 && s[start] == '0' {
		return false
	}
	if r.i < len(s) && s[r.i] == '.' {
		r.i++
		if digits() == 0 {
			return false
		}
	}
	if r.i < len(s) && (s[r.i] == 'e' || s[r.i] == 'E') {
		r.i++
		if r.i < len(s) && (s[r.i] == '+' || s[r.i] == '-') {
			r.i++
		}
		if digits() == 0 {
			return false
		}
	}
	return true
}
