package consumequeue

import (
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func TestPutGetAcrossFiles(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 35)
	if got, want := listFiles(t, q.Dir()), []string{
		"00000000000000000000", "00000000000000000200", "00000000000000000400", "00000000000000000600",
	}; !reflect.DeepEqual(got, want) {
		t.Fatalf("files = %v, want %v", got, want)
	}
	if q.Dir() != root+"/consumequeue/TopicTest/3" {
		t.Fatalf("dir = %s", q.Dir())
	}
	if q.MinOffset() != 0 || q.MaxOffset() != 35 || q.MaxPhyOffset() != 3500 {
		t.Fatalf("min/max/maxPhy = %d/%d/%d", q.MinOffset(), q.MaxOffset(), q.MaxPhyOffset())
	}
	for off := int64(0); off < 35; off++ {
		u, err := q.Get(off)
		if err != nil || u != unitFor(off) {
			t.Fatalf("Get(%d) = %+v, %v", off, u, err)
		}
	}
	if _, err := q.Get(35); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(35) err = %v, want ErrNotFound", err)
	}
	// Read stays inside the file holding from.
	us, err := q.Read(5, 100, nil)
	if err != nil || len(us) != 5 || us[0] != unitFor(5) || us[4] != unitFor(9) {
		t.Fatalf("Read(5,100) = %v, %v", us, err)
	}
	us, err = q.Read(30, 100, us)
	if err != nil || len(us) != 5 || us[0] != unitFor(30) {
		t.Fatalf("Read(30,100) = %v, %v", us, err)
	}
	us, err = q.Read(12, 3, us)
	if err != nil || len(us) != 3 || us[2] != unitFor(14) {
		t.Fatalf("Read(12,3) = %v, %v", us, err)
	}
	if us, err = q.Read(35, 10, us); err != nil || len(us) != 0 {
		t.Fatalf("Read(35) = %v, %v", us, err)
	}
	if q.RollNextFile(12) != 20 || q.RollNextFile(20) != 30 {
		t.Fatal("RollNextFile")
	}
}

func TestDuplicateAndOutOfOrderPuts(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 5)

	// Repeat of an already written offset with a newer record: ignored.
	if err := q.Put(2, Unit{PhyOffset: 10000, Size: 50}); err != nil {
		t.Fatal(err)
	}
	// Record ending at or below MaxPhyOffset: ignored whatever the offset.
	if err := q.Put(5, Unit{PhyOffset: 400, Size: 100}); err != nil {
		t.Fatal(err)
	}
	if q.MaxOffset() != 5 {
		t.Fatalf("MaxOffset = %d after ignored puts", q.MaxOffset())
	}
	if u, _ := q.Get(2); u != unitFor(2) {
		t.Fatalf("unit 2 overwritten: %+v", u)
	}
	if s := q.Stats(); s.DuplicatePuts != 2 || s.GapPuts != 0 {
		t.Fatalf("stats = %+v", s)
	}

	// Ahead of the write position within the file: gap blank-filled.
	if err := q.Put(8, unitFor(8)); err != nil {
		t.Fatal(err)
	}
	for off := int64(5); off < 8; off++ {
		if u, err := q.Get(off); err != nil || !u.IsBlank() {
			t.Fatalf("Get(%d) = %+v, %v; want blank", off, u, err)
		}
	}
	if u, _ := q.Get(8); u != unitFor(8) {
		t.Fatalf("unit 8 = %+v", u)
	}

	// Ahead by more than a file: rest of file 0 blank, files 200 and 400 skipped.
	if err := q.Put(35, unitFor(35)); err != nil {
		t.Fatal(err)
	}
	if s := q.Stats(); s.GapPuts != 2 {
		t.Fatalf("stats = %+v", s)
	}
	if u, err := q.Get(9); err != nil || !u.IsBlank() {
		t.Fatalf("Get(9) = %+v, %v", u, err)
	}
	if _, err := q.Read(15, 5, nil); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Read(15) in skipped file err = %v, want ErrRemoved", err)
	}
	if u, err := q.Get(35); err != nil || u != unitFor(35) {
		t.Fatalf("Get(35) = %+v, %v", u, err)
	}
	if u, err := q.Get(30); err != nil || !u.IsBlank() {
		t.Fatalf("Get(30) = %+v, %v", u, err)
	}
	if got := listFiles(t, q.Dir()); !reflect.DeepEqual(got, []string{"00000000000000000000", "00000000000000000600"}) {
		t.Fatalf("files = %v", got)
	}
	putRange(t, q, 36, 42)

	// The hole survives a restart.
	root := strings.TrimSuffix(q.Dir(), "/consumequeue/TopicTest/3")
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q2 := openTestQueue(t, root, 10)
	if q2.MaxOffset() != 42 || q2.MaxPhyOffset() != 4200 {
		t.Fatalf("after reopen max/maxPhy = %d/%d", q2.MaxOffset(), q2.MaxPhyOffset())
	}
	if u, err := q2.Get(41); err != nil || u != unitFor(41) {
		t.Fatalf("Get(41) = %+v, %v", u, err)
	}
}

func TestInvalidPut(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	for _, tc := range []struct {
		off int64
		u   Unit
	}{{-1, unitFor(1)}, {0, Unit{PhyOffset: -5, Size: 1}}, {0, Unit{PhyOffset: 5, Size: 0}}} {
		if err := q.Put(tc.off, tc.u); !errors.Is(err, ErrInvalidUnit) {
			t.Fatalf("Put(%d, %+v) err = %v", tc.off, tc.u, err)
		}
	}
}

func TestPreFillBlank(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	if err := q.Put(25, unitFor(25)); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, q.Dir()); !reflect.DeepEqual(got, []string{"00000000000000000400"}) {
		t.Fatalf("files = %v", got)
	}
	if q.MinOffset() != 25 || q.MaxOffset() != 26 || q.MaxPhyOffset() != 2600 {
		t.Fatalf("min/max/maxPhy = %d/%d/%d", q.MinOffset(), q.MaxOffset(), q.MaxPhyOffset())
	}
	b := readFileBytes(t, segPath(q, 400))
	blank := "00000000000000007fffffff0000000000000000"
	if got := hex.EncodeToString(b[:100]); got != strings.Repeat(blank, 5) {
		t.Fatalf("pre-fill bytes = %s", got)
	}
	if _, err := q.Get(22); !errors.Is(err, ErrRemoved) {
		t.Fatalf("Get(22) below min err = %v", err)
	}
	putRange(t, q, 26, 28)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	q2 := openTestQueue(t, root, 10)
	if q2.MinOffset() != 25 || q2.MaxOffset() != 28 || q2.MaxPhyOffset() != 2800 {
		t.Fatalf("after reopen min/max/maxPhy = %d/%d/%d", q2.MinOffset(), q2.MaxOffset(), q2.MaxPhyOffset())
	}
}

func TestPreFillAtFileBoundary(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	if err := q.Put(20, unitFor(20)); err != nil {
		t.Fatal(err)
	}
	if q.MinOffset() != 20 || q.MaxOffset() != 21 {
		t.Fatalf("min/max = %d/%d", q.MinOffset(), q.MaxOffset())
	}
}

func TestReopenAfterClose(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 23)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.Put(23, unitFor(23)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close err = %v", err)
	}

	// Before Recover a loaded queue refuses writes.
	q2, err := OpenQueue(vfs.Default, root, testTopic, 3, smallConfig(10))
	if err != nil {
		t.Fatal(err)
	}
	if err := q2.Put(23, unitFor(23)); !errors.Is(err, ErrNotRecovered) {
		t.Fatalf("Put before Recover err = %v", err)
	}
	if err := q2.Recover(); err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	if q2.MaxOffset() != 23 || q2.MaxPhyOffset() != 2300 || q2.MinOffset() != 0 || q2.FlushedOffset() != 23 {
		t.Fatalf("min/max/maxPhy/flushed = %d/%d/%d/%d", q2.MinOffset(), q2.MaxOffset(), q2.MaxPhyOffset(), q2.FlushedOffset())
	}
	for off := int64(0); off < 23; off++ {
		if u, err := q2.Get(off); err != nil || u != unitFor(off) {
			t.Fatalf("Get(%d) = %+v, %v", off, u, err)
		}
	}
	putRange(t, q2, 23, 31)
	if u, err := q2.Get(30); err != nil || u != unitFor(30) {
		t.Fatalf("Get(30) = %+v, %v", u, err)
	}
}

func TestLoadRules(t *testing.T) {
	root := t.TempDir()
	q := openTestQueue(t, root, 10)
	putRange(t, q, 0, 12)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	// A zero-length last file is removed at load.
	empty := segPath(q, 400)
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	q2 := openTestQueue(t, root, 10)
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Fatalf("empty last file still there: %v", err)
	}
	if q2.Files() != 2 || q2.MaxOffset() != 12 {
		t.Fatalf("files/max = %d/%d", q2.Files(), q2.MaxOffset())
	}
	if err := q2.Close(); err != nil {
		t.Fatal(err)
	}
	// A file of the wrong size is an error naming it.
	bad := segPath(q, 200)
	if err := os.Truncate(bad, 150); err != nil {
		t.Fatal(err)
	}
	_, err := OpenQueue(vfs.Default, root, testTopic, 3, smallConfig(10))
	if !errors.Is(err, ErrFileSize) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("open with short file err = %v", err)
	}
	// Loading with a different file size fails too.
	if err := os.Truncate(bad, 200); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenQueue(vfs.Default, root, testTopic, 3, smallConfig(20)); !errors.Is(err, ErrFileSize) {
		t.Fatalf("open with other config err = %v", err)
	}
	// A stray file name is rejected.
	if err := os.WriteFile(q.Dir()+"/junk", make([]byte, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenQueue(vfs.Default, root, testTopic, 3, smallConfig(10)); !errors.Is(err, ErrFileName) {
		t.Fatalf("open with junk file err = %v", err)
	}
}

func TestInvalidTopicAndConfig(t *testing.T) {
	for _, topic := range []string{"", "..", "a/b"} {
		if _, err := OpenQueue(vfs.Default, t.TempDir(), topic, 0, DefaultConfig()); !errors.Is(err, ErrInvalidTopic) {
			t.Fatalf("topic %q err = %v", topic, err)
		}
	}
	if _, err := OpenQueue(vfs.Default, t.TempDir(), "T", 0, Config{}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("zero config err = %v", err)
	}
	if DefaultConfig().fileSize() != 6000000 {
		t.Fatal("default file size")
	}
}

func TestFlushLeastPages(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 1000) // 20,000-byte files, ~204 units per 4 KiB page
	putRange(t, q, 0, 300)                   // 6,000 bytes: page 1
	if err := q.Flush(2); err != nil || q.FlushedOffset() != 0 {
		t.Fatalf("Flush(2) with 1 dirty page: flushed %d, %v", q.FlushedOffset(), err)
	}
	if err := q.Flush(1); err != nil || q.FlushedOffset() != 300 {
		t.Fatalf("Flush(1): flushed %d, %v", q.FlushedOffset(), err)
	}
	putRange(t, q, 300, 500) // 10,000 bytes: page 2, flushed page 1
	if err := q.Flush(2); err != nil || q.FlushedOffset() != 300 {
		t.Fatalf("Flush(2) with 1 new page: flushed %d, %v", q.FlushedOffset(), err)
	}
	putRange(t, q, 500, 700) // 14,000 bytes: page 3
	if err := q.Flush(2); err != nil || q.FlushedOffset() != 700 {
		t.Fatalf("Flush(2) with 2 new pages: flushed %d, %v", q.FlushedOffset(), err)
	}
	putRange(t, q, 700, 701)
	if err := q.Flush(0); err != nil || q.FlushedOffset() != 701 {
		t.Fatalf("Flush(0): flushed %d, %v", q.FlushedOffset(), err)
	}
}

func TestFlushOneFilePerCall(t *testing.T) {
	q := openTestQueue(t, t.TempDir(), 10)
	putRange(t, q, 0, 23)
	// A full file is always eligible; one file per call.
	if err := q.Flush(5); err != nil || q.FlushedOffset() != 10 {
		t.Fatalf("first Flush(5): flushed %d, %v", q.FlushedOffset(), err)
	}
	if err := q.Flush(5); err != nil || q.FlushedOffset() != 20 {
		t.Fatalf("second Flush(5): flushed %d, %v", q.FlushedOffset(), err)
	}
	if err := q.Flush(5); err != nil || q.FlushedOffset() != 20 {
		t.Fatalf("third Flush(5) on a 60-byte tail: flushed %d, %v", q.FlushedOffset(), err)
	}
	if err := q.FlushAll(); err != nil || q.FlushedOffset() != 23 {
		t.Fatalf("FlushAll: flushed %d, %v", q.FlushedOffset(), err)
	}
}
