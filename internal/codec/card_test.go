package codec_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

func TestParseCardQuota(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]int64
		wantErr string
	}{
		{in: `{"NVIDIA-H200":3,"NVIDIA-H200/mig-1g.18gb-mixed":3,"NVIDIA-H800/mps-80g*1/2":2}`,
			want: map[string]int64{"NVIDIA-H200": 3, "NVIDIA-H200/mig-1g.18gb-mixed": 3, "NVIDIA-H800/mps-80g*1/2": 2}},
		{in: ` `, want: map[string]int64{}},
		{in: `{"A":2.0}`, want: map[string]int64{"A": 2}},
		{in: `{"A":0}`, want: map[string]int64{"A": 0}},
		{in: `{"NVIDIA-H200":3`, wantErr: `volcano.sh/card.quota: is not a JSON object of card name to count (unexpected EOF)`},
		{in: `{"A":1} {"B":2}`, wantErr: `volcano.sh/card.quota: has data after the JSON object`},
		{in: `null`, wantErr: `volcano.sh/card.quota: is null`},
		{in: `{"A":"3"}`, wantErr: `volcano.sh/card.quota: card "A": "\"3\"" is not a number`},
		{in: `{"A":1.5}`, wantErr: `volcano.sh/card.quota: card "A": "1.5" is not a whole number of cards`},
		{in: `{"A":-1}`, wantErr: `volcano.sh/card.quota: card "A": "-1" is negative`},
		{in: `{"":1}`, wantErr: `volcano.sh/card.quota: card "": has an empty card name`},
		{in: `{"A|B":1}`, wantErr: `volcano.sh/card.quota: card "A|B": lists alternatives; a quota names one card`},
	}
	for _, tt := range tests {
		got, err := codec.ParseCardQuota(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("ParseCardQuota(%q) error = %v, want prefix %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCardQuota(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseCardRequestAndName(t *testing.T) {
	got, err := codec.ParseCardRequest(`{"NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D":2}`)
	if err != nil || got["NVIDIA-GeForce-RTX-4090|NVIDIA-GeForce-RTX-4090-D"] != 2 {
		t.Fatalf("ParseCardRequest = %v, %v", got, err)
	}
	if _, err := codec.ParseCardRequest(`{"A||B":2}`); err == nil || !strings.Contains(err.Error(), `card "A||B": has an empty alternative at position 1`) {
		t.Errorf("empty alternative: %v", err)
	}
	names, err := codec.ParseCardName(" A | B|C ")
	if err != nil || !reflect.DeepEqual(names, []string{"A", "B", "C"}) {
		t.Errorf("ParseCardName = %v, %v", names, err)
	}
	for in, want := range map[string]string{
		"":    `volcano.sh/card.name: is empty`,
		"A|":  `volcano.sh/card.name: "A|" has an empty alternative at position 1`,
		"A|A": `volcano.sh/card.name: "A|A" lists A twice`,
	} {
		if _, err := codec.ParseCardName(in); err == nil || err.Error() != want {
			t.Errorf("ParseCardName(%q) error = %v, want %q", in, err, want)
		}
	}
	if s := codec.FormatCardCounts(map[string]int64{"b": 2, "a|c": 1}); s != `{"a|c":1,"b":2}` {
		t.Errorf("FormatCardCounts = %s", s)
	}
}

func FuzzParseCardQuota(f *testing.F) {
	for _, s := range []string{`{"NVIDIA-H200":3,"NVIDIA-H800/mps-80g*1/2":2}`, `{"A|B":1}`, `{"A":1e3}`, `{"A":1e400}`,
		`{"A":-0.0}`, `[]`, `null`, `{"\u00ff":1}`, `{"A":1}x`, ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, parse := range []func(string) (map[string]int64, error){codec.ParseCardQuota, codec.ParseCardRequest} {
			m, err := parse(s)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "volcano.sh/card.") {
					t.Fatalf("error %q does not name the annotation", err)
				}
				continue
			}
			for k, v := range m {
				if v < 0 || strings.TrimSpace(k) == "" {
					t.Fatalf("parsed %q into a bad entry %q=%d", s, k, v)
				}
			}
			again, err := parse(codec.FormatCardCounts(m))
			if err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("round trip of %q: %v, %v; want %v", s, again, err, m)
			}
		}
	})
}
