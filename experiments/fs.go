package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/brokerlab/brokerlab/experiments/loopfs"
	"github.com/brokerlab/brokerlab/experiments/result"
)

// DefaultFSSize is the sparse image a run makes for each file system its
// cells name (engine fs): only written blocks take space on the host, and
// the store deletes its segments after each cell.
const DefaultFSSize Size = 32 << 30

// fileSystems holds the loop-device file systems of one run, made before
// the first cell and removed when the run ends (Close runs on return, so
// also after Ctrl-C cancels the run's context). A file system that cannot
// be made (not root, mkfs missing) is remembered with its reason: its
// cells and fio ceilings fail with that reason and the others still run.
//
// Not safe for concurrent use; a run is one goroutine.
type fileSystems struct {
	mounts  map[string]*loopfs.Mount
	reasons map[string]error
}

// mountFileSystems makes one file system for every distinct engine fs of
// cells under storeRoot and records each mount's mkfs and mount options
// (or why it could not be made) in the manifest's notes.
func mountFileSystems(ctx context.Context, cells []Cell, storeRoot string, man *result.Manifest) *fileSystems {
	f := &fileSystems{mounts: map[string]*loopfs.Mount{}, reasons: map[string]error{}}
	sizes := map[string]Size{}
	for _, c := range cells {
		if fs := c.Exp.Engine.FS; fs != "" {
			sizes[fs] = max(sizes[fs], c.Exp.Engine.FSSize)
		}
	}
	names := make([]string, 0, len(sizes))
	for fs := range sizes {
		names = append(names, fs)
	}
	sort.Strings(names)
	for _, fs := range names {
		size := sizes[fs]
		if size == 0 {
			size = DefaultFSSize
		}
		work, err := os.MkdirTemp(storeRoot, "brokerlab-"+fs+"-")
		if err == nil {
			var m *loopfs.Mount
			m, err = loopfs.New(ctx, work, loopfs.Spec{Type: fs, Size: int64(size)})
			if err == nil {
				f.mounts[fs] = m
				o := m.Manifest()
				man.Notes = append(man.Notes, fmt.Sprintf("fs=%s: %s image of %s bytes on %s, mkfs.%s %s, mount -o %s",
					fs, o["fs"], o["fs_size"], o["loop_device"], fs, o["mkfs_options"], o["mount_options"]))
				continue
			}
			os.RemoveAll(work)
		}
		f.reasons[fs] = err
		man.Warnings = append(man.Warnings, fmt.Sprintf("fs=%s not measured: %v", fs, err))
	}
	return f
}

// root is where a cell on file system fs keeps its store: the mount point,
// or def for the store root's own file system.
func (f *fileSystems) root(fs, def string) (string, error) {
	if fs == "" {
		return def, nil
	}
	if m, ok := f.mounts[fs]; ok {
		return m.Dir, nil
	}
	if err, ok := f.reasons[fs]; ok {
		return "", fmt.Errorf("fs=%s skipped: %w", fs, err)
	}
	return "", fmt.Errorf("fs=%s: %w", fs, loopfs.ErrUnavailable)
}

// Close unmounts and removes every file system of the run.
func (f *fileSystems) Close() error {
	var errs []error
	for fs, m := range f.mounts {
		if err := m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("fs=%s: %w", fs, err))
		}
		os.Remove(filepath.Dir(m.Dir)) // the run's work dir, empty once the mount is gone
	}
	return errors.Join(errs...)
}
