package store

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/record"
	"github.com/brokerlab/brokerlab/engine/segment"
)

// pauseDispatch holds the reput loop: when it returns no dispatch round is
// running and none starts until resume is called (at the latest by the
// test's cleanup, before the store is closed by a deferred close).
func pauseDispatch(t *testing.T, s *Store) (resume func()) {
	t.Helper()
	s.disp.paused.Store(true)
	s.disp.mu.Lock() // a round in progress finishes; later ones see paused
	s.disp.mu.Unlock()
	var once sync.Once
	resume = func() {
		once.Do(func() {
			s.disp.paused.Store(false)
			s.wakeDispatcher()
		})
	}
	t.Cleanup(resume)
	return resume
}

// keyedMsg is what a dispatch-retention test remembers of a put.
type keyedMsg struct {
	queueID    int32
	queueOff   int64
	phys       int64
	key        string
	afterPause bool
}

const cleanDispatchTopic = "CD"

// putKeyed puts n messages of ~1 KiB alternating over queues 0 and 1, each
// with a KEYS entry of its own.
func putKeyed(t *testing.T, s *Store, first, n int, afterPause bool) []keyedMsg {
	t.Helper()
	out := make([]keyedMsg, 0, n)
	for i := first; i < first+n; i++ {
		m := fixedMsg(cleanDispatchTopic, int32(i%2), 1000, "")
		key := fmt.Sprintf("key-%d", i)
		m.Properties = record.EncodeProperties(map[string]string{record.PropertyKeys: key})
		r := mustPut(t, s, m)
		out = append(out, keyedMsg{queueID: m.QueueID, queueOff: r.QueueOffset, phys: r.WroteOffset, key: key, afterPause: afterPause})
	}
	return out
}

// heldScenario opens a store over path (cfg adjusted by tweak), puts about
// two segments' worth and waits for their dispatch, pauses dispatch, puts
// eight segments' more, and returns the store, everything put and the
// dispatched offset the pause held.
func heldScenario(t *testing.T, path iopath.Kind, tweak func(*Config)) (*Store, []keyedMsg, int64, func()) {
	t.Helper()
	cfg := testConfig(t, t.TempDir(), path, flush.Async)
	tweak(&cfg)
	s := openStore(t, cfg)
	segSize := s.CommitLog().SegmentSize()
	perSeg := int(segSize / 1100)
	sent := putKeyed(t, s, 0, 2*perSeg, false)
	waitDispatched(t, s)
	resume := pauseDispatch(t, s)
	held := s.DispatchedOffset()
	sent = append(sent, putKeyed(t, s, len(sent), 8*perSeg, true)...)
	if held < segSize {
		t.Fatalf("fixture: dispatched only to %d before the pause, segments of %d", held, segSize)
	}
	if got := s.DispatchedOffset(); got != held {
		t.Fatalf("dispatch moved from %d to %d while paused", held, got)
	}
	if n := len(s.CommitLog().Segments()); n < 8 {
		t.Fatalf("fixture: %d segments", n)
	}
	return s, sent, held, resume
}

// checkHeld: the pass deleted exactly the segments wholly below the
// dispatched offset (all of them due) and said it waited.
func checkHeld(t *testing.T, s *Store, rep CleanReport, err error, held int64, waits uint64) {
	t.Helper()
	segSize := s.CommitLog().SegmentSize()
	if err != nil {
		t.Fatalf("clean pass: %v", err)
	}
	want := held - held%segSize
	if minOff := s.CommitLog().MinOffset(); minOff != want || rep.MinOffset != want {
		t.Fatalf("min offset %d (report %d), want %d: the segment holding the dispatched offset %d and those after it must stay",
			minOff, rep.MinOffset, want, held)
	}
	if !rep.WaitedForDispatch || rep.DispatchedOffset != held {
		t.Fatalf("report does not say the pass waited for dispatch at %d: %+v", held, rep)
	}
	st := s.Stats()
	if st.CleanWaitsForDispatch != waits {
		t.Fatalf("CleanWaitsForDispatch %d, want %d", st.CleanWaitsForDispatch, waits)
	}
	if st.DispatchSkips != 0 || st.DispatchSkippedBytes != 0 {
		t.Fatalf("dispatch skipped %d times (%d bytes)", st.DispatchSkips, st.DispatchSkippedBytes)
	}
}

// checkAllFound: after dispatch caught up, every message still in the
// commit log is in its consume queue at its queue offset and in the key
// index; with pausedStay every message put during the pause is still in
// the log.
func checkAllFound(t *testing.T, s *Store, sent []keyedMsg, pausedStay bool) {
	t.Helper()
	minOff := s.CommitLog().MinOffset()
	found := 0
	for _, m := range sent {
		if m.phys < minOff {
			if m.afterPause && pausedStay {
				t.Fatalf("message %s at %d, put while dispatch was paused, was deleted (min offset %d)", m.key, m.phys, minOff)
			}
			continue
		}
		res := get(t, s, cleanDispatchTopic, m.queueID, m.queueOff, 1, 1<<20, nil)
		if res.Status != Found || len(res.Messages) != 1 {
			t.Fatalf("message %s (queue %d offset %d, phys %d): %v, queue [%d, %d)", m.key, m.queueID, m.queueOff, m.phys,
				res.Status, res.MinOffset, res.MaxOffset)
		}
		if got := res.Messages[0]; got.PhysOffset != m.phys || got.QueueOffset != m.queueOff {
			t.Fatalf("queue %d offset %d: unit at phys %d queue offset %d, want phys %d", m.queueID, m.queueOff,
				got.PhysOffset, got.QueueOffset, m.phys)
		}
		q, err := s.QueryMessage(cleanDispatchTopic, m.key, 4, 0, math.MaxInt64)
		if err != nil || !slices.Contains(q.Offsets, m.phys) {
			t.Fatalf("key %s: index gives %v (%v), want %d", m.key, q.Offsets, err, m.phys)
		}
		found++
	}
	if found == 0 {
		t.Fatal("no message left to check")
	}
}

// Retention by RetainBytes never deletes a segment the dispatcher has not
// passed: with dispatch paused the pass deletes the dispatched segments,
// stops at the first undispatched one and counts the wait; once dispatch
// resumes every message is in its consume queue and the index, and the
// next pass deletes down to RetainBytes.
func TestCleanRetainBytesWaitsForDispatch(t *testing.T) {
	for _, path := range iopath.Kinds() {
		t.Run("path="+string(path), func(t *testing.T) {
			var segSize, retain int64
			s, sent, held, resume := heldScenario(t, path, func(c *Config) {
				segSize = c.CommitLog.SegmentSize
				retain = 2 * segSize
				c.RetainBytes = retain
			})
			defer mustClose(t, s)
			if beyond := s.CommitLog().MaxOffset() - retain; beyond < held+segSize {
				t.Fatalf("fixture: only up to %d is beyond retention, dispatched %d", beyond, held)
			}

			rep, err := s.CleanOnce(at(10))
			checkHeld(t, s, rep, err, held, 1)
			if rep.RetainedDeleted != int(held/segSize) || rep.SegmentsDeleted != rep.RetainedDeleted {
				t.Fatalf("deleted %d (retained %d), want the %d dispatched segments", rep.SegmentsDeleted, rep.RetainedDeleted, held/segSize)
			}
			rep, err = s.CleanOnce(at(10))
			checkHeld(t, s, rep, err, held, 2)
			if rep.SegmentsDeleted != 0 {
				t.Fatalf("second paused pass deleted %d segments", rep.SegmentsDeleted)
			}

			resume()
			waitDispatched(t, s)
			checkAllFound(t, s, sent, true)

			rep, err = s.CleanOnce(at(10))
			if err != nil || rep.WaitedForDispatch || rep.RetainedDeleted == 0 {
				t.Fatalf("pass after dispatch caught up: %+v %v", rep, err)
			}
			if kept := s.CommitLog().MaxOffset() - s.CommitLog().MinOffset(); kept < retain || kept >= retain+segSize {
				t.Fatalf("kept %d bytes with RetainBytes %d, segments of %d", kept, retain, segSize)
			}
			st := s.Stats()
			if st.CleanWaitsForDispatch != 2 || st.DispatchSkips != 0 || st.DispatchErrors != 0 {
				t.Fatalf("waits %d, skips %d, dispatch errors %d", st.CleanWaitsForDispatch, st.DispatchSkips, st.DispatchErrors)
			}
			checkAllFound(t, s, sent, false)
			for q := int32(0); q < 2; q++ {
				qmin := s.GetMinOffsetInQueue(cleanDispatchTopic, q)
				if qmin <= 0 {
					t.Fatalf("queue %d: min offset %d after retention", q, qmin)
				}
				expectStatus(t, get(t, s, cleanDispatchTopic, q, 0, 1, 1<<20, nil), OffsetTooSmall, qmin)
			}
		})
	}
}

// Expiry by age (FileReservedTime of 1 ns at a DeleteWhen hour) and forced
// cleaning (disk use above DiskSpaceCleanForciblyRatio) wait for dispatch
// the same way; once it has caught up they delete every segment but the
// active one.
func TestCleanExpiryWaitsForDispatch(t *testing.T) {
	now := time.Now().Add(time.Minute)
	for _, mode := range []string{"time", "forced"} {
		for _, path := range iopath.Kinds() {
			t.Run(mode+"/path="+string(path), func(t *testing.T) {
				s, sent, held, resume := heldScenario(t, path, func(c *Config) {
					c.DeleteFilesBatchMax = 100
					if mode == "time" {
						c.FileReservedTime = time.Nanosecond
						c.DeleteWhen = fmt.Sprintf("%02d", now.Hour())
					} else {
						c.DiskUsage = func(string) (float64, error) { return 0.86, nil }
					}
				})
				defer mustClose(t, s)

				rep, err := s.CleanOnce(now)
				checkHeld(t, s, rep, err, held, 1)
				if mode == "time" && (!rep.TimeToDelete || rep.CleanImmediately) ||
					mode == "forced" && !rep.CleanImmediately {
					t.Fatalf("%s: %+v", mode, rep)
				}
				if rep.SegmentsDeleted == 0 {
					t.Fatalf("no dispatched segment deleted: %+v", rep)
				}

				resume()
				waitDispatched(t, s)
				checkAllFound(t, s, sent, true)

				rep, err = s.CleanOnce(now)
				if err != nil || rep.WaitedForDispatch || rep.SegmentsDeleted == 0 {
					t.Fatalf("pass after dispatch caught up: %+v %v", rep, err)
				}
				segs := s.CommitLog().Segments()
				if len(segs) != 1 {
					t.Fatalf("%d segments left, want only the active one", len(segs))
				}
				if st := s.Stats(); st.CleanWaitsForDispatch != 1 || st.DispatchSkips != 0 || st.DispatchErrors != 0 {
					t.Fatalf("waits %d, skips %d, dispatch errors %d", st.CleanWaitsForDispatch, st.DispatchSkips, st.DispatchErrors)
				}
				checkAllFound(t, s, sent, false)
			})
		}
	}
}

// The cleaner's wait is logged at most once per cleanWaitLogEvery, with the
// number of waiting passes not logged.
func TestCleanWaitLogRateLimited(t *testing.T) {
	var log lineLog
	s, _, held, _ := heldScenario(t, iopath.Pwrite, func(c *Config) {
		c.RetainBytes = 2 * c.CommitLog.SegmentSize
		c.Logger = log.logger()
	})
	defer mustClose(t, s)
	const passes = 5
	for i := range passes {
		rep, err := s.CleanOnce(at(10))
		checkHeld(t, s, rep, err, held, uint64(i+1))
	}
	if n := log.count("cleaning waits for dispatch"); n != 1 {
		t.Fatalf("%d wait lines logged in %d passes, want 1", n, passes)
	}
	// Back-date the last line: the next waiting pass logs again and says
	// how many were not logged.
	s.st.cleanWaitLoggedAt.Add(-int64(cleanWaitLogEvery))
	rep, err := s.CleanOnce(at(10))
	checkHeld(t, s, rep, err, held, passes+1)
	if n := log.count("cleaning waits for dispatch"); n != 2 {
		t.Fatalf("%d wait lines logged after the interval, want 2", n)
	}
	if !log.has("waitsNotLogged=4") {
		t.Fatalf("the second line does not count the 4 passes not logged:\n%s", log.String())
	}
}

// lineLog collects a store's log lines in text form.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineLog) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *lineLog) count(s string) int { return strings.Count(l.String(), s) }

func (l *lineLog) has(s string) bool { return strings.Contains(l.String(), s) }

// Segments that vanish under a running store before dispatch reached them
// (here: deleted behind the cleaner's back while dispatch is paused) make
// the dispatcher skip to the new min offset, and the skip is counted and
// logged; a fresh slave whose log begins at its master's last segment is
// not a skip.
func TestDispatchSkipCounted(t *testing.T) {
	t.Run("head deleted", func(t *testing.T) {
		var log lineLog
		s, _, held, resume := heldScenario(t, iopath.Pwrite, func(c *Config) { c.Logger = log.logger() })
		defer mustClose(t, s)
		segSize := s.CommitLog().SegmentSize()
		segEnd := held - held%segSize + segSize
		n, err := s.CommitLog().DeleteOldest(math.MaxInt, func(seg *segment.Segment) bool { return seg.End() <= segEnd })
		if err != nil || n != int(segEnd/segSize) {
			t.Fatalf("deleted %d segments: %v", n, err)
		}
		resume()
		waitDispatched(t, s)
		st := s.Stats()
		if st.DispatchSkips != 1 || st.DispatchSkippedBytes != uint64(segEnd-held) {
			t.Fatalf("skips %d (%d bytes), want 1 (%d bytes)", st.DispatchSkips, st.DispatchSkippedBytes, segEnd-held)
		}
		if !log.has("deleted before they were dispatched") {
			t.Fatalf("the skip was not logged:\n%s", log.String())
		}
	})
	t.Run("fresh slave", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		cfg := testConfig(t, t.TempDir(), iopath.Pwrite, flush.Async)
		master := openStore(t, cfg)
		defer mustClose(t, master)
		want := putRandom(t, rng, master, 150, 0)
		slave := openStore(t, slaveConfig(t, cfg))
		defer mustClose(t, slave)
		slave.SetSlave(true)
		shipReplica(t, rng, master, slave, false)
		if slave.MinPhyOffset() == 0 {
			t.Fatal("fixture: the slave's log starts at 0")
		}
		var held []stored
		for _, w := range want {
			if w.phys >= slave.MinPhyOffset() {
				held = append(held, w)
			}
		}
		checkServes(t, slave, held)
		if st := slave.Stats(); st.DispatchSkips != 0 || st.DispatchSkippedBytes != 0 {
			t.Fatalf("fresh slave: %d skips (%d bytes)", st.DispatchSkips, st.DispatchSkippedBytes)
		}
	})
}
