package snapshot

import (
	"math"
	"reflect"
	"strings"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jsonScan reads one cut item's JSON by hand, for the pod and node decoders (decode_pod.go): no reflection,
// no map or string built for a field that is not kept. It takes only the plain form the API server and
// `kubectl hami snapshot` write; on anything else (an escaped key, a key in another case, a repeated field, a
// number that is not a plain integer, a value of the wrong type, broken JSON) it gives up, and the item goes to
// json-iterator's reflection decoder as before, which then gives the same object or the same error.
type jsonScan struct {
	b     []byte
	i     int
	bad   bool
	depth int
	st    *listCache // the decoding goroutine's lists and strings; nil: none kept
	// tolText is the JSON text of the pod's toleration list, when the goroutine holds it (sharedTolerations).
	tolText string
	// annoList reads a pod's annotations into annos (key, value, ...; nil for none or null) instead of a map,
	// for its record (scanObject).
	annoList bool
	annos    []string
}

// fail gives up: every loop ends at once.
func (s *jsonScan) fail() {
	s.bad = true
	s.i = len(s.b)
}

// maxScanDepth is json-iterator's nesting limit: deeper input goes to it, for its error.
const maxScanDepth = 10000

// ws skips white space (as json-iterator: space, tab, CR, LF) and returns the next byte, unread; 0 at the end.
func (s *jsonScan) ws() byte {
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !isSpace(c) {
			return c
		}
		s.i++
	}
	return 0
}

// end holds that only white space follows the value.
func (s *jsonScan) end() {
	if s.ws() != 0 {
		s.fail()
	}
}

// null consumes a null and says so; anything else stays unread.
func (s *jsonScan) null() bool {
	if s.ws() == 'n' {
		if s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
			s.i += 4
			return true
		}
		s.fail()
	}
	return false
}

// object starts an object: true after its '{'; false for null (json-iterator leaves a struct as it is) or a
// failure.
func (s *jsonScan) object() bool {
	if s.null() {
		return false
	}
	if s.ws() != '{' {
		s.fail()
		return false
	}
	s.i++
	s.depth++
	if s.depth > maxScanDepth {
		s.fail()
		return false
	}
	return true
}

// field reads the next key of an object whose '{' was read, and its ':'; ok is false at the object's end (or
// a failure). n counts the fields read so far.
func (s *jsonScan) field(n *int) (key []byte, ok bool) {
	c := s.ws()
	if *n > 0 {
		if c == ',' {
			s.i++
			c = s.ws()
		} else {
			if c == '}' {
				s.i++
				s.depth--
			} else {
				s.fail()
			}
			return nil, false
		}
	} else if c == '}' {
		s.i++
		s.depth--
		return nil, false
	}
	*n++
	if c != '"' {
		s.fail()
		return nil, false
	}
	start := s.i + 1
	j := start
	for j < len(s.b) && s.b[j] != '"' {
		if s.b[j] == '\\' || s.b[j] < ' ' {
			s.fail() // an escaped key may name a field: json-iterator decides
			return nil, false
		}
		j++
	}
	if j == len(s.b) {
		s.fail()
		return nil, false
	}
	key = s.b[start:j]
	s.i = j + 1
	if s.ws() != ':' {
		s.fail()
		return nil, false
	}
	s.i++
	return key, !s.bad
}

// array starts an array: true after its '['; false for null (a nil slice) or a failure.
func (s *jsonScan) array() bool {
	if s.null() {
		return false
	}
	if s.ws() != '[' {
		s.fail()
		return false
	}
	s.i++
	s.depth++
	if s.depth > maxScanDepth {
		s.fail()
		return false
	}
	return true
}

// elem says whether another element follows in an array whose '[' was read; n counts the elements so far.
func (s *jsonScan) elem(n *int) bool {
	c := s.ws()
	if *n > 0 {
		if c == ',' {
			s.i++
			*n++
			return !s.bad
		}
	} else if c != ']' {
		*n++
		return !s.bad
	}
	if c == ']' {
		s.i++
		s.depth--
	} else {
		s.fail()
	}
	return false
}

// str reads a string value; null is "", as json-iterator reads it.
func (s *jsonScan) str() string {
	raw, plain := s.strBytes()
	if s.bad {
		return ""
	}
	if plain {
		if s.st != nil {
			return s.st.keep(raw) // kept with the snapshot's object
		}
		return string(raw)
	}
	return s.escaped(raw)
}

// shared reads a string value that repeats from object to object (a namespace, a node name, an image, a
// label): held once per decoding goroutine, so that reading it again allocates nothing.
func (s *jsonScan) shared() string {
	raw, plain := s.strBytes()
	if s.bad {
		return ""
	}
	if !plain {
		return s.escaped(raw)
	}
	if s.st == nil || len(raw) == 0 {
		return string(raw)
	}
	if v, ok := s.st.strs[string(raw)]; ok {
		return v
	}
	v := string(raw)
	if s.st.strs == nil {
		s.st.strs = map[string]string{}
	}
	if len(s.st.strs) < maxShared {
		s.st.strs[v] = v
	}
	return v
}

// strBytes reads a string value: its bytes between the quotes, plain when they hold no escape (then they are
// the string); the whole quoted text otherwise. null is an empty plain string.
func (s *jsonScan) strBytes() (raw []byte, plain bool) {
	if s.null() {
		return nil, true
	}
	if s.ws() != '"' {
		s.fail()
		return nil, false
	}
	start := s.i
	j := start + 1
	plain = true
	for ; j < len(s.b); j++ {
		c := s.b[j]
		if c == '"' {
			break
		}
		if c < ' ' {
			s.fail() // json-iterator refuses control characters
			return nil, false
		}
		if c == '\\' {
			plain = false
			j++
		}
	}
	if j >= len(s.b) {
		s.fail()
		return nil, false
	}
	s.i = j + 1
	if plain {
		return s.b[start+1 : j], true
	}
	return s.b[start : j+1], false
}

// escaped decodes a quoted string with escapes as json-iterator does: the one-letter escapes here (a node's
// register annotation is JSON in a string, every quote escaped), a \u escape by json-iterator.
func (s *jsonScan) escaped(quoted []byte) string {
	if out, ok := unescape(quoted); ok {
		return out
	}
	var out string
	if err := fastJSON.Unmarshal(quoted, &out); err != nil {
		s.fail()
	}
	return out
}

// unescape decodes a quoted string whose escapes are all one letter; ok is false for a \u escape.
func unescape(quoted []byte) (string, bool) {
	body := quoted[1 : len(quoted)-1]
	buf := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			buf = append(buf, c)
			continue
		}
		i++
		switch body[i] {
		case '"', '\\', '/':
			c = body[i]
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default:
			return "", false
		}
		buf = append(buf, c)
	}
	if len(buf) == 0 {
		return "", true
	}
	return unsafe.String(&buf[0], len(buf)), true // buf is not written again
}

// strPtr reads a *string (or a pointer to a string type); null is nil.
func (s *jsonScan) strPtr() *string {
	if s.null() {
		return nil
	}
	v := s.shared()
	return &v
}

// integer reads a plain integer in [lo, hi]; ok is false for null (json-iterator leaves the field as it is).
// Any other form (a fraction, an exponent, a leading zero, a minus zero) is left to json-iterator.
func (s *jsonScan) integer(lo, hi int64) (v int64, ok bool) {
	if s.null() {
		return 0, false
	}
	c := s.ws()
	neg := c == '-'
	j := s.i
	if neg {
		j++
	}
	start := j
	var u uint64
	for ; j < len(s.b) && s.b[j] >= '0' && s.b[j] <= '9'; j++ {
		if u > (math.MaxUint64-9)/10 {
			s.fail()
			return 0, false
		}
		u = u*10 + uint64(s.b[j]-'0')
	}
	digits := j - start
	if digits == 0 || (digits > 1 && s.b[start] == '0') || (neg && u == 0) || u > math.MaxInt64 {
		s.fail()
		return 0, false
	}
	if j < len(s.b) && !isSpace(s.b[j]) && s.b[j] != ',' && s.b[j] != '}' && s.b[j] != ']' {
		s.fail()
		return 0, false
	}
	v = int64(u)
	if neg {
		v = -v
	}
	if v < lo || v > hi {
		s.fail()
		return 0, false
	}
	s.i = j
	return v, true
}

func (s *jsonScan) int64To(dst *int64) {
	if v, ok := s.integer(math.MinInt64+1, math.MaxInt64); ok {
		*dst = v
	}
}

func (s *jsonScan) int32To(dst *int32) {
	if v, ok := s.integer(math.MinInt32, math.MaxInt32); ok {
		*dst = int32(v)
	}
}

func (s *jsonScan) int64Ptr() *int64 {
	if s.null() {
		return nil
	}
	v := new(int64)
	s.int64To(v)
	return v
}

func (s *jsonScan) int32Ptr() *int32 {
	if s.null() {
		return nil
	}
	v := new(int32)
	s.int32To(v)
	return v
}

// boolTo reads true or false; null leaves *dst as it is.
func (s *jsonScan) boolTo(dst *bool) {
	if s.null() {
		return
	}
	switch {
	case s.literal("true"):
		*dst = true
	case s.literal("false"):
		*dst = false
	default:
		s.fail()
	}
}

func (s *jsonScan) boolPtr() *bool {
	if s.null() {
		return nil
	}
	v := new(bool)
	s.boolTo(v)
	return v
}

// literal consumes word when it is next, followed by a delimiter.
func (s *jsonScan) literal(word string) bool {
	s.ws()
	j := s.i + len(word)
	if j > len(s.b) || string(s.b[s.i:j]) != word {
		return false
	}
	if j < len(s.b) && !isSpace(s.b[j]) && s.b[j] != ',' && s.b[j] != '}' && s.b[j] != ']' {
		return false
	}
	s.i = j
	return true
}

// time reads a metav1.Time as its UnmarshalJSON does (RFC 3339, in the local zone; null is the zero time).
func (s *jsonScan) time(dst *metav1.Time) {
	if s.null() {
		*dst = metav1.Time{}
		return
	}
	raw, plain := s.strBytes()
	if s.bad {
		return
	}
	if !plain {
		if err := dst.UnmarshalJSON(raw); err != nil {
			s.fail()
		}
		return
	}
	t, err := time.Parse(time.RFC3339, string(raw))
	if err != nil {
		s.fail()
		return
	}
	dst.Time = t.Local()
}

func (s *jsonScan) timePtr() *metav1.Time {
	if s.null() {
		return nil
	}
	t := new(metav1.Time)
	s.time(t)
	return t
}

// skip consumes one value, checking its syntax as json-iterator's strict skip does.
func (s *jsonScan) skip() {
	switch c := s.ws(); c {
	case '{':
		s.object()
		for n := 0; ; {
			if _, ok := s.field(&n); !ok {
				break
			}
			s.skip()
		}
	case '[':
		s.array()
		for n := 0; s.elem(&n); {
			s.skip()
		}
	case '"':
		raw, plain := s.strBytes()
		if !plain && !s.bad && !validEscapes(raw) {
			s.fail()
		}
	case 't':
		if !s.literal("true") {
			s.fail()
		}
	case 'f':
		if !s.literal("false") {
			s.fail()
		}
	case 'n':
		s.null()
	default:
		s.number()
	}
}

// raw consumes one value and returns its text.
func (s *jsonScan) raw() []byte {
	s.ws()
	start := s.i
	s.skip()
	if s.bad {
		return nil
	}
	return s.b[start:s.i]
}

// number consumes a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonScan) number() {
	b, j := s.b, s.i
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	if j < len(b) && b[j] == '-' {
		j++
	}
	if n := digits(); n == 0 || (n > 1 && b[j-n] == '0') {
		s.fail()
		return
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			s.fail()
			return
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			s.fail()
			return
		}
	}
	if j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		s.fail()
		return
	}
	s.i = j
}

// validEscapes checks a quoted string's escapes.
func validEscapes(quoted []byte) bool {
	for j := 1; j < len(quoted)-1; j++ {
		if quoted[j] != '\\' {
			continue
		}
		j++
		switch quoted[j] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			if j+4 >= len(quoted) {
				return false
			}
			for _, h := range quoted[j+1 : j+5] {
				if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
					return false
				}
			}
			j += 4
		default:
			return false
		}
	}
	return true
}

// other handles a key the decoder does not name: one json-iterator would take as a known field (another case,
// a non-ASCII letter that folds to one) goes to it; any other is skipped, as json-iterator skips it.
func (s *jsonScan) other(key []byte, known fieldNames) {
	var buf [64]byte
	if len(key) > len(buf) {
		s.skip()
		return
	}
	for i, c := range key {
		if c >= 0x80 {
			s.fail()
			return
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	if _, ok := known[string(buf[:len(key)])]; ok {
		s.fail()
		return
	}
	s.skip()
}

// once marks field bit of a struct read, failing on a repeat (json-iterator merges a repeated field into the
// first; let it).
func (s *jsonScan) once(seen *uint64, bit uint) {
	if *seen&(1<<bit) != 0 {
		s.fail()
	}
	*seen |= 1 << bit
}

// fieldNames are a struct's JSON field names, lower case (json-iterator's case-insensitive match).
type fieldNames map[string]struct{}

// namesOf lists the JSON names of v's struct type, its inlined structs' included.
func namesOf(v any) fieldNames {
	out := fieldNames{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous && name == "" {
				walk(f.Type)
				continue
			}
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out[strings.ToLower(name)] = struct{}{}
		}
	}
	walk(reflect.TypeOf(v))
	return out
}
