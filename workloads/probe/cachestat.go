package probe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/brokerlab/brokerlab/engine/pagecache"
)

// Kind names how a segment's page-cache state is read.
type Kind string

// The kinds. KindAuto uses cachestat(2) and falls back to mincore(2) where
// the kernel lacks cachestat (ENOSYS, Linux < 6.5) or the file system
// refuses it (EOPNOTSUPP).
const (
	KindAuto      Kind = ""
	KindCachestat Kind = "cachestat"
	KindMincore   Kind = "mincore"
)

// ErrCachestatUnsupported marks a kernel (or file) without cachestat(2).
var ErrCachestatUnsupported = errors.New("probe: cachestat(2) not supported")

// SegmentCache is one file's page-cache state at one instant, in pages of
// the kernel page size. Cached is what mincore calls resident. Dirty,
// Writeback, Evicted and RecentlyEvicted come from cachestat(2) only: with
// Source mincore they are zero and HasDirty is false. Evicted counts the
// file's pages evicted since it was opened by anyone and still remembered
// by the kernel's shadow entries; RecentlyEvicted those whose refault would
// now count as working-set thrash (see cachestat(2)). Pages dropped by
// fadvise DONTNEED are invalidated, not evicted: they leave no shadow entry
// and are not counted.
type SegmentCache struct {
	Name            string `json:"name"`       // base name within the directory
	Size            int64  `json:"size_bytes"` // file size at the sample
	Pages           int64  `json:"pages"`      // pages the size spans
	Cached          int64  `json:"cached"`
	Dirty           int64  `json:"dirty"`
	Writeback       int64  `json:"writeback"`
	Evicted         int64  `json:"evicted"`
	RecentlyEvicted int64  `json:"recently_evicted"`
	Source          Kind   `json:"source"`
}

// HasDirty reports whether Dirty and Writeback were measured (cachestat).
func (s SegmentCache) HasDirty() bool { return s.Source == KindCachestat }

// Residency is the mincore-shaped view of s (resident and total pages).
func (s SegmentCache) Residency() pagecache.FileResidency {
	return pagecache.FileResidency{Name: s.Name, Size: s.Size, Resident: int(s.Cached), Total: int(s.Pages)}
}

// StatFile reads the page-cache state of the file at path with kind
// (KindAuto: cachestat, else mincore).
func StatFile(path string, kind Kind) (SegmentCache, error) {
	f, err := os.Open(path)
	if err != nil {
		return SegmentCache{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return SegmentCache{}, fmt.Errorf("probe: %w", err)
	}
	s := SegmentCache{Name: filepath.Base(path), Size: st.Size(), Pages: int64(pagecache.Pages(st.Size())), Source: kind}
	if kind != KindMincore {
		cs, err := cachestat(f)
		switch {
		case err == nil:
			s.Cached, s.Dirty, s.Writeback, s.Evicted, s.RecentlyEvicted = cs[0], cs[1], cs[2], cs[3], cs[4]
			s.Source = KindCachestat
			return s, nil
		case kind == KindCachestat || !errors.Is(err, ErrCachestatUnsupported):
			return s, fmt.Errorf("%w (%s)", err, path)
		}
	}
	s.Source = KindMincore
	if st.Size() == 0 {
		return s, nil
	}
	res, _, err := pagecache.Residency(f, st.Size())
	if err != nil {
		return s, err
	}
	s.Cached = int64(res)
	return s, nil
}

// StatDir reads every regular file directly inside dir (no recursion),
// sorted by name; files that vanish meanwhile (a segment deleted by
// retention) are skipped.
func StatDir(dir string, kind Kind) ([]SegmentCache, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("probe: %w", err)
	}
	out := make([]SegmentCache, 0, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		s, err := StatFile(filepath.Join(dir, e.Name()), kind)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
