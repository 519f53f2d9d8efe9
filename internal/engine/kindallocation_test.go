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
		// as long as NVIDIA's key, and not one: the length lets it through to the lookup
		codec.PodAllocatedAnnotation[:len(codec.PodAllocatedAnnotation)-1] + "X": "not a list",
	}
	for range 20 { // map order varies from run to run
		got := deviceLists(annos, &keys, nil)
		if len(got) != 2 || got[0].kind != 0 || got[0].raw != "nv" || got[1].kind != dcu || got[1].raw != "dcu" {
			t.Fatalf("deviceLists = %+v, want NVIDIA's allocated list, then the DCU's", got)
		}
	}
	delete(annos, codec.PodAllocatedAnnotation)
	if got := deviceLists(annos, &keys, nil); got[0].raw != "nv-to" || got[0].key != codec.PodToAllocateAnnotation {
		t.Errorf("without an allocated list the to-allocate list is read, got %+v", got[0])
	}
}

// TestListKeyLengths: the length filter lets every device-list key of every Kind through, and keys too long
// for it go to the lookup.
func TestListKeyLengths(t *testing.T) {
	keys := listKeys(DefaultConfig().Kinds())
	for key := range keys.byKey {
		if !keys.maybe(key) {
			t.Errorf("device-list key %q is filtered out", key)
		}
	}
	if keys.maybe("") || keys.maybe(codec.PodNodeAnnotation) {
		t.Errorf("an empty key or %s passes the filter: no key has its length", codec.PodNodeAnnotation)
	}
	if long := string(make([]byte, 300)); !keys.maybe(long) {
		t.Error("a key of 300 bytes is filtered out")
	}
}
