package engine

import (
	"testing"

	"github.com/kubectl-hami/kubectl-hami/internal/codec"
)

// TestDeviceListsOnePass: the one pass over a pod's annotations finds each Kind's list once, its Allocated
// list before its ToAllocate list, in Kind order, whatever the map's order; other annotations are skipped.
func TestDeviceListsOnePass(t *testing.T) {
	kinds := DefaultConfig().Kinds()
	keys := listKeys(kinds)
	dcu := -1
	for i := range kinds {
		if kinds[i].Name == "DCU" {
			dcu = i
		}
	}
	if dcu <= 0 {
		t.Fatal("no DCU kind after NVIDIA's")
	}
	annos := map[string]string{
		kinds[dcu].ToAllocate:         "to",
		codec.PodToAllocateAnnotation: "nv-to",
		codec.PodAllocatedAnnotation:  "nv",
		kinds[dcu].Allocated:          "dcu",
		codec.PodNodeAnnotation:       "n1",
		"unrelated":                   "x",
	}
	for range 20 { // map order varies from run to run
		got := deviceLists(annos, keys, nil)
		if len(got) != 2 || got[0].kind != 0 || got[0].raw != "nv" || got[1].kind != dcu || got[1].raw != "dcu" {
			t.Fatalf("deviceLists = %+v, want NVIDIA's allocated list, then the DCU's", got)
		}
	}
	delete(annos, codec.PodAllocatedAnnotation)
	if got := deviceLists(annos, keys, nil); got[0].raw != "nv-to" || got[0].key != codec.PodToAllocateAnnotation {
		t.Errorf("without an allocated list the to-allocate list is read, got %+v", got[0])
	}
}
