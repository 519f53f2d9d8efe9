package codec

import (
	"reflect"
	"testing"
)

func TestParsePairScores(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []PairScore
	}{
		{"two GPUs", `[{"uuid":"GPU-a","score":{"GPU-b":160}},{"uuid":"GPU-b","score":{"GPU-a":160}}]`,
			[]PairScore{{UUID: "GPU-a", Scores: map[string]int{"GPU-b": 160}}, {UUID: "GPU-b", Scores: map[string]int{"GPU-a": 160}}}},
		{"single GPU no peers", `[{"uuid":"GPU-a","score":{}}]`, []PairScore{{UUID: "GPU-a"}}},
		{"empty", `[]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePairScores(tt.value)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParsePairScoresErrors(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  []string
	}{
		{"empty", "", []string{"empty value"}},
		{"object", `{"uuid":"GPU-a"}`, []string{"offset 0", "not a JSON array"}},
		{"syntax", `[{"uuid":"GPU-a","score":{"GPU-b":}}]`, []string{"offset 34", "invalid character"}},
		{"float score", `[{"uuid":"GPU-a","score":{"GPU-b":1.5}}]`, []string{"offset", "cannot unmarshal"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePairScores(tt.value)
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			checkErr(t, err, NodePairScoreAnnotation, tt.want...)
		})
	}
}

func TestPairScoresRoundTrip(t *testing.T) {
	for _, ps := range [][]PairScore{
		nil,
		{{UUID: "GPU-a", Scores: map[string]int{"GPU-b": 60, "GPU-c": 10}}, {UUID: "GPU-b", Scores: map[string]int{"GPU-a": 60}}, {UUID: "GPU-c"}},
	} {
		s := FormatPairScores(ps)
		got, err := ParsePairScores(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		if !reflect.DeepEqual(got, ps) {
			t.Errorf("round trip of %q: got %+v, want %+v", s, got, ps)
		}
	}
}

func TestPairScoreMap(t *testing.T) {
	ps := []PairScore{
		{UUID: "GPU-a", Scores: map[string]int{"GPU-b": 60}},
		{UUID: "GPU-b", Scores: map[string]int{"GPU-a": 60}},
		{UUID: "GPU-a", Scores: map[string]int{"GPU-c": 10}},
		{UUID: "GPU-d"},
	}
	m := PairScoreMap(ps)
	want := map[string]map[string]int{"GPU-a": {"GPU-b": 60, "GPU-c": 10}, "GPU-b": {"GPU-a": 60}, "GPU-d": {}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %v, want %v", m, want)
	}
	m["GPU-b"]["GPU-a"] = 0
	if ps[1].Scores["GPU-a"] != 60 {
		t.Error("PairScoreMap shares its maps with the input")
	}
}
