package snapshot

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// TestSharedTolerations: pods with equal toleration lists share one, pods with different ones (down to a
// value that would pass for two fields, or a missing tolerationSeconds) keep their own, as decoded.
func TestSharedTolerations(t *testing.T) {
	lists := []string{
		`[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]`,
		`[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]`,
		`[{"key":"a","operator":"Exists","effect":"NoExecute"}]`,
		`[{"key":"a","operator":"Exists","effect":"NoSchedule","tolerationSeconds":300}]`,
		`[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":30}]`,
		`[{"key":"a","operator":"Equal","value":"Exists","effect":"NoExecute"}]`,
		`[{"key":"a","operator":"Equal","value":"x","effect":"NoExecute"}]`,
		`[{"key":"a\u0000Exists","effect":"NoExecute"}]`,
		`[{"key":"a","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"b","operator":"Exists"}]`,
	}
	var items []string
	for i, l := range lists {
		items = append(items, fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"n","name":"p%d"},"spec":{"tolerations":%s}}`, i, l))
	}
	data := []byte(`{"apiVersion":"v1","kind":"List","items":[` + strings.Join(items, ",") + `]}`)
	got := mustParse(t, data)
	want := wholeFile(t, data, false) // decoded without sharing
	for i := range want.Pods.Slice() {
		if !reflect.DeepEqual(got.Pods.At(i).Spec.Tolerations, want.Pods.At(i).Spec.Tolerations) {
			t.Errorf("pod %d: tolerations %+v, decoded %+v", i, got.Pods.At(i).Spec.Tolerations, want.Pods.At(i).Spec.Tolerations)
		}
	}
	if &got.Pods.At(0).Spec.Tolerations[0] != &got.Pods.At(1).Spec.Tolerations[0] {
		t.Error("pods 0 and 1 have equal tolerations but each its own list")
	}
	if tols := got.Pods.At(0).Spec.Tolerations; cap(tols) != len(tols) {
		t.Errorf("a shared list has room for %d more: an append would write into it", cap(tols)-len(tols))
	}
}
