package broker

import (
	"github.com/brokerlab/brokerlab/engine/broker/admin"
	"github.com/brokerlab/brokerlab/engine/store"
)

// The optional capabilities of a MessageStore, found by type assertion
// (as vfs.UncachedWriter is): meta.ConfigFiles (where the broker's
// metadata tables persist), EngineStore (replication) and DiskStatser
// (runtime information). A wrapper of a store (haStore) passes on those
// of the store it wraps.

// EngineStore is a MessageStore over an engine/store Store: the store
// whose commit log engine/ha replicates (a master's HA service, a slave's
// client), and whose statistics and cleaning a harness reads. The stores
// of FromStore and OpenStore offer it.
type EngineStore interface {
	EngineStore() *store.Store
}

// DiskStatser is a MessageStore that reports its commit log's positions
// and its disk (GET_BROKER_RUNTIME_INFO, the slave's refusal remark).
type DiskStatser interface {
	DiskStats() DiskStats
}

// DiskStats is a snapshot of a store's commit log and disk
// (admin.DiskStats).
type DiskStats = admin.DiskStats

// ReadConfigFile implements meta.ConfigFiles: config/<name> under the store root.
func (a storeAdapter) ReadConfigFile(name string, decode func([]byte) error) (bool, error) {
	return a.s.ReadConfigFile(name, decode)
}

// WriteConfigFile implements meta.ConfigFiles.
func (a storeAdapter) WriteConfigFile(name string, data []byte) error {
	return a.s.WriteConfigFile(name, data)
}

// EngineStore implements EngineStore.
func (a storeAdapter) EngineStore() *store.Store { return a.s }

// DiskStats implements DiskStatser.
func (a storeAdapter) DiskStats() DiskStats {
	s := a.s
	ss := s.Stats()
	d := DiskStats{
		Root:                s.Config().Root,
		MinPhyOffset:        s.MinPhyOffset(),
		MaxPhyOffset:        s.MaxPhyOffset(),
		FlushedOffset:       ss.CommitLog.FlushedOffset,
		DispatchBehindBytes: ss.DispatchBehindBytes,
		IndexErrors:         ss.IndexErrors,
		IndexSkippedRecords: ss.IndexSkippedRecords,
		LockHeld:            s.CommitLog().LockHeldFor(),
	}
	if ts, err := s.CommitLogEarliestTime(); err == nil {
		d.EarliestTime, d.HasEarliest = ts, true
	}
	if f := s.Config().DiskUsage; f != nil {
		if r, err := f(d.Root); err == nil {
			d.Usage, d.HasUsage = r, true
		}
	}
	return d
}
