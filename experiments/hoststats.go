package experiments

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Host state a cell records beside its own measurements: the load average,
// the kernel's pressure stall information and the store device's I/O
// counters, read from /proc.
//
// /proc/pressure/{cpu,io,memory} (PSI, Linux >= 4.20):
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=123456
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=2345
//
// total is the cumulative stall time in µs; a cell records the share of its
// wall time in which some (or all) tasks stalled.
//
// /proc/diskstats (Documentation/admin-guide/iostats.rst): fields after
// "major minor name" are reads, reads merged, sectors read, ms reading,
// writes, writes merged, sectors written, ms writing, I/Os in flight,
// ms doing I/O, …; a sector is 512 bytes whatever the device's block size.

// pressure is one PSI file's cumulative totals in µs.
type pressure struct {
	SomeUs, FullUs int64
	HaveFull       bool
}

// parsePressure reads a /proc/pressure file.
func parsePressure(text string) (pressure, error) {
	var p pressure
	seen := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var total int64 = -1
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return p, fmt.Errorf("experiments: pressure: %q: %w", line, err)
				}
				total = n
			}
		}
		if total < 0 {
			return p, fmt.Errorf("experiments: pressure: no total in %q", line)
		}
		switch f[0] {
		case "some":
			p.SomeUs, seen = total, true
		case "full":
			p.FullUs, p.HaveFull = total, true
		}
	}
	if !seen {
		return p, fmt.Errorf("experiments: pressure: no \"some\" line")
	}
	return p, nil
}

// diskStat is one device's cumulative counters from /proc/diskstats.
type diskStat struct {
	SectorsWritten int64
	Writes         int64
	IOTicksMs      int64 // time the device had I/O in flight
}

// parseDiskstats reads /proc/diskstats into a map by device name.
func parseDiskstats(text string) (map[string]diskStat, error) {
	out := map[string]diskStat{}
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("experiments: diskstats: %d fields in %q", len(f), line)
		}
		num := func(i int) (int64, error) { return strconv.ParseInt(f[i], 10, 64) }
		w, err1 := num(7)
		sec, err2 := num(9)
		ticks, err3 := num(12)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("experiments: diskstats: bad numbers in %q", line)
		}
		out[f[2]] = diskStat{SectorsWritten: sec, Writes: w, IOTicksMs: ticks}
	}
	return out, nil
}

// parseLoadavg returns the 1-minute load average of /proc/loadavg.
func parseLoadavg(text string) (float64, error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		return 0, fmt.Errorf("experiments: loadavg: %q", text)
	}
	return strconv.ParseFloat(f[0], 64)
}

// hostSnap is the host state at one instant.
type hostSnap struct {
	at       time.Time
	load1    float64
	haveLoad bool
	psi      map[string]pressure // cpu, io, memory
	disk     diskStat
	haveDisk bool
}

// hostProbe reads host state under procRoot for one device (the store's).
type hostProbe struct {
	procRoot string
	devices  []string // candidate diskstats names, first found wins
}

func (h hostProbe) snap(now time.Time) hostSnap {
	s := hostSnap{at: now, psi: map[string]pressure{}}
	if b, err := os.ReadFile(filepath.Join(h.procRoot, "loadavg")); err == nil {
		if v, err := parseLoadavg(string(b)); err == nil {
			s.load1, s.haveLoad = v, true
		}
	}
	for _, r := range []string{"cpu", "io", "memory"} {
		if b, err := os.ReadFile(filepath.Join(h.procRoot, "pressure", r)); err == nil {
			if p, err := parsePressure(string(b)); err == nil {
				s.psi[r] = p
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(h.procRoot, "diskstats")); err == nil {
		if m, err := parseDiskstats(string(b)); err == nil {
			for _, d := range h.devices {
				if st, ok := m[d]; ok && d != "" {
					s.disk, s.haveDisk = st, true
					break
				}
			}
		}
	}
	return s
}

// hostExtras turns two snapshots into a cell's Extra values:
//
//	load1                     1-minute load average at the end
//	psi_<r>_some_pct          share of the wall time some task stalled on r (cpu, io, memory)
//	psi_<r>_full_pct          share in which all non-idle tasks stalled on r
//	device_write_bytes        bytes the store's device wrote
//	device_util_pct           share of the wall time the device had I/O in flight
//	write_amplification       device_write_bytes ÷ appendedBytes (when > 0)
func hostExtras(a, b hostSnap, appendedBytes int64) map[string]float64 {
	out := map[string]float64{}
	wall := b.at.Sub(a.at)
	if wall <= 0 {
		return out
	}
	if b.haveLoad {
		out["load1"] = b.load1
	}
	us := float64(wall.Microseconds())
	for _, r := range []string{"cpu", "io", "memory"} {
		pa, ok1 := a.psi[r]
		pb, ok2 := b.psi[r]
		if !ok1 || !ok2 {
			continue
		}
		out["psi_"+r+"_some_pct"] = 100 * float64(pb.SomeUs-pa.SomeUs) / us
		if pa.HaveFull && pb.HaveFull {
			out["psi_"+r+"_full_pct"] = 100 * float64(pb.FullUs-pa.FullUs) / us
		}
	}
	if a.haveDisk && b.haveDisk {
		wb := (b.disk.SectorsWritten - a.disk.SectorsWritten) * 512
		out["device_write_bytes"] = float64(wb)
		if ms := wall.Milliseconds(); ms > 0 {
			out["device_util_pct"] = min(100, 100*float64(b.disk.IOTicksMs-a.disk.IOTicksMs)/float64(ms))
		}
		if appendedBytes > 0 {
			out["write_amplification"] = float64(wb) / float64(appendedBytes)
		}
	}
	return out
}

// readDirtyKiB returns Dirty + Writeback from /proc/meminfo in KiB.
func readDirtyKiB(procRoot string) (int64, bool) {
	f, err := os.Open(filepath.Join(procRoot, "meminfo"))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var sum int64
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 && (fs[0] == "Dirty:" || fs[0] == "Writeback:") {
			n, err := strconv.ParseInt(fs[1], 10, 64)
			if err == nil {
				sum += n
				found++
			}
		}
	}
	return sum, found == 2
}
