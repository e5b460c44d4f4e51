package consumequeue

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// One dispatcher puts, a flusher flushes, a cleaner deletes old files, and
// readers tail the queue; readers must only ever see complete units.
func TestConcurrentPutReadFlushClean(t *testing.T) {
	const total = 3000
	q := openTestQueue(t, t.TempDir(), 64)
	var done atomic.Bool
	var wg sync.WaitGroup
	errc := make(chan error, 8)

	wg.Add(1)
	go func() { // dispatcher
		defer wg.Done()
		defer done.Store(true)
		for off := int64(0); off < total; off++ {
			if err := q.Put(off, unitFor(off)); err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Add(1)
	go func() { // flusher
		defer wg.Done()
		for !done.Load() {
			if err := q.Flush(0); err != nil {
				errc <- err
				return
			}
		}
	}()
	wg.Add(1)
	go func() { // cleaner: keeps roughly the newest 1000 units
		defer wg.Done()
		for !done.Load() {
			if maxOff := q.MaxOffset(); maxOff > 1000 {
				if _, err := q.DeleteBelowPhy((maxOff - 1000) * 100); err != nil {
					errc <- err
					return
				}
			}
		}
	}()
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() { // reader
			defer wg.Done()
			var buf []Unit
			next := int64(0)
			for next < total {
				us, err := q.Read(next, 32, buf)
				switch {
				case errors.Is(err, ErrRemoved):
					next = max(q.MinOffset(), next+1)
					continue
				case err != nil:
					errc <- err
					return
				}
				for i, u := range us {
					if want := unitFor(next + int64(i)); u != want {
						errc <- errors.New("reader saw a unit that was not written")
						return
					}
				}
				next += int64(len(us))
				buf = us
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if q.MaxOffset() != total || q.MaxPhyOffset() != total*100 {
		t.Fatalf("max/maxPhy = %d/%d", q.MaxOffset(), q.MaxPhyOffset())
	}
}
