package codec

import "strings"

// ParseCordon reads hami.io/device-cordon, a comma list of GPU UUIDs. Items are trimmed, empty ones skipped and
// repeats dropped, keeping first-seen order. It cannot fail: any text is a list of some UUIDs.
func ParseCordon(value string) []string {
	var out []string
	seen := map[string]bool{}
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" || seen[item] {
			continue
		}
		seen[item] = true
		out = append(out, item)
	}
	return out
}

// FormatCordon writes the comma list. It writes uuids as given; pass a list from ParseCordon or of clean UUIDs.
func FormatCordon(uuids []string) string {
	return strings.Join(uuids, ",")
}
