package device

import "strings"

// TypeContains is HAMi's getNodeResources rule (pkg/scheduler/score.go:43-52 at v2.10.0) as a Kind's Sees: a
// request of type name is judged on every device whose registered type contains name, case-insensitively.
func TypeContains(name string) func(deviceType string) bool {
	lower := strings.ToLower(name)
	return func(deviceType string) bool { return containsFold(deviceType, lower) }
}

// containsFold is strings.Contains(strings.ToLower(s), lower) without the copy for ASCII s, as node reads call
// it for every device of every node.
func containsFold(s, lower string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.Contains(strings.ToLower(s), lower)
		}
	}
	if len(lower) == 0 {
		return true
	}
	for i := 0; i+len(lower) <= len(s); i++ {
		j := 0
		for ; j < len(lower); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != lower[j] {
				break
			}
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}
