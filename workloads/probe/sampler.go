package probe

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brokerlab/brokerlab/engine/pagecache"
)

// DefaultVmstatFields are the /proc/vmstat fields a Sampler reports.
var DefaultVmstatFields = []string{
	"nr_dirty", "nr_writeback", "nr_file_pages",
	"pgpgin", "pgpgout", "pgmajfault", "pgfault",
	"workingset_refault_file", "pgscan_kswapd", "pgsteal_kswapd", "pgscan_direct",
}

// DefaultIOFields are the /proc/<pid>/io fields a Sampler reports.
var DefaultIOFields = []string{"rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes", "cancelled_write_bytes"}

// SamplerConfig chooses what to sample.
type SamplerConfig struct {
	ProcRoot     string   // "/proc" (tests point it at fixtures)
	PID          int      // process whose io and faults are read; 0: this process
	Dir          string   // segment directory for residency; "": none
	Kind         Kind     // how Dir's files are read (KindAuto: cachestat, else mincore)
	VmstatFields []string // (DefaultVmstatFields); missing fields are left out
	IOFields     []string // (DefaultIOFields)
	NoIO         bool     // skip /proc/<pid>/io (unreadable in some sandboxes)
}

// DefaultSamplerConfig samples this process, no residency directory.
func DefaultSamplerConfig() SamplerConfig {
	return SamplerConfig{ProcRoot: "/proc", VmstatFields: DefaultVmstatFields, IOFields: DefaultIOFields}
}

// Point is one sample. Deltas are since the previous sample (the first
// Point's deltas are since NewSampler).
type Point struct {
	Time     time.Time        `json:"time"`
	Vmstat   map[string]int64 `json:"vmstat"`        // nr_*: value; others: delta
	DirtyMiB float64          `json:"dirty_mib"`     // nr_dirty in MiB
	WbMiB    float64          `json:"writeback_mib"` // nr_writeback in MiB
	IO       map[string]int64 `json:"io,omitempty"`  // deltas
	MinFlt   int64            `json:"minflt"`        // delta
	MajFlt   int64            `json:"majflt"`        // delta
	// CPUNs is this process's CPU time (user + system) since the previous
	// sample (getrusage; 0 when the Sampler watches another process).
	CPUNs int64 `json:"cpu_ns,omitempty"`
	// Cache is each file of Dir as cachestat (or mincore) saw it; Files is
	// its residency view (kept for readers of the mincore shape).
	Cache    []SegmentCache            `json:"cache,omitempty"`
	Files    []pagecache.FileResidency `json:"files,omitempty"`
	Resident int64                     `json:"resident_bytes"`  // sum over Files
	Size     int64                     `json:"size_bytes"`      // sum over Files
	Dirty    int64                     `json:"dirty_bytes"`     // sum over Cache (cachestat only)
	Wb       int64                     `json:"writeback_bytes"` // sum over Cache (cachestat only)
}

// Sampler takes Points.
type Sampler struct {
	cfg      SamplerConfig
	pageSize int64

	prevVm           map[string]int64
	prevIO           map[string]int64
	prevMin, prevMaj int64
	prevCPU          int64

	mu     sync.Mutex
	points []Point
}

// NewSampler takes the baseline reading.
func NewSampler(cfg SamplerConfig) (*Sampler, error) {
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.VmstatFields == nil {
		cfg.VmstatFields = DefaultVmstatFields
	}
	if cfg.IOFields == nil {
		cfg.IOFields = DefaultIOFields
	}
	s := &Sampler{cfg: cfg, pageSize: int64(os.Getpagesize())}
	var err error
	if s.prevVm, err = ReadVmstat(cfg.ProcRoot); err != nil {
		return nil, err
	}
	if !cfg.NoIO {
		if s.prevIO, err = ReadProcIO(cfg.ProcRoot, cfg.PID); err != nil {
			return nil, fmt.Errorf("%w (set NoIO to skip it)", err)
		}
	}
	if s.prevMin, s.prevMaj, s.prevCPU, err = s.faults(); err != nil {
		return nil, err
	}
	return s, nil
}

// faults reads the fault counts and, for this process, its CPU time (ns).
func (s *Sampler) faults() (minflt, majflt, cpuNs int64, err error) {
	if s.cfg.PID <= 0 && s.cfg.ProcRoot == "/proc" {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
			return 0, 0, 0, fmt.Errorf("probe: getrusage: %w", err)
		}
		return ru.Minflt, ru.Majflt, ru.Utime.Nano() + ru.Stime.Nano(), nil
	}
	b, err := os.ReadFile(filepath.Join(s.cfg.ProcRoot, pidDir(s.cfg.PID), "stat"))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("probe: %w", err)
	}
	minflt, majflt, err = ParseStatFaults(strings.TrimSpace(string(b)))
	return minflt, majflt, 0, err
}

// Sample reads everything once, appends the Point to the series and returns it.
func (s *Sampler) Sample(now time.Time) (Point, error) {
	p := Point{Time: now, Vmstat: map[string]int64{}}
	vm, err := ReadVmstat(s.cfg.ProcRoot)
	if err != nil {
		return p, err
	}
	for _, f := range s.cfg.VmstatFields {
		v, ok := vm[f]
		if !ok {
			continue
		}
		if strings.HasPrefix(f, "nr_") {
			p.Vmstat[f] = v
		} else {
			p.Vmstat[f] = v - s.prevVm[f]
		}
	}
	s.prevVm = vm
	const mib = 1 << 20
	p.DirtyMiB = float64(vm["nr_dirty"]*s.pageSize) / mib
	p.WbMiB = float64(vm["nr_writeback"]*s.pageSize) / mib

	if !s.cfg.NoIO {
		io, err := ReadProcIO(s.cfg.ProcRoot, s.cfg.PID)
		if err != nil {
			return p, err
		}
		p.IO = map[string]int64{}
		for _, f := range s.cfg.IOFields {
			if v, ok := io[f]; ok {
				p.IO[f] = v - s.prevIO[f]
			}
		}
		s.prevIO = io
	}

	minflt, majflt, cpuNs, err := s.faults()
	if err != nil {
		return p, err
	}
	p.MinFlt, p.MajFlt, p.CPUNs = minflt-s.prevMin, majflt-s.prevMaj, cpuNs-s.prevCPU
	s.prevMin, s.prevMaj, s.prevCPU = minflt, majflt, cpuNs

	if s.cfg.Dir != "" {
		segs, err := StatDir(s.cfg.Dir, s.cfg.Kind)
		if err != nil {
			return p, err
		}
		p.Cache = segs
		p.Files = make([]pagecache.FileResidency, len(segs))
		for i, sc := range segs {
			f := sc.Residency()
			p.Files[i] = f
			p.Resident += min(f.ResidentBytes(), f.Size)
			p.Size += f.Size
			p.Dirty += sc.Dirty * s.pageSize
			p.Wb += sc.Writeback * s.pageSize
		}
	}

	s.mu.Lock()
	s.points = append(s.points, p)
	s.mu.Unlock()
	return p, nil
}

// Run samples about every interval until ctx ends; onPoint (optional) sees
// each Point. Each wait is drawn uniformly from [interval/2, 3·interval/2)
// (mean interval): samples at a fixed period lock to the phase of any
// process with a commensurate period (the async flusher's 500 ms sawtooth
// under a 1 s interval samples one point of each cycle, always the same),
// and their mean is then that phase's value, not the time average. It
// returns the first sampling error, or nil when ctx ends.
func (s *Sampler) Run(ctx context.Context, interval time.Duration, onPoint func(Point)) error {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTimer(JitteredWait(interval))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			p, err := s.Sample(now)
			if err != nil {
				return err
			}
			if onPoint != nil {
				onPoint(p)
			}
			t.Reset(JitteredWait(interval))
		}
	}
}

// JitteredWait is a wait drawn uniformly from [d/2, 3d/2).
func JitteredWait(d time.Duration) time.Duration {
	return d/2 + rand.N(d)
}

// Points returns a copy of the series so far.
func (s *Sampler) Points() []Point {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Point(nil), s.points...)
}
