package iopath

import "errors"

// jobKind says what a directJob asks of the writer goroutine.
type jobKind uint8

const (
	jobBuffer  jobKind = iota // write a full staging buffer, then free it
	jobTail                   // write Flush's padded tail copy and answer on flushDone
	jobBarrier                // write nothing; answer on flushDone once reached
)

// directJob is one entry of the writer's FIFO queue.
type directJob struct {
	kind jobKind
	buf  int    // jobBuffer: the buffer's index
	off  int64  // file offset of data (a multiple of the alignment)
	data []byte // bytes to write at off (whole aligned blocks)
	end  int64  // the written position once data is on disk
}

// writer is the goroutine that performs the direct path's device writes,
// in queue order. It exits when the queue is closed (Close) or once the
// last span of the segment is written.
func (a *directAppender) writer() {
	defer close(a.writerDone)
	for j := range a.queue {
		if a.do(j) {
			// The segment is full and written: answer a flush queued
			// before the last span retired, and stop.
			for {
				select {
				case j, ok := <-a.queue:
					if !ok {
						return
					}
					a.do(j)
				default:
					return
				}
			}
		}
	}
}

// do performs one job; it reports whether it retired the segment's last
// span.
func (a *directAppender) do(j directJob) (last bool) {
	err := a.sticky.get()
	if err == nil && j.kind != jobBarrier {
		_, werr := a.file.WriteAt(j.data, j.off)
		a.countWrite(len(j.data))
		if werr != nil {
			err = a.fail(werr)
		}
	}
	if err != nil {
		// Stop writing: nothing is written past a hole. Queued buffers stay
		// in the in-flight list, readable; a waiting Append gives up.
		a.deadOnce.Do(func() { close(a.dead) })
	} else if j.end > a.written.Load() {
		a.written.Store(j.end) // only this goroutine stores written
	}
	if j.kind != jobBuffer {
		a.flushDone <- err
		return false
	}
	if err != nil {
		return false
	}
	return a.retire(j.buf)
}

// retire hands buffer i, just written, to the ring of recent blocks and
// back to Append; after the segment's last span it releases the buffers.
func (a *directAppender) retire(i int) (last bool) {
	b := &a.bufs[i]
	if a.cache != nil {
		// Before the buffer leaves the in-flight list: a reader that no
		// longer finds these bytes in a buffer finds them in the ring.
		bs := int64(a.cache.BlockSize())
		for start := alignUp(b.valid, bs); start+bs <= b.end; start += bs {
			a.cache.PutRecent(a.id, start/bs, b.mem[start-b.base:start-b.base+bs])
		}
	}
	a.stageMu.Lock()
	defer a.stageMu.Unlock()
	if a.nfly == 0 || a.inflight[a.head] != i {
		panic("iopath: direct: retired buffer is not the oldest in flight")
	}
	a.head = (a.head + 1) % directBuffers
	a.nfly--
	a.memLow.Store(b.end)
	if b.end == a.size {
		_ = a.releaseBuffersLocked()
		return true
	}
	a.free <- i // capacity directBuffers: never blocks
	return false
}

// releaseBuffers unmaps the staging and flush buffers (once).
func (a *directAppender) releaseBuffers() error {
	a.stageMu.Lock()
	defer a.stageMu.Unlock()
	return a.releaseBuffersLocked()
}

// releaseBuffersLocked: REQUIRES stageMu held, and no Append, Flush or
// writer job that could touch a buffer (the segment is full and written,
// or the appender is closing).
func (a *directAppender) releaseBuffersLocked() error {
	var errs []error
	for i := range a.bufs {
		errs = append(errs, anonUnmap(a.bufs[i].mem))
		a.bufs[i].mem = nil
	}
	errs = append(errs, anonUnmap(a.flushBuf))
	a.flushBuf = nil
	a.cur = -1
	return errors.Join(errs...)
}
