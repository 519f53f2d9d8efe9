package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

// Error is a parse error in one annotation value. It names the annotation and where in the value the problem is,
// so a user can find the bad field in `kubectl get -o yaml` output without reading our code.
type Error struct {
	Key   string // annotation key, e.g. hami.io/node-nvidia-register
	Pos   string // human position; indexes are 0-based: "device 2, field 3 (devmem)", "offset 17"; empty for the whole value
	Value string // the offending text; empty when Msg says it all
	Msg   string // what is wrong, e.g. "is not an integer"
}

// maxErrValue bounds how much of a bad value an error message quotes: annotation values can be kilobytes.
const maxErrValue = 40

// Error renders `key: pos: "value" msg`, dropping the parts that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Key)
	b.WriteString(": ")
	if e.Pos != "" {
		b.WriteString(e.Pos)
		b.WriteString(": ")
	}
	if e.Value != "" {
		v, cut := truncate(e.Value, maxErrValue)
		fmt.Fprintf(&b, "%q", v)
		if cut {
			b.WriteString("...")
		}
		b.WriteByte(' ')
	}
	b.WriteString(e.Msg)
	return b.String()
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// errEmpty is the error for a blank value; callers handle an absent annotation before calling a parser.
func errEmpty(key string) *Error {
	return &Error{Key: key, Msg: "empty value"}
}

// jsonError turns an encoding/json error into an *Error carrying the 0-based byte offset in the original value.
// base is the number of bytes trimmed off the front before decoding.
func jsonError(key string, base int, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		// Offset counts the bad byte as read; step back so the 0-based offset points at it.
		return &Error{Key: key, Pos: fmt.Sprintf("offset %d", int64(base)+max(syn.Offset-1, 0)), Msg: msg}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		// Here encoding/json reports the offset just past the mistyped value.
		return &Error{Key: key, Pos: fmt.Sprintf("offset %d", int64(base)+typ.Offset), Msg: msg}
	}
	return &Error{Key: key, Msg: msg}
}

// decodeJSONArray decodes value, which must be a JSON array, into dst. Surrounding blanks are dropped; offsets in
// errors still count from the start of value.
func decodeJSONArray(key, value string, dst any) error {
	left := strings.TrimLeftFunc(value, unicode.IsSpace)
	base := len(value) - len(left)
	trimmed := strings.TrimRightFunc(left, unicode.IsSpace)
	if trimmed == "" {
		return errEmpty(key)
	}
	if trimmed[0] != '[' {
		v, _ := truncate(trimmed, maxErrValue)
		return &Error{Key: key, Pos: fmt.Sprintf("offset %d", base), Value: v, Msg: "is not a JSON array"}
	}
	// json-iterator, configured as encoding/json behaves, reads the common well-formed value faster (every
	// node's register is read at start and on each change). It is given only what encoding/json's own scanner
	// calls valid and what is valid UTF-8 (json-iterator accepts control characters in strings and keeps bad
	// bytes that encoding/json replaces); anything else, and anything it refuses, is read by encoding/json,
	// whose error positions the messages quote. FuzzJSONArrayAsStandard holds the two to the same answer.
	if b := []byte(trimmed); utf8.Valid(b) && json.Valid(b) && fastJSON.Unmarshal(b, dst) == nil {
		return nil
	}
	if err := json.Unmarshal([]byte(trimmed), dst); err != nil {
		return jsonError(key, base, err)
	}
	return nil
}

// fastJSON is json-iterator configured exactly as encoding/json behaves.
var fastJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// mustJSON marshals values whose types cannot fail to marshal (no channels, funcs or cyclic data).
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("codec: marshal: " + err.Error())
	}
	return string(b)
}
