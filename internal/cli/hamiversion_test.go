package cli

import (
	"strings"
	"testing"
)

// TestHAMiVersionFlag: --hami-version decides which nodes are flagged as unreadable for HAMi, and a bad
// value is refused with the flag's name.
func TestHAMiVersionFlag(t *testing.T) {
	cases := []struct {
		version string
		want    string // a part of stderr; "" for no register warning
		wantErr string
	}{
		{"", "Node gpu-t4-03: metadata.annotations[hami.io/node-nvidia-register]: registered in the text-9 text form, which HAMi v2.8 and later do not read", ""},
		{"v2.10.0", "HAMi v2.10's scheduler sees this node as unregistered", ""},
		{"2.7", "", ""}, // checked below: the JSON nodes are flagged instead
		{"3.0", "", "--hami-version"},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			args := []string{"what-if", "--demo", "--gpus", "1"}
			if tc.version != "" {
				args = append(args, "--hami-version", tc.version)
			}
			_, errOut, err := run(t, args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.version == "2.7" {
				if strings.Contains(errOut, "gpu-t4-03") || !strings.Contains(errOut, "registered in the JSON form, which HAMi v2.7 and earlier do not read: HAMi v2.7") {
					t.Errorf("v2.7 must flag the JSON nodes, not gpu-t4-03:\n%s", errOut)
				}
				return
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errOut)
			}
		})
	}
}
