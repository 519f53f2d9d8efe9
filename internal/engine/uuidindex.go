package engine

import "hash/maphash"

// uuidIndex finds a node's device by UUID without reading every device: a short hash of each UUID, in the
// order of the node's GPUs, is scanned (a cache line for a node's few devices, where the UUIDs themselves are
// as many strings elsewhere in memory), and a match is confirmed on the UUID. A node of many devices also has
// a map. Built once per node (buildNode), after its GPUs are in their final order.
type uuidIndex struct {
	tags []uint32
	many map[string]int // UUID -> position, for a node of more than smallNode devices
}

// smallNode is the number of devices up to which the index scans its tags instead of looking the UUID up.
const smallNode = 16

// uuidSeed seeds the tags' hash: any seed gives the same answers, only the tags differ.
var uuidSeed = maphash.MakeSeed()

func uuidTag(uuid string) uint32 { return uint32(maphash.String(uuidSeed, uuid)) }

// newUUIDIndex indexes the GPUs' UUIDs by position; the first of a UUID listed twice wins.
func newUUIDIndex(gpus []GPU) uuidIndex {
	ix := uuidIndex{tags: make([]uint32, len(gpus))}
	for i := range gpus {
		ix.tags[i] = uuidTag(gpus[i].UUID)
	}
	if len(gpus) > smallNode {
		ix.many = make(map[string]int, len(gpus))
		for i := len(gpus) - 1; i >= 0; i-- {
			ix.many[gpus[i].UUID] = i
		}
	}
	return ix
}

// find is the position of the GPU with that UUID in gpus (the GPUs the index was built from), -1 when none.
func (ix *uuidIndex) find(gpus []GPU, uuid string) int {
	if ix.many != nil {
		if i, ok := ix.many[uuid]; ok {
			return i
		}
		return -1
	}
	tag := uuidTag(uuid)
	for i, t := range ix.tags {
		if t == tag && gpus[i].UUID == uuid {
			return i
		}
	}
	return -1
}
