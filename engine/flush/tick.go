package flush

import (
	"context"
	"runtime/pprof"
	"time"
)

// ticker runs fn every interval on its own goroutine until halt. fn runs
// once at a time; halt waits for a running fn to return.
type ticker struct {
	stop chan struct{}
	done chan struct{}
}

// startTicker starts fn's goroutine, labelled for profiles.
func startTicker(label string, interval time.Duration, fn func()) *ticker {
	t := &ticker{stop: make(chan struct{}), done: make(chan struct{})}
	go pprof.Do(context.Background(), pprof.Labels("brokerlab", label), func(context.Context) {
		defer close(t.done)
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tk.C:
				fn()
			}
		}
	})
	return t
}

// halt stops the goroutine and waits for it. Call once.
func (t *ticker) halt() {
	close(t.stop)
	<-t.done
}

// unflushed reports whether f holds appended bytes beyond flushed.
func unflushed(f Flusher, flushed int64) bool { return f.WrittenPos() > flushed }
