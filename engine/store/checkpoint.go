package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// checkpointSize is the checkpoint file's length (one page, RocketMQ
// StoreCheckpoint maps 4096 bytes).
const checkpointSize = 4096

// Checkpoint is the content of <root>/checkpoint: five big-endian int64s at
// offsets 0, 8, 16, 24, 32 of a 4096-byte file.
type Checkpoint struct {
	// PhysicMsgTimestamp is the store time of a record known flushed to the
	// commit log (every record before it is durable).
	PhysicMsgTimestamp int64
	// LogicsMsgTimestamp is the store time of a record whose consume-queue
	// unit, and every earlier one, was durable at the last thorough
	// consume-queue flush.
	LogicsMsgTimestamp int64
	// IndexMsgTimestamp is the end time of the last index file flushed when
	// full.
	IndexMsgTimestamp int64
	// MasterFlushedOffset is kept for HA (always 0 here).
	MasterFlushedOffset int64
	// ConfirmPhyOffset is the commit-log offset consumers could see (the
	// dispatcher's end) when the checkpoint was written.
	ConfirmPhyOffset int64
}

// MinTimestamp is RocketMQ getMinTimestamp: min(physic, logics) − 3 s,
// floored at 0. Abnormal recovery starts at a segment whose first record is
// no newer.
func (c Checkpoint) MinTimestamp() int64 { return c.minTimestamp(3000) }

func (c Checkpoint) minTimestamp(marginMs int64) int64 {
	return max(0, min(c.PhysicMsgTimestamp, c.LogicsMsgTimestamp)-marginMs)
}

// MinTimestampIndex is getMinTimestampIndex: MinTimestamp bounded by the
// index timestamp (used with MessageIndexSafe).
func (c Checkpoint) MinTimestampIndex() int64 {
	return min(c.MinTimestamp(), c.IndexMsgTimestamp)
}

func (c Checkpoint) encode(b []byte) {
	clear(b)
	binary.BigEndian.PutUint64(b[0:], uint64(c.PhysicMsgTimestamp))
	binary.BigEndian.PutUint64(b[8:], uint64(c.LogicsMsgTimestamp))
	binary.BigEndian.PutUint64(b[16:], uint64(c.IndexMsgTimestamp))
	binary.BigEndian.PutUint64(b[24:], uint64(c.MasterFlushedOffset))
	binary.BigEndian.PutUint64(b[32:], uint64(c.ConfirmPhyOffset))
}

func decodeCheckpoint(b []byte) Checkpoint {
	return Checkpoint{
		PhysicMsgTimestamp:  int64(binary.BigEndian.Uint64(b[0:])),
		LogicsMsgTimestamp:  int64(binary.BigEndian.Uint64(b[8:])),
		IndexMsgTimestamp:   int64(binary.BigEndian.Uint64(b[16:])),
		MasterFlushedOffset: int64(binary.BigEndian.Uint64(b[24:])),
		ConfirmPhyOffset:    int64(binary.BigEndian.Uint64(b[32:])),
	}
}

// CheckpointPath is the checkpoint file of a store root.
func CheckpointPath(root string) string { return filepath.Join(root, "checkpoint") }

// ReadCheckpoint reads a store's checkpoint file; a missing or short file
// reads as zeros.
func ReadCheckpoint(fsys vfs.FS, root string) (Checkpoint, error) {
	f, err := fsys.OpenFile(CheckpointPath(root), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return Checkpoint{}, nil
	}
	if err != nil {
		return Checkpoint{}, fmt.Errorf("store: open checkpoint: %w", err)
	}
	defer f.Close()
	var b [40]byte
	n, err := f.ReadAt(b[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return Checkpoint{}, fmt.Errorf("store: read checkpoint: %w", err)
	}
	if n < len(b) {
		return Checkpoint{}, nil
	}
	return decodeCheckpoint(b[:]), nil
}

// checkpointFile rewrites the whole page and fdatasyncs it.
// Write may be called from several goroutines (serialized by mu).
type checkpointFile struct {
	mu  sync.Mutex
	f   vfs.File
	buf []byte // guarded by mu
}

func openCheckpointFile(fsys vfs.FS, root string) (*checkpointFile, error) {
	f, err := fsys.OpenFile(CheckpointPath(root), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: open checkpoint: %w", err)
	}
	return &checkpointFile{f: f, buf: make([]byte, checkpointSize)}, nil
}

func (c *checkpointFile) write(cp Checkpoint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return ErrClosed
	}
	cp.encode(c.buf)
	if _, err := c.f.WriteAt(c.buf, 0); err != nil {
		return fmt.Errorf("store: write checkpoint: %w", err)
	}
	if err := c.f.Datasync(); err != nil {
		return fmt.Errorf("store: sync checkpoint: %w", err)
	}
	return nil
}

func (c *checkpointFile) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}
