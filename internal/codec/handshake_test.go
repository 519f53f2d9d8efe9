package codec

import (
	"testing"
	"time"
)

func TestParseHandshake(t *testing.T) {
	local := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.Local)
	}
	tests := []struct {
		name  string
		value string
		want  Handshake
	}{
		{"empty", "", Handshake{}},
		{"requesting", "Requesting_2026-08-01 10:11:12", Handshake{State: HandshakeRequesting, Time: local(2026, 8, 1, 10, 11, 12)}},
		{"deleted", "Deleted_2026-08-01 10:11:12", Handshake{State: HandshakeDeleted, Time: local(2026, 8, 1, 10, 11, 12)}},
		{"reported time.String", "Reported 2024-03-05 06:07:08.123456789 +0000 UTC m=+12.345678901",
			Handshake{State: HandshakeReported, Time: time.Date(2024, 3, 5, 6, 7, 8, 123456789, time.UTC)}},
		{"reported no monotonic", "Reported 2024-03-05 06:07:08 +0200 EET",
			Handshake{State: HandshakeReported, Time: time.Date(2024, 3, 5, 4, 7, 8, 0, time.UTC)}},
		{"reported unparsable time", "Reported sometime", Handshake{State: HandshakeReported}},
		{"reported bare", "Reported", Handshake{State: HandshakeReported}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHandshake(tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.State != tt.want.State || !got.Time.Equal(tt.want.Time) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParseHandshakeErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"unknown state", "Ready", []string{`"Ready"`, "unknown state"}},
		{"prefix glued to word", "Reportedly fine", []string{"unknown state"}},
		{"requesting bad time", "Requesting_now", []string{"time after Requesting_", `"now"`}},
		{"requesting rfc3339", "Requesting_2026-08-01T10:11:12Z", []string{"time after Requesting_"}},
		{"deleted bad time", "Deleted_", []string{"time after Deleted_"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHandshake(tt.value)
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			checkErr(t, err, NodeHandshakeAnnotation, tt.want...)
		})
	}
}

func TestFormatHandshakeRequesting(t *testing.T) {
	at := time.Date(2026, 8, 1, 10, 11, 12, 999, time.Local)
	s := FormatHandshakeRequesting(at)
	if want := "Requesting_2026-08-01 10:11:12"; s != want {
		t.Errorf("got %q, want %q", s, want)
	}
	got, err := ParseHandshake(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != HandshakeRequesting || !got.Time.Equal(at.Truncate(time.Second)) {
		t.Errorf("round trip: got %+v", got)
	}
	// A UTC time is written in local time, the zone the reader assumes.
	u := at.UTC().Truncate(time.Second)
	if got, _ := ParseHandshake(FormatHandshakeRequesting(u)); !got.Time.Equal(u) {
		t.Errorf("UTC round trip: got %v, want %v", got.Time, u)
	}
}
