package result

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	majMin       string // "259:2"
	mountPoint   string
	options      string
	fsType       string
	source       string
	superOptions string
}

// parseMountinfo reads /proc/self/mountinfo lines:
//
//	36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw,errors=continue
//
// Malformed lines are skipped.
func parseMountinfo(data string) []mountEntry {
	var out []mountEntry
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(f) {
			continue
		}
		e := mountEntry{
			majMin:     f[2],
			mountPoint: unescapeMount(f[4]),
			options:    f[5],
			fsType:     f[sep+1],
			source:     unescapeMount(f[sep+2]),
		}
		if sep+3 < len(f) {
			e.superOptions = f[sep+3]
		}
		out = append(out, e)
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for space etc.).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountFor returns the entry whose mount point is the longest path prefix
// of path; for equal mount points the later (over-mounting) entry wins.
func mountFor(entries []mountEntry, path string) (mountEntry, bool) {
	best, found := mountEntry{}, false
	for _, e := range entries {
		if !pathWithin(path, e.mountPoint) {
			continue
		}
		if !found || len(e.mountPoint) >= len(best.mountPoint) {
			best, found = e, true
		}
	}
	return best, found
}

func pathWithin(path, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(path, "/")
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// resolveDir makes dir absolute and resolves symlinks of its longest
// existing ancestor (the store directory may not exist yet).
func resolveDir(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

func (co collector) storeInfo(storeDir string) StoreInfo {
	s := StoreInfo{
		Dir: storeDir, MountPoint: Unknown, FSType: Unknown, MountOptions: Unknown,
		SuperOptions: Unknown, Device: Unknown, BlockDevice: Unknown, Model: Unknown,
		Rotational: Unknown, Scheduler: Unknown, WriteCache: Unknown, LogicalBlock: Unknown,
		ReadAheadKB: Unknown,
	}
	path := resolveDir(storeDir)
	s.Dir = path
	data, err := os.ReadFile(filepath.Join(co.procRoot, "self/mountinfo"))
	if err != nil {
		return s
	}
	e, ok := mountFor(parseMountinfo(string(data)), path)
	if !ok {
		return s
	}
	s.MountPoint, s.FSType, s.MountOptions, s.Device = e.mountPoint, e.fsType, e.options, e.source
	if e.superOptions != "" {
		s.SuperOptions = e.superOptions
	}
	co.blockDevice(e.majMin, &s)
	return s
}

// blockDevice fills the device facts from /sys/dev/block/<maj:min>, going up
// from a partition to its disk for the queue attributes.
func (co collector) blockDevice(majMin string, s *StoreInfo) {
	link := filepath.Join(co.sysRoot, "dev/block", majMin)
	dev, err := filepath.EvalSymlinks(link)
	if err != nil {
		return
	}
	disk := dev
	if _, err := os.Stat(filepath.Join(dev, "partition")); err == nil {
		disk = filepath.Dir(dev)
	}
	s.BlockDevice = filepath.Base(disk)
	s.Model = co.readTrim(filepath.Join(disk, "device/model"))
	q := filepath.Join(disk, "queue")
	s.Rotational = co.readTrim(filepath.Join(q, "rotational"))
	s.Scheduler = bracketed(co.readTrim(filepath.Join(q, "scheduler")))
	s.WriteCache = co.readTrim(filepath.Join(q, "write_cache"))
	s.LogicalBlock = co.readTrim(filepath.Join(q, "logical_block_size"))
	s.ReadAheadKB = co.readTrim(filepath.Join(q, "read_ahead_kb"))
}
