package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// ErrNoFio is returned when fio is not installed.
var ErrNoFio = errors.New("experiments: fio is not installed (apt-get install fio); the device ceiling is not measured")

// FioJob is one ceiling measurement: sequential writes of BS bytes with
// the cell's concurrency, O_DIRECT or buffered, and the sync pattern of a
// flush policy:
//
//	sync    fdatasync after every write (the sync policy)
//	group   fdatasync every Every writes (group commit; a run sweeps Every
//	        over GroupSweep and keeps the envelope)
//	none    no fdatasync (async: acknowledged from the page cache)
//	dsync   every write durable by itself, O_DSYNC (--sync=dsync; FUA on
//	        O_DIRECT), no fdatasync: the dsync policy, with Conc writes in
//	        flight (libaio iodepth) on O_DIRECT
//
// O_DIRECT jobs run on one file with libaio at iodepth Conc (the producers
// appending to one log) and measure the device: Ceiling "device". Buffered
// jobs run Conc psync jobs (group_reporting); without fdatasync they measure
// the page cache, not the device (Ceiling "page-cache"); with it, Ceiling
// "buffered-fdatasync".
type FioJob struct {
	Direct bool
	Sync   string
	BS     int
	Conc   int // iodepth (direct) or numjobs (buffered); 0 = 1
	Every  int // writes per fdatasync for Sync "group"
	// FS is the file system the job writes on (engine fs; "" = the store
	// root's own).
	FS string
}

// Ceiling names what the job measures: device, page-cache or
// buffered-fdatasync.
func (j FioJob) Ceiling() string {
	switch {
	case j.Direct:
		return "device"
	case j.Sync == "none":
		return "page-cache"
	case j.Sync == "dsync":
		return "buffered-dsync"
	}
	return "buffered-fdatasync"
}

// Name is the job's cell name:
// path=direct|buffered/flush=sync|group|none/size=BS/conc=N/ceiling=….
func (j FioJob) Name() string {
	p := "buffered"
	if j.Direct {
		p = "direct"
	}
	name := fmt.Sprintf("path=%s/flush=%s/size=%d/conc=%d/ceiling=%s", p, j.Sync, j.BS, max(j.Conc, 1), j.Ceiling())
	if j.FS != "" {
		name += "/fs=" + j.FS
	}
	return name
}

// fioArgs are the job's fio arguments (without the runtime and output).
func (j FioJob) fioArgs(dir string, fileSize int64) ([]string, error) {
	conc := max(j.Conc, 1)
	args := []string{"--name=ceiling", "--directory=" + dir, "--rw=write", "--bs=" + strconv.Itoa(j.BS), "--unlink=1"}
	if j.Direct {
		args = append(args, "--direct=1", "--ioengine=libaio", "--iodepth="+strconv.Itoa(conc), "--numjobs=1",
			"--size="+strconv.FormatInt(fileSize, 10))
	} else {
		per := max(fileSize/int64(conc), 16<<20)
		args = append(args, "--ioengine=psync", "--numjobs="+strconv.Itoa(conc), "--group_reporting=1",
			"--size="+strconv.FormatInt(per, 10))
	}
	switch j.Sync {
	case "sync":
		args = append(args, "--fdatasync=1")
	case "group":
		if j.Every < 1 {
			return nil, fmt.Errorf("%w: fio group pattern needs a batch (Every >= 1)", ErrConfig)
		}
		args = append(args, "--fdatasync="+strconv.Itoa(j.Every))
	case "dsync":
		args = append(args, "--sync=dsync")
	case "none":
	default:
		return nil, fmt.Errorf("%w: fio sync pattern %q (want sync, group, dsync or none)", ErrConfig, j.Sync)
	}
	return args, nil
}

// FioCell is the (empty) result cell of a job.
func FioCell(j FioJob) result.Cell {
	return result.Cell{Name: j.Name(), System: result.SystemFio, Op: "Write", Primary: "write"}
}

// FioPath returns fio's path or ErrNoFio.
func FioPath() (string, error) {
	p, err := exec.LookPath("fio")
	if err != nil {
		return "", ErrNoFio
	}
	return p, nil
}

// RunFio runs one job in dir for runtime and returns it as a result cell
// (System fio): IOPS as msg/s, bandwidth, and the write (clat) and sync
// latency quantiles.
func RunFio(ctx context.Context, dir string, j FioJob, runtime time.Duration, fileSize int64) (result.Cell, error) {
	c := FioCell(j)
	fio, err := FioPath()
	if err != nil {
		return c, err
	}
	args, err := j.fioArgs(dir, fileSize)
	if err != nil {
		return c, err
	}
	// fio reads a bare runtime as whole seconds (and 0 as unbounded with
	// time_based): give it in ms, at least 100 ms.
	ms := max(runtime.Milliseconds(), 100)
	args = append(args, "--runtime="+strconv.FormatInt(ms, 10)+"ms", "--time_based", "--output-format=json")
	cmd := exec.CommandContext(ctx, fio, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return c, fmt.Errorf("fio %s: %w: %s", j.Name(), err, bytes.TrimSpace(stderr.Bytes()))
	}
	c, err = parseFio(c, out.Bytes(), j.BS)
	c.Extra = map[string]float64{"fio_conc": float64(max(j.Conc, 1)), "fio_file_size": float64(fileSize)}
	if j.Sync == "group" {
		c.Extra["fsync_every"] = float64(j.Every)
	}
	return c, err
}

type fioLat struct {
	Mean       float64            `json:"mean"`
	Max        float64            `json:"max"`
	N          int64              `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
}

func parseFio(c result.Cell, out []byte, bs int) (result.Cell, error) {
	// fio may print warnings before the JSON document.
	if i := bytes.IndexByte(out, '{'); i > 0 {
		out = out[i:]
	}
	var doc struct {
		Jobs []struct {
			Write struct {
				IOPS    float64 `json:"iops"`
				BW      float64 `json:"bw_bytes"`
				IOs     int64   `json:"total_ios"`
				Runtime int64   `json:"runtime"` // ms
				Clat    fioLat  `json:"clat_ns"`
			} `json:"write"`
			Sync struct {
				Lat fioLat `json:"lat_ns"`
			} `json:"sync"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Jobs) == 0 {
		return c, fmt.Errorf("fio output: %v", err)
	}
	w := doc.Jobs[0].Write
	c.Ops = w.IOs
	c.Bytes = w.IOs * int64(bs)
	c.Duration = time.Duration(w.Runtime) * time.Millisecond
	c.MsgPerSec = w.IOPS
	c.MBPerSec = w.BW / 1e6
	q := func(l fioLat) result.Quantiles {
		p := func(k string) float64 { return l.Percentile[k] }
		return result.Quantiles{P50: p("50.000000"), P90: p("90.000000"), P99: p("99.000000"), P999: p("99.900000"),
			P9999: p("99.990000"), Max: l.Max, Mean: l.Mean, Count: l.N}
	}
	c.Quantiles = map[string]result.Quantiles{"write": q(w.Clat)}
	if s := doc.Jobs[0].Sync.Lat; s.N > 0 {
		c.Quantiles["sync"] = q(s)
	}
	return c, nil
}

// CeilingOptions configure RunCeiling.
type CeilingOptions struct {
	OutRoot  string
	Dir      string // where fio writes ("" = OS temp dir)
	Runtime  time.Duration
	FileSize int64
	Sizes    []int
	Conc     []int // concurrencies (default 1, 16, 64)
	Every    int   // writes per fdatasync of the group pattern (default 16)
	Progress *os.File
	Command  []string
}

// RunCeiling measures the device ceiling with fio for every block size ×
// buffered/direct × sync pattern and stores it as a run of the "ceiling"
// experiment in the same format as every other result.
func RunCeiling(ctx context.Context, opt CeilingOptions) (Outcome, error) {
	var out Outcome
	if _, err := FioPath(); err != nil {
		return out, err
	}
	if opt.OutRoot == "" {
		opt.OutRoot = "results"
	}
	if opt.Runtime <= 0 {
		opt.Runtime = 3 * time.Second
	}
	if opt.FileSize <= 0 {
		opt.FileSize = fioFileSize
	}
	if len(opt.Sizes) == 0 {
		opt.Sizes = []int{1024, 4096, 65536}
	}
	if len(opt.Conc) == 0 {
		opt.Conc = []int{1, 16, 64}
	}
	if opt.Every <= 0 {
		opt.Every = 16
	}
	dir := opt.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	work, err := os.MkdirTemp(dir, "brokerlab-fio-")
	if err != nil {
		return out, err
	}
	defer os.RemoveAll(work)
	cfg := map[string]any{"runtime": opt.Runtime.String(), "file_size": opt.FileSize, "sizes": opt.Sizes, "conc": opt.Conc, "group_every": opt.Every}
	cfgJSON, _ := json.Marshal(cfg)
	runDir, err := result.CreateRunDir(opt.OutRoot, "ceiling", result.RunStamp(time.Now(), cfgJSON))
	if err != nil {
		return out, err
	}
	out.RunDir = runDir
	man := result.CollectManifest(work, cfg, 0)
	man.Experiment = "ceiling"
	man.Command = opt.Command
	pr := &progress{}
	if opt.Progress != nil {
		pr.w = opt.Progress
	}
	status := result.StatusOK
	for _, bs := range opt.Sizes {
		for _, conc := range opt.Conc {
			for _, direct := range []bool{false, true} {
				if direct && bs%512 != 0 {
					continue
				}
				for _, s := range []string{"sync", "group", "dsync", "none"} {
					if ctx.Err() != nil {
						status = result.StatusInterrupted
						break
					}
					j := FioJob{Direct: direct, Sync: s, BS: bs, Conc: conc, Every: opt.Every}
					c, err := RunFio(ctx, work, j, opt.Runtime, opt.FileSize)
					if err != nil {
						c.Error = err.Error()
					}
					pr.printf("fio %-58s %10.0f IOPS %9.2f MiB/s %s\n", j.Name(), c.MsgPerSec, c.MBPerSec*1e6/(1<<20), c.Error)
					out.Cells = append(out.Cells, c)
				}
			}
		}
	}
	if err := result.WriteResult(runDir, result.Result{Schema: result.SchemaVersion, Experiment: "ceiling", Cells: out.Cells}); err != nil {
		return out, err
	}
	if err := result.FinishRun(runDir, man, out.Cells, status); err != nil {
		return out, err
	}
	out.Status = status
	return out, nil
}
