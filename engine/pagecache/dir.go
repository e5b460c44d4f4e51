package pagecache

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// ResidencyDir reports the residency of every regular file directly inside
// dir (no recursion), sorted by name. Files that vanish while it runs (a
// segment deleted by retention) are skipped.
func ResidencyDir(dir string) ([]FileResidency, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("pagecache: %w", err)
	}
	out := make([]FileResidency, 0, len(entries))
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		r, err := fileResidency(filepath.Join(dir, e.Name()))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func fileResidency(path string) (FileResidency, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileResidency{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return FileResidency{}, fmt.Errorf("pagecache: %w", err)
	}
	r := FileResidency{Name: filepath.Base(path), Size: st.Size()}
	if st.Size() == 0 {
		return r, nil
	}
	r.Resident, r.Total, err = Residency(f, st.Size())
	return r, err
}

// DropDir runs SyncAndDrop on every regular file directly inside dir: the
// per-file cold-run preparation for a store directory. It affects only those
// files, never the rest of the page cache.
func DropDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("pagecache: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("pagecache: %w", err)
		}
		err = SyncAndDrop(f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
