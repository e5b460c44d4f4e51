package strictfs

import "math/rand/v2"

// Cut turns the power off (see the package doc). It panics if called
// twice: a cut FS is dead.
func (f *FS) Cut(opts CutOptions) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut != nil {
		panic("strictfs: Cut called twice")
	}
	if opts.Rand == nil {
		opts.Rand = rand.New(rand.NewPCG(1, 2))
	}
	f.cut = &opts
}

// IsCut reports whether Cut was called.
func (f *FS) IsCut() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cut != nil
}

// AfterCut returns the FS as it is after the reboot that follows Cut. It
// panics if Cut was not called. It reads mapped buffers: call it once the
// process under test stopped writing to the old FS's mappings.
func (f *FS) AfterCut() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cut == nil {
		panic("strictfs: AfterCut before Cut")
	}
	out := &FS{}
	out.root = f.crashDir(f.root)
	out.stats.LostBytes, out.stats.TornBytes = f.stats.LostBytes, f.stats.TornBytes
	out.stats.UnsyncedDirOps, out.stats.LostDirOps = f.stats.UnsyncedDirOps, f.stats.LostDirOps
	return out
}

// crashDir builds the post-crash copy of directory d; f.mu held.
func (f *FS) crashDir(d *node) *node {
	entries := make(map[string]*node, len(d.durable))
	for k, v := range d.durable {
		entries[k] = v
	}
	f.stats.UnsyncedDirOps += len(d.ops)
	keep := 0
	if f.cut.Tear == TearPrefix && len(d.ops) > 0 {
		keep = f.cut.Rand.IntN(len(d.ops) + 1)
	}
	for _, op := range d.ops[:keep] {
		if op.n == nil {
			delete(entries, op.name)
		} else {
			entries[op.name] = op.n
		}
	}
	f.stats.LostDirOps += len(d.ops) - keep
	out := make(map[string]*node, len(entries))
	copies := map[*node]*node{} // keep one copy per file reachable twice
	for name, n := range entries {
		if c, ok := copies[n]; ok {
			out[name] = c
			continue
		}
		var c *node
		if n.dir {
			c = f.crashDir(n)
		} else {
			c = f.crashFile(n)
		}
		copies[n] = c
		out[name] = c
	}
	nd := newDir(out)
	nd.modTime = d.modTime
	return nd
}

// crashFile builds the post-crash image of file n; f.mu held. The size is
// the durable one, or (tear modes, at random) the volatile one: a size
// change is metadata, journaled whole, never torn.
func (f *FS) crashFile(n *node) *node {
	vol := int64(len(n.data))
	size := int64(len(n.synced))
	if f.cut.Tear != TearNone && vol != size && f.cut.Rand.IntN(2) == 0 {
		size = vol
	}
	img := make([]byte, size)
	copy(img, n.synced)
	lo, hi := n.dirtyLo, n.dirtyHi
	if n.mapAny {
		lo, hi = 0, vol
	}
	var keepLo, keepHi int64 // unsynced [keepLo, keepHi) of data may survive
	switch f.cut.Tear {
	case TearLast:
		keepLo, keepHi = n.lastLo, n.lastHi
		if n.mapAny || keepHi == 0 {
			keepLo, keepHi = lo, hi
		}
	case TearPrefix:
		keepLo, keepHi = lo, hi
	}
	keepHi = min(keepHi, size, vol)
	if keepHi > keepLo {
		// Keep a random whole number of sectors from the start of the
		// range (sectors are file-aligned).
		first := keepLo / SectorSize * SectorSize
		sectors := (keepHi - first + SectorSize - 1) / SectorSize
		end := min(first+f.cut.Rand.Int64N(sectors+1)*SectorSize, keepHi)
		for i := keepLo; i < end; i++ {
			if img[i] != n.data[i] {
				f.stats.TornBytes++
			}
		}
		if end > keepLo {
			copy(img[keepLo:end], n.data[keepLo:end])
		}
	}
	for i := lo; i < min(hi, vol); i++ {
		if i >= size || img[i] != n.data[i] {
			f.stats.LostBytes++
		}
	}
	return &node{modTime: n.modTime, data: img, synced: append([]byte(nil), img...)}
}
