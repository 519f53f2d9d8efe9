package snapshot

// ParseWhole is Parse without trimming the pods.
func ParseWhole(data []byte, name string) (*Snapshot, error) {
	keepWholePods = true
	defer func() { keepWholePods = false }()
	return Parse(data, name)
}
