package iopath

import (
	"errors"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

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
	base int64  // jobBuffer: the buffer's span start
	off  int64  // file offset of data (a multiple of the alignment)
	data []byte // bytes to write at off (whole aligned blocks)
	end  int64  // the written position once data is on disk
}

// writer is the goroutine that performs the direct path's device writes,
// in queue order. Buffer jobs that are queued back to back, for
// consecutive spans held by consecutive buffers, are written with one
// pwrite (the buffers are adjacent in memory): when the device is slower
// than the appender, writes grow up to directBuffers-1 spans. Each written
// buffer goes to the retirer goroutine, which copies its blocks into the
// ring and frees it, so the copy overlaps the next device write instead of
// delaying it. It exits when the queue is closed (Close) or once the last
// span of the segment is written, after the retirer has retired every
// buffer handed to it.
func (a *directAppender) writer() {
	retireQ := make(chan int, directBuffers) // every buffer at most once: sends never block
	retired := make(chan struct{})
	go a.retirer(retireQ, retired)
	a.retireQ = retireQ
	defer func() {
		close(retireQ)
		<-retired // the buffers written are retired before the writer counts as done
		close(a.writerDone)
	}()
	var next directJob
	haveNext, open := false, true
	for open || haveNext {
		var j directJob
		if haveNext {
			j, haveNext = next, false
		} else if j, open = <-a.queue; !open {
			return
		}
		batch := append(a.batch[:0], j)
		for j.kind == jobBuffer && open && !haveNext {
			select {
			case n, ok := <-a.queue:
				switch {
				case !ok:
					open = false
				case a.adjacent(batch[len(batch)-1], n):
					batch = append(batch, n)
				default:
					next, haveNext = n, true
				}
				continue
			default:
			}
			break
		}
		if a.do(batch) {
			// The segment is full and written: answer a flush queued
			// behind the last span, and stop.
			for open || haveNext {
				if haveNext {
					a.do(append(a.batch[:0], next))
					haveNext = false
					continue
				}
				select {
				case n, ok := <-a.queue:
					if !ok {
						return
					}
					a.do(append(a.batch[:0], n))
				default:
					return
				}
			}
		}
	}
}

// adjacent reports whether buffer job n continues buffer job p in the file
// and in memory, so that one pwrite can write both.
func (a *directAppender) adjacent(p, n directJob) bool {
	return n.kind == jobBuffer && n.buf == p.buf+1 && p.end == p.base+a.stageCap && n.off == p.end && n.base == n.off
}

// do performs one batch (a single tail or barrier job, or adjacent buffer
// jobs) and hands written buffers to the retirer; it reports whether it
// wrote the segment's last span.
func (a *directAppender) do(batch []directJob) (last bool) {
	first, end := batch[0], batch[len(batch)-1]
	err := a.sticky.get()
	if err == nil && first.kind != jobBarrier {
		data := first.data
		if len(batch) > 1 {
			lo := int64(first.buf)*a.stageCap + first.off - first.base
			hi := int64(end.buf)*a.stageCap + end.end - end.base
			data = a.stageMem[lo:hi]
		}
		var werr error
		if a.dsync {
			_, werr = vfs.WriteAtDSync(a.file, data, first.off, false)
		} else {
			_, werr = a.file.WriteAt(data, first.off)
		}
		a.countWrite(len(data))
		if werr != nil {
			err = a.fail(werr)
		}
	}
	if err != nil {
		// Stop writing: nothing is written past a hole. Queued buffers stay
		// in the in-flight list, readable; a waiting Append gives up.
		a.deadOnce.Do(func() { close(a.dead) })
	} else if end.end > a.written.Load() {
		a.written.Store(end.end) // only this goroutine stores written
	}
	if first.kind != jobBuffer {
		a.flushDone <- err
		return false
	}
	if err != nil {
		return false
	}
	for _, j := range batch {
		a.retireQ <- j.buf
	}
	return end.end == a.size
}

// retirer retires the buffers the writer wrote, in the order written,
// until q is closed; then it closes done.
func (a *directAppender) retirer(q <-chan int, done chan<- struct{}) {
	defer close(done)
	for i := range q {
		a.retire(i)
	}
}

// retire hands buffer i, just written, to the ring of recent blocks and
// back to Append; after the segment's last span it releases the buffers.
// Called by the retirer goroutine only.
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
	for i := range a.bufs {
		a.bufs[i].mem = nil
	}
	err1, err2 := anonUnmap(a.stageMem), anonUnmap(a.flushBuf)
	a.stageMem, a.flushBuf = nil, nil
	a.cur = -1
	return errors.Join(err1, err2)
}
