package codec

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseNodeRegister8GPUs is reading one node's register of 8 GPUs, as HAMi's device plugin writes it:
// every node is read this way at start and on each change.
func BenchmarkParseNodeRegister8GPUs(b *testing.B) {
	var parts []string
	for i := 0; i < 8; i++ {
		parts = append(parts, fmt.Sprintf(`{"id":"GPU-%08x-1c2d-4e5f-8a9b-0c1d2e3f4a5b","index":%d,"count":10,"devmem":81920,"devcore":100,"type":"NVIDIA-NVIDIA A100-SXM4-80GB","numa":%d,"mode":"hami-core","health":true}`, i, i, i/4))
	}
	value := "[" + strings.Join(parts, ",") + "]"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDeviceRegister(NodeRegisterAnnotation, value); err != nil {
			b.Fatal(err)
		}
	}
}
