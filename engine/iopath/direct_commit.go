package iopath

import "time"

// commitLoop is the direct path's counterpart of the pool path's background
// commit (RocketMQ's CommitRealTimeService, whose thorough interval is also
// CommitInterval): every interval, bytes appended but held only in the
// current staging buffer are written — the padded tail, as Flush writes
// it, without the fdatasync. CommittedPos, what a crash of the process
// cannot take back and so what the store lets consumers see, then trails
// appends by about one interval even when nothing flushes and the buffer is
// far from full (without it, a trickle of async appends would stay
// invisible until the 10 s thorough flush). A Flush in progress writes the
// tail anyway: the loop skips its turn. It ends once the segment is full
// and written, or at Close.
func (a *directAppender) commitLoop(interval time.Duration) {
	defer close(a.commitDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-a.commitStop:
			return
		case <-t.C:
		}
		if a.written.Load() >= a.size {
			return // full and written: nothing will ever be staged again
		}
		a.commitTail()
	}
}

// commitTail writes the unwritten tail if there is one and nobody else is
// writing it (a Flush or Close).
func (a *directAppender) commitTail() {
	if !a.life.TryRLock() {
		return // closing
	}
	defer a.life.RUnlock()
	if a.closed || a.sticky.get() != nil || a.written.Load() >= a.wrote.Load() {
		return
	}
	if !a.flushMu.TryLock() {
		return
	}
	defer a.flushMu.Unlock()
	w, base, err := a.writeTail()
	if err == nil && base >= 0 {
		a.markClean(base, alignDown(w, a.align))
	}
}

// stopCommit ends commitLoop and waits for it (idempotent).
func (a *directAppender) stopCommit() {
	if a.commitStop == nil {
		return
	}
	a.commitOnce.Do(func() { close(a.commitStop) })
	<-a.commitDone
}
