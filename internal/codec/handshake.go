package codec

import (
	"strings"
	"time"
)

// Handshake states HAMi writes.
const (
	HandshakeRequesting = "Requesting"
	HandshakeReported   = "Reported"
	HandshakeDeleted    = "Deleted"
)

// handshakeLayout is the scheduler's stamp layout; it carries no zone, so it is local time on the writer.
const handshakeLayout = "2006-01-02 15:04:05"

// reportedLayouts are tried for `Reported <time>`, which old device plugins wrote with time.Now().String().
var reportedLayouts = []string{
	"2006-01-02 15:04:05.999999999 -0700 MST",
	"2006-01-02 15:04:05 -0700 MST",
	handshakeLayout,
	time.RFC3339,
}

// ParseHandshake reads hami.io/node-handshake. `Requesting_<local time>` and `Deleted_<local time>` are written by
// the scheduler in a known layout, so a bad time there is an error. `Reported <time>` came from old node
// components in a free form; when its time does not parse, the state is still returned with a zero Time.
// An empty value gives the zero Handshake.
func ParseHandshake(value string) (Handshake, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return Handshake{}, nil
	}
	for _, state := range []string{HandshakeRequesting, HandshakeDeleted} {
		rest, ok := strings.CutPrefix(value, state+"_")
		if !ok {
			continue
		}
		t, err := time.ParseInLocation(handshakeLayout, strings.TrimSpace(rest), time.Local)
		if err != nil {
			return Handshake{}, &Error{Key: NodeHandshakeAnnotation, Pos: "time after " + state + "_", Value: rest, Msg: "is not a time like " + handshakeLayout}
		}
		return Handshake{State: state, Time: t}, nil
	}
	if rest, ok := strings.CutPrefix(value, HandshakeReported); ok && (rest == "" || rest[0] == ' ' || rest[0] == '_') {
		return Handshake{State: HandshakeReported, Time: parseReportedTime(rest)}, nil
	}
	return Handshake{}, &Error{Key: NodeHandshakeAnnotation, Value: value, Msg: "has an unknown state (want Requesting_, Reported or Deleted_)"}
}

// parseReportedTime parses the time after "Reported", or returns the zero time.
func parseReportedTime(s string) time.Time {
	s = strings.TrimLeft(s, " _")
	// time.Time.String appends the monotonic clock reading ("m=+1.5"), which no layout can parse.
	if i := strings.Index(s, " m="); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	for _, layout := range reportedLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t
		}
	}
	return time.Time{}
}

// FormatHandshakeRequesting writes the scheduler's `Requesting_<local time>` stamp.
func FormatHandshakeRequesting(t time.Time) string {
	return HandshakeRequesting + "_" + t.In(time.Local).Format(handshakeLayout)
}
