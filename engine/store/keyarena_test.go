package store

import (
	"bytes"
	"fmt"
	"testing"
)

// TestKeyArenaStringsStayIntact: the dispatcher's index keys are strings
// over its append-only key arena, made from a record buffer that the next
// read overwrites. Keys made before the arena filled and was replaced
// keep their values, a long key is copied on its own, and one arena
// serves many keys (well under one allocation per key).
func TestKeyArenaStringsStayIntact(t *testing.T) {
	var d dispatcher
	buf := make([]byte, 64) // reused, as the dispatcher's read buffer is
	var got, want []string
	for i := range 1000 {
		k := fmt.Appendf(buf[:0], "C0A80001%024X", i)
		got = append(got, d.keyString(k))
		want = append(want, string(k))
		clear(buf)
	}
	long := bytes.Repeat([]byte("k"), keyArenaSize)
	longKey := d.keyString(long)
	clear(long)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("key %d is %q, was made as %q", i, got[i], want[i])
		}
	}
	if longKey != string(bytes.Repeat([]byte("k"), keyArenaSize)) {
		t.Fatal("a long key changed with its source buffer")
	}
	k := []byte("C0A8000100000000000000000000ABCD")
	if n := testing.AllocsPerRun(1000, func() { d.keyString(k) }); n > 0.05 {
		t.Fatalf("%.3f allocations per key", n)
	}
}
