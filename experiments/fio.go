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
	"github.com/brokerlab/brokerlab/plots"
)

// ErrNoFio is returned when fio is not installed.
var ErrNoFio = errors.New("experiments: fio is not installed (apt-get install fio); the device ceiling is not measured")

// FioJob is one device-ceiling measurement: sequential writes of BS bytes,
// buffered or O_DIRECT, with a sync pattern matching a flush policy:
//
//	sync    fdatasync after every write (the sync flush policy's pattern)
//	async   fdatasync every PeriodicEvery writes (a periodic flush)
//	none    no fdatasync (page cache only)
type FioJob struct {
	Direct bool
	Sync   string
	BS     int
}

// PeriodicEvery is the write count between fdatasyncs of the "async" ceiling.
const PeriodicEvery = 256

// Name is the job's cell name: path=buffered|direct/flush=…/size=BS.
func (j FioJob) Name() string {
	p := "buffered"
	if j.Direct {
		p = "direct"
	}
	return fmt.Sprintf("path=%s/flush=%s/size=%d", p, j.Sync, j.BS)
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
	args := []string{"--name=ceiling", "--directory=" + dir, "--rw=write", "--ioengine=psync",
		"--bs=" + strconv.Itoa(j.BS), "--size=" + strconv.FormatInt(fileSize, 10),
		"--runtime=" + strconv.FormatFloat(runtime.Seconds(), 'f', 3, 64), "--time_based",
		"--output-format=json", "--unlink=1"}
	if j.Direct {
		args = append(args, "--direct=1")
	}
	switch j.Sync {
	case "sync":
		args = append(args, "--fdatasync=1")
	case "async":
		args = append(args, "--fdatasync="+strconv.Itoa(PeriodicEvery))
	case "none":
	default:
		return c, fmt.Errorf("%w: fio sync pattern %q", ErrConfig, j.Sync)
	}
	cmd := exec.CommandContext(ctx, fio, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return c, fmt.Errorf("fio %s: %w: %s", j.Name(), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return parseFio(c, out.Bytes(), j.BS)
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
		opt.FileSize = 256 << 20
	}
	if len(opt.Sizes) == 0 {
		opt.Sizes = []int{1024, 4096, 65536}
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
	cfg := map[string]any{"runtime": opt.Runtime.String(), "file_size": opt.FileSize, "sizes": opt.Sizes, "periodic_every": PeriodicEvery}
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
		for _, direct := range []bool{false, true} {
			for _, s := range []string{"sync", "async", "none"} {
				if ctx.Err() != nil {
					status = result.StatusInterrupted
					break
				}
				j := FioJob{Direct: direct, Sync: s, BS: bs}
				c, err := RunFio(ctx, work, j, opt.Runtime, opt.FileSize)
				if err != nil {
					c.Error = err.Error()
				}
				pr.printf("fio %-40s %10.0f IOPS %9.2f MB/s %s\n", j.Name(), c.MsgPerSec, c.MBPerSec, c.Error)
				out.Cells = append(out.Cells, c)
			}
		}
	}
	if err := result.WriteResult(runDir, result.Result{Schema: result.SchemaVersion, Experiment: "ceiling", Cells: out.Cells}); err != nil {
		return out, err
	}
	if err := result.WriteBenchFile(runDir, man, out.Cells); err != nil {
		return out, err
	}
	man.Finish(status, time.Now())
	if err := result.WriteManifest(runDir, man); err != nil {
		return out, err
	}
	out.Status = status
	out.Figures, _ = plots.RenderRun(runDir)
	return out, nil
}
