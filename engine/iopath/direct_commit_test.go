package iopath

import (
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// A trickle of appends that never fills a staging buffer and is never
// flushed still reaches the device within about CommitInterval: the
// committed position (what consumers may see) follows the written one,
// and nothing is fdatasynced.
func TestDirectCommitsTheTailWithoutFlush(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CommitInterval = 5 * time.Millisecond
	path := segPath(t)
	a := openOrSkip(t, Direct, vfs.Default, path, 4<<20, 0, cfg).(*directAppender)
	defer a.Close()
	want := randomBytes(9, 3000)
	for i := 0; i < 3; i++ {
		chunk := want[i*1000 : (i+1)*1000]
		if _, err := a.Append(chunk); err != nil {
			t.Fatal(err)
		}
		end := int64((i + 1) * 1000)
		waitFor(t, "the tail to be committed", func() bool { return a.CommittedPos() >= end })
		if a.FlushedPos() != 0 {
			t.Fatalf("the background commit flushed: FlushedPos %d", a.FlushedPos())
		}
	}
	// The bytes are in the file (O_DIRECT writes), readable by another
	// descriptor before any flush.
	checkFile(t, path, want)
	checkRead(t, a, want, 0, int64(len(want)))
}
