package snapshot

import (
	"testing"
	"unsafe"
)

// TestPackedRecordsStaySmall: a snapshot holds one packed record (and its containers) for every pod of the file
// for the life of a command; a field added or a string kept whole again grows them all.
func TestPackedRecordsStaySmall(t *testing.T) {
	if got := unsafe.Sizeof(packedPod{}); got > 64 {
		t.Errorf("packedPod is %d bytes, more than 64", got)
	}
	if got := unsafe.Sizeof(packedContainer{}); got > 32 {
		t.Errorf("packedContainer is %d bytes, more than 32", got)
	}
}

// TestStrTableSharesAndKeepsUnique: a repeated string is held once whatever bytes it comes in, a unique one gets
// an entry of its own, and every reference reads back its string (the recent-bytes cache included).
func TestStrTableSharesAndKeepsUnique(t *testing.T) {
	tab := newStrTable()
	a1, a2 := string([]byte("team-1")), string([]byte("team-1")) // equal strings in different bytes
	r1, r2 := tab.shared(a1), tab.shared(a2)
	if r1 != r2 || tab.shared(a1) != r1 {
		t.Errorf("team-1 has references %d, %d", r1, r2)
	}
	long := "team-10"
	if r := tab.shared(long[:6]); r != r1 { // the same text as a prefix of other bytes
		t.Errorf("team-1 as a prefix has reference %d, want %d", r, r1)
	}
	if r := tab.shared(long); r == r1 || tab.str(r) != long {
		t.Errorf("team-10 has reference %d (%q)", r, tab.str(r))
	}
	u1, u2 := tab.unique("GPU-0,NVIDIA,1024,10:;"), tab.unique("GPU-0,NVIDIA,1024,10:;")
	if u1 == u2 || tab.str(u1) != tab.str(u2) {
		t.Errorf("unique strings have references %d, %d", u1, u2)
	}
	if tab.shared("") != 0 || tab.unique("") != 0 || tab.str(0) != "" {
		t.Error(`"" is not reference 0`)
	}
	for i := range 3 << strChunkBits { // across chunks
		s := string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		if r := tab.shared(s); tab.str(r) != s {
			t.Fatalf("%q reads back as %q", s, tab.str(r))
		}
	}
}

// TestChunkedListsReadBack: lists of every length, shorter and longer than a chunk, read back whole and alone
// from their spans; none and empty stay apart.
func TestChunkedListsReadBack(t *testing.T) {
	c := chunked[int]{shift: 2} // chunks of 4
	var spans []span
	var want [][]int
	next := 0
	for _, n := range []int{3, 2, 9, 1, 0, 4, 1, 1, 1, 5, 2} {
		l, sp := c.add(n)
		if len(l) != n || cap(l) != n {
			t.Fatalf("room for %d is %d (cap %d)", n, len(l), cap(l))
		}
		w := make([]int, n)
		for i := range l {
			l[i], w[i] = next, next
			next++
		}
		spans, want = append(spans, sp), append(want, w)
	}
	for i, sp := range spans {
		got := c.get(sp)
		if got == nil || len(got) != len(want[i]) || cap(got) != len(got) {
			t.Fatalf("list %d reads back as %v (cap %d), want %v", i, got, cap(got), want[i])
		}
		for j := range got {
			if got[j] != want[i][j] {
				t.Fatalf("list %d reads back as %v, want %v", i, got, want[i])
			}
		}
	}
	if c.get(noList) != nil {
		t.Error("no list reads back as a list")
	}
}
