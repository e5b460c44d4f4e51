package faultfs

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/vfs"
)

func TestTriggers(t *testing.T) {
	cases := []struct {
		name string
		when Trigger
		want []bool // fired?, per call 1..len
	}{
		{"always", Always(), []bool{true, true, true}},
		{"zero value is always", Trigger{}, []bool{true, true}},
		{"from 3rd", FromNth(3), []bool{false, false, true, true, true}},
		{"only 2nd", OnlyNth(2), []bool{false, true, false, false}},
		{"p=0", WithProbability(0), []bool{false, false, false}},
		{"p=1", WithProbability(1), []bool{true, true, true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := NewInjector(1)
			id := in.Add(Rule{Op: vfs.OpSync, When: c.when, Err: syscall.EIO})
			for i, want := range c.want {
				err := in.Check(vfs.OpSync, "f")
				if got := err != nil; got != want {
					t.Fatalf("call %d: fired=%v, want %v (err %v)", i+1, got, want, err)
				}
				if err != nil && (!errors.Is(err, syscall.EIO) || !errors.Is(err, ErrInjected)) {
					t.Fatalf("error %v does not wrap EIO and ErrInjected", err)
				}
			}
			var n uint64
			for _, w := range c.want {
				if w {
					n++
				}
			}
			if in.Fired(id) != n {
				t.Fatalf("Fired = %d, want %d", in.Fired(id), n)
			}
			if in.Calls(vfs.OpSync) != uint64(len(c.want)) {
				t.Fatalf("Calls = %d, want %d", in.Calls(vfs.OpSync), len(c.want))
			}
		})
	}
}

func TestProbabilityIsSeeded(t *testing.T) {
	run := func(seed uint64) []bool {
		in := NewInjector(seed)
		in.Add(Rule{Op: vfs.OpWrite, When: WithProbability(0.5), Err: syscall.EIO})
		out := make([]bool, 1000)
		for i := range out {
			out[i] = in.Check(vfs.OpWrite, "f") != nil
		}
		return out
	}
	a, b := run(7), run(7)
	fired := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different decision at call %d", i)
		}
		if a[i] {
			fired++
		}
	}
	if fired < 350 || fired > 650 {
		t.Fatalf("p=0.5 fired %d of 1000 times", fired)
	}
}

func TestMatchingAndRuleLifecycle(t *testing.T) {
	in := NewInjector(1)
	if err := in.Check(vfs.OpWrite, "a.log"); err != nil {
		t.Fatal(err)
	}
	idPath := in.Add(Rule{Op: vfs.OpWrite, PathContains: "b.", Err: syscall.ENOSPC})
	idAny := in.Add(Rule{Err: syscall.EIO, When: OnlyNth(100)}) // any op
	if err := in.Check(vfs.OpWrite, "a.log"); err != nil {
		t.Fatalf("path filter ignored: %v", err)
	}
	if err := in.Check(vfs.OpRead, "b.log"); err != nil {
		t.Fatalf("op filter ignored: %v", err)
	}
	if err := in.Check(vfs.OpWrite, "b.log"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want ENOSPC, got %v", err)
	}
	if !in.Remove(idPath) || in.Remove(idPath) {
		t.Fatal("Remove: want true then false")
	}
	if err := in.Check(vfs.OpWrite, "b.log"); err != nil {
		t.Fatalf("removed rule still fires: %v", err)
	}
	if in.Fired(idPath) != 1 {
		t.Fatalf("Fired after remove = %d", in.Fired(idPath))
	}
	in.Add(Rule{Op: vfs.OpSync, Err: syscall.EIO})
	in.Clear()
	if err := in.Check(vfs.OpSync, "x"); err != nil {
		t.Fatalf("Clear left a rule: %v", err)
	}
	if in.Fired(idAny) != 0 {
		t.Fatalf("OnlyNth(100) fired early")
	}
	if got := in.Calls(vfs.OpWrite); got != 4 {
		t.Fatalf("Calls(write) = %d, want 4", got)
	}
}

func TestFirstErrorWinsAndDelay(t *testing.T) {
	in := NewInjector(1)
	in.Add(Rule{Op: vfs.OpSync, Delay: 20 * time.Millisecond}) // slow, no error
	in.Add(Rule{Op: vfs.OpSync, Err: syscall.ENOSPC})
	in.Add(Rule{Op: vfs.OpSync, Err: syscall.EIO})
	start := time.Now()
	err := in.Check(vfs.OpSync, "f")
	if !errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EIO) {
		t.Fatalf("want only ENOSPC, got %v", err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("delay not applied: %v", el)
	}
}

func TestWrappedFileRoutesEveryOp(t *testing.T) {
	dir := t.TempDir()
	in := NewInjector(1)
	fs := Wrap(vfs.Default, in)
	name := filepath.Join(dir, "seg")

	f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Allocate(8192); err != nil {
		t.Fatal(err)
	}
	m, err := f.Map(8192)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Unmap(m)

	ops := []struct {
		op  vfs.Op
		run func() error
	}{
		{vfs.OpWrite, func() error { _, err := f.WriteAt([]byte("x"), 0); return err }},
		{vfs.OpRead, func() error { _, err := f.ReadAt(make([]byte, 1), 0); return err }},
		{vfs.OpSync, f.Datasync},
		{vfs.OpMsync, func() error { return f.Msync(m[:4096]) }},
		{vfs.OpAllocate, func() error { return f.Allocate(8192) }},
		{vfs.OpMap, func() error {
			b, err := f.Map(4096)
			if err == nil {
				f.Unmap(b)
			}
			return err
		}},
		{vfs.OpTruncate, func() error { return f.Truncate(8192) }},
		{vfs.OpOpen, func() error {
			g, err := fs.OpenFile(name, os.O_RDWR, 0)
			if err == nil {
				g.Close()
			}
			return err
		}},
		{vfs.OpSyncDir, func() error { return fs.SyncDir(dir) }},
		{vfs.OpRename, func() error { return fs.Rename(name, name) }},
		{vfs.OpRemove, func() error { return fs.Remove(filepath.Join(dir, "nothing-here")) }},
	}
	for _, o := range ops {
		before := in.Calls(o.op)
		id := in.Add(Rule{Op: o.op, Err: syscall.EIO})
		if err := o.run(); !errors.Is(err, syscall.EIO) || !errors.Is(err, ErrInjected) {
			t.Errorf("%s: want injected EIO, got %v", o.op, err)
		}
		in.Remove(id)
		err := o.run()
		if o.op == vfs.OpRemove {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s passthrough: %v", o.op, err)
			}
		} else if err != nil {
			t.Errorf("%s passthrough: %v", o.op, err)
		}
		if got := in.Calls(o.op) - before; got != 2 {
			t.Errorf("%s: Calls advanced by %d, want 2", o.op, got)
		}
	}
}

func TestConcurrentRulesAndCalls(t *testing.T) {
	in := NewInjector(3)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				_ = in.Check(vfs.OpWrite, "f")
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 200; i++ {
			id := in.Add(Rule{Op: vfs.OpWrite, When: WithProbability(0.3), Err: syscall.EIO})
			in.Remove(id)
			if i%50 == 0 {
				in.Clear()
			}
		}
	}()
	wg.Wait()
	if got := in.Calls(vfs.OpWrite); got != 2000 {
		t.Fatalf("Calls = %d, want 2000", got)
	}
}

// TestHoldBlocksUntilClosed: a firing call waits on its rule's Hold until
// the channel is closed, and then returns the rule's error; calls the rule
// does not match pass.
func TestHoldBlocksUntilClosed(t *testing.T) {
	in := NewInjector(1)
	hold := make(chan struct{})
	id := in.Add(Rule{Op: vfs.OpSync, Err: syscall.EIO, Hold: hold})
	done := make(chan error, 1)
	go func() { done <- in.Check(vfs.OpSync, "f") }()
	for in.Fired(id) == 0 {
		runtime.Gosched()
	}
	if err := in.Check(vfs.OpWrite, "f"); err != nil {
		t.Fatalf("a call the held rule does not match: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("held call returned (%v) before Hold was closed", err)
	default:
	}
	close(hold)
	if err := <-done; !errors.Is(err, syscall.EIO) {
		t.Fatalf("released call: %v, want EIO", err)
	}
}
