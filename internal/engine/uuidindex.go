package engine

import (
	"hash/maphash"
	"strings"
)

// uuidIndex finds a node's device by UUID without reading every device: a short hash of each UUID, in the
// order of the node's GPUs, is scanned, and a match is confirmed on a copy of the UUIDs kept one after
// another (a few cache lines side by side, where the devices and their UUID strings are as many places in
// memory). A node of many devices has a map instead. Built once per node (buildNode), after its GPUs are in
// their final order.
type uuidIndex struct {
	tags []uint64       // per GPU: the UUID's hash in the high half, the end of its copy in ids in the low half
	ids  string         // the UUIDs one after another
	many map[string]int // UUID -> position, for a node of more than smallNode devices
}

// smallNode is the number of devices up to which the index scans its tags instead of looking the UUID up.
const smallNode = 16

// uuidSeed seeds the tags' hash: any seed gives the same answers, only the tags differ.
var uuidSeed = maphash.MakeSeed()

func uuidTag(uuid string) uint32 { return uint32(maphash.String(uuidSeed, uuid)) }

// newUUIDIndex indexes the GPUs' UUIDs by position; the first of a UUID listed twice wins.
func newUUIDIndex(gpus []GPU) uuidIndex {
	if len(gpus) > smallNode {
		ix := uuidIndex{many: make(map[string]int, len(gpus))}
		for i := len(gpus) - 1; i >= 0; i-- {
			ix.many[gpus[i].UUID] = i
		}
		return ix
	}
	size := 0
	for i := range gpus {
		size += len(gpus[i].UUID)
	}
	var ids strings.Builder
	ids.Grow(size)
	ix := uuidIndex{tags: make([]uint64, len(gpus))}
	for i := range gpus {
		ids.WriteString(gpus[i].UUID)
		ix.tags[i] = uint64(uuidTag(gpus[i].UUID))<<32 | uint64(ids.Len())
	}
	ix.ids = ids.String()
	return ix
}

// find is the position of the GPU with that UUID, -1 when none.
func (ix *uuidIndex) find(uuid string) int {
	if ix.many != nil {
		if i, ok := ix.many[uuid]; ok {
			return i
		}
		return -1
	}
	tag, start := uint64(uuidTag(uuid)), 0
	for i, t := range ix.tags {
		end := int(uint32(t))
		if t>>32 == tag && ix.ids[start:end] == uuid {
			return i
		}
		start = end
	}
	return -1
}
