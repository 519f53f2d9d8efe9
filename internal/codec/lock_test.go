package codec

import (
	"testing"
	"time"
)

func TestParseNodeLock(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  NodeLock
	}{
		{"current", "2026-08-01T10:00:00Z,team-a,train-0", NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), Namespace: "team-a", Pod: "train-0"}},
		{"legacy time only", "2026-08-01T10:00:00Z", NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)}},
		{"offset zone", "2026-08-01T12:00:00+02:00,ns,p", NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), Namespace: "ns", Pod: "p"}},
		{"fraction", "2026-08-01T10:00:00.5Z,ns,p", NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 5e8, time.UTC), Namespace: "ns", Pod: "p"}},
		{"blanks", " 2026-08-01T10:00:00Z , ns , p \n", NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), Namespace: "ns", Pod: "p"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodeLock(tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !got.Time.Equal(tt.want.Time) || got.Namespace != tt.want.Namespace || got.Pod != tt.want.Pod {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseNodeLockErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"empty", "", []string{"empty value"}},
		{"bad time", "yesterday,ns,p", []string{"field 0 (time)", `"yesterday" is not an RFC 3339 time`}},
		{"handshake layout", "2026-08-01 10:00:00", []string{"field 0 (time)"}},
		{"two parts", "2026-08-01T10:00:00Z,ns", []string{"want <time>,<namespace>,<pod>"}},
		{"four parts", "2026-08-01T10:00:00Z,ns,p,x", []string{"want <time>,<namespace>,<pod>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNodeLock(tt.value)
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			checkErr(t, err, NodeLockAnnotation, tt.want...)
		})
	}
}

func TestNodeLockRoundTrip(t *testing.T) {
	east := time.FixedZone("", 8*3600)
	tests := []struct {
		lock NodeLock
		want string
	}{
		{NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC), Namespace: "ns", Pod: "p"}, "2026-08-01T10:00:00Z,ns,p"},
		{NodeLock{Time: time.Date(2026, 8, 1, 18, 0, 0, 0, east), Namespace: "ns", Pod: "p"}, "2026-08-01T18:00:00+08:00,ns,p"},
		{NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)}, "2026-08-01T10:00:00Z"},
		{NodeLock{Time: time.Date(2026, 8, 1, 10, 0, 0, 123, time.UTC), Namespace: "ns", Pod: "p"}, "2026-08-01T10:00:00.000000123Z,ns,p"},
	}
	for _, tt := range tests {
		s := FormatNodeLock(tt.lock)
		if s != tt.want {
			t.Errorf("format: got %q, want %q", s, tt.want)
		}
		got, err := ParseNodeLock(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		_, wantOff := tt.lock.Time.Zone()
		_, gotOff := got.Time.Zone()
		if !got.Time.Equal(tt.lock.Time) || gotOff != wantOff || got.Namespace != tt.lock.Namespace || got.Pod != tt.lock.Pod {
			t.Errorf("round trip of %q: got %+v, want %+v", s, got, tt.lock)
		}
	}
}

func TestNodeLockExpired(t *testing.T) {
	t0 := time.Date(2026, 8, 1, 10, 0, 0, 0, time.UTC)
	l := NodeLock{Time: t0}
	for _, tt := range []struct {
		now  time.Time
		want bool
	}{
		{t0, false},
		{t0.Add(-time.Minute), false}, // clock skew: a lock from the future is held
		{t0.Add(NodeLockTTL), false},
		{t0.Add(NodeLockTTL + time.Second), true},
	} {
		if got := l.Expired(tt.now); got != tt.want {
			t.Errorf("Expired(%v) = %v, want %v", tt.now.Sub(t0), got, tt.want)
		}
	}
	if !(NodeLock{}).Expired(t0) {
		t.Error("zero lock should be expired")
	}
}
