package codec

import (
	"strings"
	"time"
)

// NodeLockTTL is how long a hami.io/mutex.lock holds; HAMi lets anyone take an older lock over.
const NodeLockTTL = 5 * time.Minute

// ParseNodeLock reads hami.io/mutex.lock: `<RFC3339 time>,<namespace>,<pod>`, or the legacy time alone.
// Fractional seconds are accepted (Go's RFC3339 parser allows them). Parts are trimmed.
func ParseNodeLock(value string) (NodeLock, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return NodeLock{}, errEmpty(NodeLockAnnotation)
	}
	parts := strings.Split(value, ",")
	if len(parts) != 1 && len(parts) != 3 {
		return NodeLock{}, &Error{Key: NodeLockAnnotation, Value: value, Msg: "want <time>,<namespace>,<pod> or <time>"}
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	t, err := time.Parse(time.RFC3339, parts[0])
	if err != nil {
		return NodeLock{}, &Error{Key: NodeLockAnnotation, Pos: "field 0 (time)", Value: parts[0], Msg: "is not an RFC 3339 time"}
	}
	l := NodeLock{Time: t}
	if len(parts) == 3 {
		l.Namespace, l.Pod = parts[1], parts[2]
	}
	return l, nil
}

// FormatNodeLock writes `<RFC3339 time>,<namespace>,<pod>` in the time's own location, or the time alone when
// the lock names no pod. Sub-second precision is kept only when present; HAMi's RFC3339 reader accepts it.
func FormatNodeLock(l NodeLock) string {
	ts := l.Time.Format(time.RFC3339Nano)
	if l.Namespace == "" && l.Pod == "" {
		return ts
	}
	return ts + "," + l.Namespace + "," + l.Pod
}

// Expired reports whether the lock is older than NodeLockTTL at now, and so may be taken over.
func (l NodeLock) Expired(now time.Time) bool {
	return now.Sub(l.Time) > NodeLockTTL
}
