package consumequeue

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

const testTopic = "TopicTest"

func smallConfig(units int) Config { return Config{UnitsPerFile: units} }

func openTestQueue(t *testing.T, root string, units int) *Queue {
	t.Helper()
	q, err := OpenQueue(vfs.Default, root, testTopic, 3, smallConfig(units))
	if err != nil {
		t.Fatalf("OpenQueue: %v", err)
	}
	if err := q.Recover(); err != nil {
		t.Fatalf("Recover: %v", err)
	}
	t.Cleanup(func() { _ = q.Close() })
	return q
}

// unitFor is the unit test queues store at queue offset off.
func unitFor(off int64) Unit {
	return Unit{PhyOffset: off * 100, Size: 100, TagsCode: off}
}

func putRange(t *testing.T, q *Queue, from, to int64) {
	t.Helper()
	for off := from; off < to; off++ {
		if err := q.Put(off, unitFor(off)); err != nil {
			t.Fatalf("Put(%d): %v", off, err)
		}
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("ReadDir: %v", err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func readFileBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile: %v", err)
	}
	return b
}

func writeFileAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func segPath(q *Queue, start int64) string { return filepath.Join(q.Dir(), fileName(start)) }
