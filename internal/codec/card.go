package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Annotations of Volcano's card-model quota (the capacity-card plugin) and of Volcano's queue membership.
const (
	CardQuotaAnnotation   = "volcano.sh/card.quota"            // on a Queue: {"<card>": count}
	CardRequestAnnotation = "volcano.sh/card.request"          // on a PodGroup (job): {"<card or A|B>": total}
	CardNameAnnotation    = "volcano.sh/card.name"             // on a pod: "A" or "A|B|C", preferred first
	QueueNameAnnotation   = "scheduling.volcano.sh/queue-name" // on a pod: its Volcano queue
	GroupNameAnnotation   = "scheduling.k8s.io/group-name"     // on a pod: its PodGroup
)

// ParseCardQuota reads a queue's volcano.sh/card.quota: a JSON object of card name to whole-card count.
// Volcano's plugin turns an unparsable value into an empty quota that denies everything; this says why instead.
func ParseCardQuota(v string) (map[string]int64, error) {
	return parseCardCounts(CardQuotaAnnotation, v, false)
}

// ParseCardRequest reads a job's volcano.sh/card.request: like a quota, but a key may list alternatives "A|B".
func ParseCardRequest(v string) (map[string]int64, error) {
	return parseCardCounts(CardRequestAnnotation, v, true)
}

func parseCardCounts(key, v string, alternatives bool) (map[string]int64, error) {
	if strings.TrimSpace(v) == "" {
		return map[string]int64{}, nil
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(v))
	if err := dec.Decode(&raw); err != nil {
		return nil, &Error{Key: key, Msg: "is not a JSON object of card name to count (" + jsonProblem(err) + ")"}
	}
	if dec.More() {
		return nil, &Error{Key: key, Msg: "has data after the JSON object"}
	}
	if raw == nil {
		return nil, &Error{Key: key, Msg: "is null, not a JSON object of card name to count"}
	}
	names := make([]string, 0, len(raw))
	for k := range raw {
		names = append(names, k)
	}
	sort.Strings(names) // report the first bad entry the same way every time
	out := make(map[string]int64, len(raw))
	for _, k := range names {
		pos := fmt.Sprintf("card %q", k)
		if strings.TrimSpace(k) == "" {
			return nil, &Error{Key: key, Pos: pos, Msg: "has an empty card name"}
		}
		if alternatives {
			if _, err := splitCardNames(k); err != nil {
				return nil, &Error{Key: key, Pos: pos, Msg: err.Error()}
			}
		} else if strings.Contains(k, "|") {
			return nil, &Error{Key: key, Pos: pos, Msg: "lists alternatives; a quota names one card"}
		}
		val := strings.TrimSpace(string(raw[k]))
		n, err := wholeCount(json.Number(val))
		if err != nil {
			return nil, &Error{Key: key, Pos: pos, Value: val, Msg: err.Error()}
		}
		out[k] = n
	}
	return out, nil
}

// wholeCount accepts a non-negative whole number ("2", "2.0"); cards do not come in fractions.
func wholeCount(n json.Number) (int64, error) {
	if i, err := n.Int64(); err == nil {
		if i < 0 {
			return 0, fmt.Errorf("is negative")
		}
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("is not a number")
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("is not a whole number of cards")
	}
	if f < 0 {
		return 0, fmt.Errorf("is negative")
	}
	if f > math.MaxInt32 {
		return 0, fmt.Errorf("is too large")
	}
	return int64(f), nil
}

// ParseCardName reads a pod's volcano.sh/card.name: one card, or alternatives "A|B" in order of preference.
func ParseCardName(v string) ([]string, error) {
	names, err := splitCardNames(v)
	if err != nil {
		return nil, &Error{Key: CardNameAnnotation, Value: v, Msg: err.Error()}
	}
	return names, nil
}

func splitCardNames(v string) ([]string, error) {
	parts := strings.Split(v, "|")
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			if len(parts) == 1 {
				return nil, fmt.Errorf("is empty")
			}
			return nil, fmt.Errorf("has an empty alternative at position %d", i)
		}
		for _, seen := range out {
			if seen == p {
				return nil, fmt.Errorf("lists %s twice", p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// FormatCardCounts writes a quota or request in the JSON form Volcano reads, keys sorted.
func FormatCardCounts(m map[string]int64) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		fmt.Fprintf(&b, ":%d", m[k])
	}
	b.WriteByte('}')
	return b.String()
}

// jsonProblem shortens encoding/json's messages to the part a user can act on.
func jsonProblem(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
		return fmt.Sprintf("%s at offset %d", msg, se.Offset)
	}
	return msg
}
