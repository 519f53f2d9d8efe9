package codec

import (
	"reflect"
	"testing"
)

func TestParseCordon(t *testing.T) {
	tests := []struct {
		value string
		want  []string
	}{
		{"", nil},
		{" , ,", nil},
		{"GPU-a", []string{"GPU-a"}},
		{"GPU-b, GPU-a ,,GPU-b,GPU-c,", []string{"GPU-b", "GPU-a", "GPU-c"}},
	}
	for _, tt := range tests {
		if got := ParseCordon(tt.value); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCordon(%q) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

func TestCordonRoundTrip(t *testing.T) {
	for _, uuids := range [][]string{nil, {"GPU-a"}, {"GPU-c", "GPU-a", "GPU-b"}} {
		s := FormatCordon(uuids)
		if got := ParseCordon(s); !reflect.DeepEqual(got, uuids) {
			t.Errorf("round trip of %q: got %q, want %q", s, got, uuids)
		}
	}
	if s := FormatCordon([]string{"GPU-a", "GPU-b"}); s != "GPU-a,GPU-b" {
		t.Errorf("FormatCordon = %q", s)
	}
}
