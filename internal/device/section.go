package device

import (
	"encoding/json"
	"fmt"
)

// Decode reads a vendor's section into v, leaving v as it is when the section is absent.
func Decode(vendor string, section json.RawMessage, v any) error {
	if len(section) == 0 || string(section) == "null" {
		return nil
	}
	if err := json.Unmarshal(section, v); err != nil {
		return fmt.Errorf("device-config.yaml section %s: %w", vendor, err)
	}
	return nil
}

// Or returns v, or def when v is empty.
func Or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
