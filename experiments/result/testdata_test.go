package result

import "time"

// sampleCells is a small result using every field of the schema.
func sampleCells() []Cell {
	return []Cell{
		{
			Name: "path=mmap/flush=group/size=1024/conc=64", System: SystemBrokerlab, Op: "Produce", Rep: 0,
			Duration: 10 * time.Second, Ops: 500000, Bytes: 512000000, MsgPerSec: 50000, MBPerSec: 51.2,
			Primary: "e2e",
			Quantiles: map[string]Quantiles{
				"e2e":    {P50: 410000, P90: 900000, P99: 2100000, P999: 7900000, P9999: 12000000, Max: 31000000, Mean: 520000.5, Count: 500000},
				"append": {P50: 1000, P90: 2000, P99: 5000, P999: 9000, P9999: 20000, Max: 50000, Mean: 1200, Count: 500000},
			},
			Spectrum: map[string][]SpectrumPoint{"e2e": {{Percentile: 0, ValueNs: 100000}, {Percentile: 50, ValueNs: 410000}, {Percentile: 99, ValueNs: 2100000}}},
			Series: []Point{
				{T: 1, Rate: 49000, MBps: 50.1, P50: 400000, P99: 2000000, P999: 8000000, ResidentMiB: 64, DirtyMiB: 12, Extra: map[string]float64{"majflt": 3}},
				{T: 2, Rate: 51000, MBps: 52.2, P50: 420000, P99: 2200000, P999: 7800000, ResidentMiB: 128, DirtyMiB: 20},
			},
			Markers:      []Marker{{T: 1.5, Kind: MarkerRoll, Label: "segment 1"}},
			Residency:    &Residency{Segments: []string{"00000000000000000000", "00000000000067108864"}, T: []float64{1, 2}, Fraction: [][]float64{{1, 0.5}, {-1, 1}}},
			FlushBatches: []BatchBucket{{UpTo: 1, Count: 10}, {UpTo: 2, Count: 30}, {UpTo: 4, Count: 5}},
			Extra:        map[string]float64{"fsyncs_per_op": 0.02},
			Files:        CellFiles{Hlog: HlogName("path=mmap/flush=group/size=1024/conc=64", 0), Hgrm: map[string]string{"e2e": HgrmName("path=mmap/flush=group/size=1024/conc=64", 0, "e2e")}, HgrmUnitNs: 1000},
		},
		{
			Name: "path=mmap/flush=group/size=1024/conc=64", System: SystemBrokerlab, Rep: 1,
			Duration: 10 * time.Second, Ops: 480000, Bytes: 491520000, MsgPerSec: 48000, MBPerSec: 49.152,
			Primary:   "e2e",
			Quantiles: map[string]Quantiles{"e2e": {P50: 430000, P99: 2500000, P999: 8100000, Max: 40000000, Count: 480000}},
		},
		{
			Name: "bs=4k/sync=fdatasync", System: SystemFio, Op: "Write", Rep: 0,
			Duration: 5 * time.Second, Ops: 2000, Bytes: 8192000, MsgPerSec: 400, MBPerSec: 1.6384,
			Primary:   "sync",
			Quantiles: map[string]Quantiles{"sync": {P50: 2400000, P99: 2600000, P999: 15800000, Count: 2000}},
		},
		{
			Name: "path=pwrite/flush=sync/size=1024/conc=64", System: SystemBrokerlab, Rep: 0,
			Error: "interrupted", Duration: time.Second, Ops: 10,
		},
	}
}

func sampleManifest() Manifest {
	fin := time.Date(2026, 1, 2, 3, 14, 5, 0, time.UTC)
	return Manifest{
		Schema: SchemaVersion, Experiment: "e1-write-paths", Status: StatusOK,
		Git:  GitInfo{SHA: "0123456789abcdef0123456789abcdef01234567", Dirty: true, Source: "git"},
		Host: HostInfo{Hostname: "lab1", Kernel: "6.18.44", OS: "linux", Arch: "amd64", CPUModel: "AMD EPYC 7B13", CPUCount: 2, MemTotalBytes: 8 << 30, THP: "madvise"},
		Store: StoreInfo{Dir: "/data/store", MountPoint: "/data", FSType: "ext4", MountOptions: "rw,relatime", SuperOptions: "rw",
			Device: "/dev/nvme0n1p1", BlockDevice: "nvme0n1", Model: "Samsung", Rotational: "0", Scheduler: "none",
			WriteCache: "write back", LogicalBlock: "512", ReadAheadKB: "128"},
		VM: VMInfo{DirtyRatio: "20", DirtyBackgroundRatio: "10", DirtyBytes: "0", DirtyBackgroundBytes: "0",
			DirtyExpireCentisecs: "3000", DirtyWritebackCentisecs: "500"},
		Go:       GoInfo{Version: "go1.26.8", GOMAXPROCS: 2, GOGC: "100 (default)", MainModule: "github.com/brokerlab/brokerlab", Modules: []Module{{Path: "gonum.org/v1/plot", Version: "v0.17.0", Sum: "h1:x"}}},
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Finished: &fin,
		Config:   []byte(`{"duration":"10s","paths":["mmap","pwrite"]}`),
		Seed:     42,
		Command:  []string{"brokerlab", "run", "experiments/e1.yaml"},
		Notes:    []string{"cold run"},
		Warnings: []string{"virtio disk"},
	}
}
