package tui

import (
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/engine"
)

// TestWhatIfFormDevice: the form's Device field picks another device type's resource names, as what-if
// --device does; an unknown type (with the closest ones), a resource the type lacks or a namespace no
// namespace can have is an error naming the field.
func TestWhatIfFormDevice(t *testing.T) {
	cfg := engine.DefaultConfig()
	cases := []struct {
		device, mem, want, wantErr string
		namespace                  string // "" is "default"
	}{
		{"", "8000", "nvidia.com/gpu=2 nvidia.com/gpucores=30 nvidia.com/gpumem=8000", "", ""},
		{"dcu", "8000", "hygon.com/dcucores=30 hygon.com/dcumem=8000 hygon.com/dcunum=2", "", ""},
		{"DCU", "50%", "", "memory: DCU devices have no such resource", ""},
		{"tpu", "8000", "", `unknown device "tpu"`, ""},
		{"hygn", "8000", "", `unknown device "hygn": did you mean "hygon"?`, ""},
		{"", "8000", "", `no namespace can be named "q?"`, "q?"},
	}
	for _, tc := range cases {
		t.Run(tc.device+"/"+tc.mem+"/"+tc.namespace, func(t *testing.T) {
			ns := tc.namespace
			if ns == "" {
				ns = "default"
			}
			f := newWhatIfForm(ns)
			f.fields[fieldGPUs].input.SetValue("2")
			f.fields[fieldMemory].input.SetValue(tc.mem)
			f.fields[fieldDevice].input.SetValue(tc.device)
			pod, err := f.pod(cfg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for name, q := range pod.Spec.Containers[0].Resources.Limits {
				got = append(got, string(name)+"="+strconv.FormatInt(q.Value(), 10))
			}
			sort.Strings(got)
			if strings.Join(got, " ") != tc.want {
				t.Errorf("limits %v, want %s", got, tc.want)
			}
		})
	}
}
