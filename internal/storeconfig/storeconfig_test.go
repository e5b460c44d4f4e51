package storeconfig

import (
	"errors"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/engine/store"
)

func TestNewAppliesTheNames(t *testing.T) {
	cfg, err := New("/d", Spec{WritePath: "pwrite", Flush: "group", SegmentSize: 8 << 20, FlushInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Root != "/d" || cfg.CommitLog.Path != iopath.Pwrite || cfg.CommitLog.Flush.Kind != flush.Group ||
		cfg.CommitLog.SegmentSize != 8<<20 || cfg.CommitLog.Flush.Interval != 100*time.Millisecond {
		t.Fatalf("config %+v", cfg.CommitLog)
	}
	// Zero size and interval keep the defaults.
	cfg, err = New("/d", Spec{WritePath: "mmap", Flush: "async"})
	def := store.DefaultConfig("/d")
	if err != nil || cfg.CommitLog.SegmentSize != def.CommitLog.SegmentSize ||
		cfg.CommitLog.Flush.Interval != flush.DefaultConfig(flush.Async).Interval {
		t.Fatalf("defaults: %v %+v", err, cfg.CommitLog)
	}
}

func TestNewNamesTheBadField(t *testing.T) {
	for field, spec := range map[string]Spec{
		"write-path": {WritePath: "floppy", Flush: "async"},
		"flush":      {WritePath: "mmap", Flush: "sometimes"},
	} {
		_, err := New("/d", spec)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != field || fe.Err == nil {
			t.Errorf("%+v: err %v, want a FieldError on %s", spec, err, field)
		}
	}
}
