package codec_test

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// Ascend's plugin registers each NPU's network in customInfo.NetworkID, which HAMi v2.10.0's Ascend Fit and
// ScoreNode read as a JSON number (pkg/device/ascend/device.go:388-421, 619-629); Go's decoder matches the
// key customInfo in any case.
func TestRegisterNetworkID(t *testing.T) {
	devs, err := codec.ParseDeviceRegister("k", `[{"id":"a","customInfo":{"NetworkID":2}},{"id":"b","custominfo":{"NetworkID":1.0}},`+
		`{"id":"c","customInfo":{"NetworkID":"1"}},{"id":"d","customInfo":[1]},{"id":"e"}]`)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{2, 1, -1, -1, -1}
	for i, d := range devs {
		got := -1
		if d.NetworkID != nil {
			got = *d.NetworkID
		}
		if got != want[i] {
			t.Errorf("device %s: NetworkID %d, want %d (-1: none)", d.ID, got, want[i])
		}
	}
}
