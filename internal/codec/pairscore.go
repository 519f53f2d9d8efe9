package codec

// ParsePairScores reads hami.io/node-nvidia-score, a JSON array `[{"uuid":"GPU-a","score":{"GPU-b":N}}]`.
// A blank value is an error; "[]" gives nil. Empty score maps become nil so that values compare equal after a
// FormatPairScores round trip.
func ParsePairScores(value string) ([]PairScore, error) {
	var ps []PairScore
	if err := decodeJSONArray(NodePairScoreAnnotation, value, &ps); err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, nil
	}
	for i := range ps {
		if len(ps[i].Scores) == 0 {
			ps[i].Scores = nil
		}
	}
	return ps, nil
}

// FormatPairScores writes the JSON array HAMi reads; no scores give "[]".
func FormatPairScores(ps []PairScore) string {
	if ps == nil {
		ps = []PairScore{}
	}
	return mustJSON(ps)
}

// PairScoreMap indexes scores as m[uuid][peer]. A UUID listed twice keeps the later entry's scores for a peer.
// The maps are fresh copies, so callers may change them.
func PairScoreMap(ps []PairScore) map[string]map[string]int {
	m := make(map[string]map[string]int, len(ps))
	for _, p := range ps {
		inner := m[p.UUID]
		if inner == nil {
			inner = make(map[string]int, len(p.Scores))
			m[p.UUID] = inner
		}
		for peer, s := range p.Scores {
			inner[peer] = s
		}
	}
	return m
}
