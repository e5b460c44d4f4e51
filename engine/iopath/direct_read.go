package iopath

import "fmt"

// ReadAt reads bytes below WrotePos: from the staging and in-flight buffers
// at and above memLow, from the block cache's ring or ristretto or the
// device below it.
func (a *directAppender) ReadAt(p []byte, off int64) (int, error) {
	return a.readWith(p, off, a.read)
}

// read is ReadAt's step: q from off.
func (a *directAppender) read(q []byte, off int64) (int, error) {
	end := off + int64(len(q))
	lo := a.memLow.Load()
	if end > lo {
		lo = a.readStaged(q, off)
	}
	if off < lo {
		if err := a.readDisk(q[:min(end, lo)-off], off); err != nil {
			return 0, err
		}
	}
	return len(q), nil
}

// readStaged copies the part of file bytes [off, off+len(q)) held by the
// buffers into q and returns the lowest byte the buffers hold (bytes below
// it are final on disk).
func (a *directAppender) readStaged(q []byte, off int64) int64 {
	end := off + int64(len(q))
	a.stageMu.Lock()
	defer a.stageMu.Unlock()
	lo := a.memLow.Load()
	hit := false
	take := func(b *stageBuf) {
		from, to := max(off, b.valid), min(end, b.end)
		if from < to {
			copy(q[from-off:to-off], b.mem[from-b.base:to-b.base])
			hit = true
		}
	}
	for k := 0; k < a.nfly; k++ {
		take(&a.bufs[a.inflight[(a.head+k)%directBuffers]])
	}
	if a.cur >= 0 {
		take(&a.bufs[a.cur])
	}
	if hit {
		a.stagingHits.Add(1)
	}
	return lo
}

// readDisk fills q with file bytes at off, all final on disk, through the
// block cache when there is one, else with aligned O_DIRECT reads.
func (a *directAppender) readDisk(q []byte, off int64) error {
	sp := a.scratch.Get().(*[]byte)
	defer a.scratch.Put(sp)
	buf := *sp
	if a.cache != nil {
		return a.readCached(q, off, buf)
	}
	for len(q) > 0 {
		start := alignDown(off, a.align)
		n := min(int64(len(buf)), alignUp(off+int64(len(q)), a.align)-start)
		if _, err := a.file.ReadAt(buf[:n], start); err != nil {
			return fmt.Errorf("iopath: direct %s: read: %w", a.path, err)
		}
		a.countDeviceRead(int(n))
		c := copy(q, buf[off-start:n])
		q = q[c:]
		off += int64(c)
	}
	return nil
}

// readCached reads block by block: the ring of recently written blocks,
// then ristretto, then the device (caching whole blocks that are final).
func (a *directAppender) readCached(q []byte, off int64, buf []byte) error {
	bs := int64(a.cache.BlockSize())
	for len(q) > 0 {
		blk := off / bs
		start := blk * bs
		if c, ok := a.cache.ReadRecent(a.id, blk, q, off-start); ok {
			a.ringHits.Add(1)
			q = q[c:]
			off += int64(c)
			continue
		}
		data, ok := a.cache.Get(a.id, blk)
		if ok {
			a.cacheHits.Add(1)
		} else {
			// Whether the block is final is decided before reading it: a
			// block read while partly still in a buffer, and retired by the
			// writer before the check below, must not be cached as it was.
			low := a.memLow.Load()
			n := min(bs, a.size-start)
			if _, err := a.file.ReadAt(buf[:n], start); err != nil {
				return fmt.Errorf("iopath: direct %s: read: %w", a.path, err)
			}
			a.countDeviceRead(int(n))
			data = buf[:n]
			if n == bs && start+bs <= low {
				a.cache.Set(a.id, blk, data)
			}
		}
		c := copy(q, data[off-start:])
		q = q[c:]
		off += int64(c)
	}
	return nil
}
