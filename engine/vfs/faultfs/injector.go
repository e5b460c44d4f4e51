// Package faultfs wraps a vfs.FS so that tests can make chosen file
// operations fail (EIO, ENOSPC, any error) or run slowly, in the spirit of
// pebble's errorfs.
//
// An Injector holds Rules. Every operation performed through a wrapped FS,
// or through a File it returned, first asks the Injector: each Rule whose Op
// and path filter match counts the call and, if its Trigger fires, adds its
// Delay, waits on its Hold channel if it has one, and (the first firing
// rule with a non-nil Err wins) makes the
// operation fail with an error wrapping both ErrInjected and the Rule's Err.
// An operation that fails this way is not performed at all.
//
// Concurrency: an Injector is safe for concurrent use; rules may be added,
// removed and cleared while wrapped files are in use. Wrapped files have the
// concurrency contract of the files they wrap.
package faultfs

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

// ErrInjected is wrapped by every error an Injector produces.
var ErrInjected = errors.New("faultfs: injected fault")

// allOps are the operations the wrapper reports; Calls counts each.
var allOps = []vfs.Op{
	vfs.OpOpen, vfs.OpWrite, vfs.OpRead, vfs.OpSync, vfs.OpMsync,
	vfs.OpAllocate, vfs.OpMap, vfs.OpTruncate, vfs.OpRemove, vfs.OpRename,
	vfs.OpSyncDir,
}

type triggerMode uint8

const (
	triggerAlways triggerMode = iota
	triggerFromNth
	triggerOnlyNth
	triggerProbability
)

// Trigger decides which of a rule's matching calls fire. The zero value is
// Always.
type Trigger struct {
	mode triggerMode
	n    uint64
	p    float64
}

// Always fires on every matching call.
func Always() Trigger { return Trigger{mode: triggerAlways} }

// FromNth fires on the nth matching call (counting from 1, since the rule was
// added) and on every later one.
func FromNth(n uint64) Trigger { return Trigger{mode: triggerFromNth, n: n} }

// OnlyNth fires on the nth matching call only.
func OnlyNth(n uint64) Trigger { return Trigger{mode: triggerOnlyNth, n: n} }

// WithProbability fires on each matching call with probability p, drawn from
// the Injector's seeded generator (so a run is repeatable for a given seed
// and call order).
func WithProbability(p float64) Trigger { return Trigger{mode: triggerProbability, p: p} }

func (t Trigger) String() string {
	switch t.mode {
	case triggerFromNth:
		return fmt.Sprintf("from call %d", t.n)
	case triggerOnlyNth:
		return fmt.Sprintf("only call %d", t.n)
	case triggerProbability:
		return fmt.Sprintf("with p=%g", t.p)
	default:
		return "always"
	}
}

// Rule describes one fault.
type Rule struct {
	// Op is the operation to match; "" matches every operation.
	Op vfs.Op
	// PathContains restricts the rule to paths containing it ("" = any).
	// For Rename the path matched is "old -> new".
	PathContains string
	// When selects which matching calls fire (zero value: every call).
	When Trigger
	// Err, if non-nil, is the error a firing call returns (wrapped with
	// ErrInjected), for example syscall.EIO or syscall.ENOSPC.
	Err error
	// Delay is slept before the call proceeds (or fails), e.g. a slow fsync.
	Delay time.Duration
	// Hold, if non-nil, blocks a firing call (after its Delay) until the
	// channel is closed: a stalled fsync that lasts exactly as long as the
	// test needs it to, with no guess at a duration.
	Hold <-chan struct{}
}

// RuleID identifies an added rule.
type RuleID uint64

type activeRule struct {
	id      RuleID
	rule    Rule
	matched uint64 // guarded by Injector.mu
	fired   uint64 // guarded by Injector.mu
}

// Injector decides, per operation, whether to inject a fault.
type Injector struct {
	calls  map[vfs.Op]*atomic.Uint64 // fixed at construction; read-only map
	nrules atomic.Int64              // len(rules), read without mu on the fast path

	mu     sync.Mutex
	rules  []*activeRule
	nextID RuleID
	rng    *rand.Rand
	fired  map[RuleID]uint64 // fired counts, kept after a rule is removed
}

// NewInjector returns an Injector with no rules whose probability triggers
// draw from a generator seeded with seed.
func NewInjector(seed uint64) *Injector {
	in := &Injector{
		calls: make(map[vfs.Op]*atomic.Uint64, len(allOps)),
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		fired: map[RuleID]uint64{},
	}
	for _, op := range allOps {
		in.calls[op] = new(atomic.Uint64)
	}
	return in
}

// Add installs r and returns its id.
func (in *Injector) Add(r Rule) RuleID {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.nextID++
	in.rules = append(in.rules, &activeRule{id: in.nextID, rule: r})
	in.nrules.Store(int64(len(in.rules)))
	return in.nextID
}

// Remove uninstalls the rule id; it reports whether the rule was installed.
func (in *Injector) Remove(id RuleID) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for i, r := range in.rules {
		if r.id == id {
			in.rules = append(in.rules[:i], in.rules[i+1:]...)
			in.nrules.Store(int64(len(in.rules)))
			return true
		}
	}
	return false
}

// Clear uninstalls every rule.
func (in *Injector) Clear() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rules = nil
	in.nrules.Store(0)
}

// Calls returns how many op calls went through the injector (faulted or
// not) since it was created.
func (in *Injector) Calls(op vfs.Op) uint64 {
	if c := in.calls[op]; c != nil {
		return c.Load()
	}
	return 0
}

// Fired returns how many times rule id fired (also after it was removed).
func (in *Injector) Fired(id RuleID) uint64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.fired[id]
}

// Check counts one op call on path and applies the installed rules: it
// sleeps for the sum of the firing rules' delays and returns the injected
// error, or nil if the operation should proceed. Wrapped files call it;
// other wrappers may too.
func (in *Injector) Check(op vfs.Op, path string) error {
	if c := in.calls[op]; c != nil {
		c.Add(1)
	}
	if in.nrules.Load() == 0 {
		return nil
	}
	var delay time.Duration
	var err error
	var holds []<-chan struct{}
	in.mu.Lock()
	for _, r := range in.rules {
		if r.rule.Op != "" && r.rule.Op != op {
			continue
		}
		if r.rule.PathContains != "" && !strings.Contains(path, r.rule.PathContains) {
			continue
		}
		r.matched++
		var fire bool
		switch r.rule.When.mode {
		case triggerAlways:
			fire = true
		case triggerFromNth:
			fire = r.matched >= r.rule.When.n
		case triggerOnlyNth:
			fire = r.matched == r.rule.When.n
		case triggerProbability:
			fire = in.rng.Float64() < r.rule.When.p
		}
		if !fire {
			continue
		}
		r.fired++
		in.fired[r.id]++
		delay += r.rule.Delay
		if r.rule.Hold != nil {
			holds = append(holds, r.rule.Hold)
		}
		if err == nil && r.rule.Err != nil {
			err = fmt.Errorf("%w (%s %s, rule %d %s): %w", ErrInjected, op, path, r.id, r.rule.When, r.rule.Err)
		}
	}
	in.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	for _, h := range holds {
		<-h
	}
	return err
}
