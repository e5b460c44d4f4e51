package benchratio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// ErrFio is wrapped by ParseFio for a report it cannot use.
var ErrFio = errors.New("benchratio: unusable fio report")

// FioRun is the write side of one fio job's JSON report
// (--output-format=json).
type FioRun struct {
	Version string
	// Job options as fio reports them (global options overridden by the
	// job's own).
	RW, IOEngine string
	BS           int // bytes
	IODepth      int
	Direct       bool
	// FileSize is set (bytes) when the job wrote a set of files of that
	// size (nrfiles > 1 with filesize), each once, as a commit log writes
	// its fixed-size segments; 0 for one file (which a time_based job
	// overwrites in a loop).
	FileSize int
	// Results.
	BWBytes   float64 // bytes/s
	IOPS      float64
	TotalIOs  int64
	RuntimeMS int64
	ClatP50   float64 // ns; 0 when fio reported no percentiles
	ClatP99   float64
}

// ParseFio reads one fio JSON report (fio may print warnings before the
// document) and returns its first job's write results.
func ParseFio(data []byte) (FioRun, error) {
	var run FioRun
	if i := bytes.IndexByte(data, '{'); i > 0 {
		data = data[i:]
	}
	var doc struct {
		Version string            `json:"fio version"`
		Global  map[string]string `json:"global options"`
		Jobs    []struct {
			Options map[string]string `json:"job options"`
			Error   int               `json:"error"`
			Write   struct {
				BW      float64 `json:"bw_bytes"`
				IOPS    float64 `json:"iops"`
				IOs     int64   `json:"total_ios"`
				Runtime int64   `json:"runtime"`
				Clat    struct {
					Percentile map[string]float64 `json:"percentile"`
				} `json:"clat_ns"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return run, fmt.Errorf("%w: %w", ErrFio, err)
	}
	if len(doc.Jobs) == 0 {
		return run, fmt.Errorf("%w: no jobs", ErrFio)
	}
	j := doc.Jobs[0]
	if j.Error != 0 {
		return run, fmt.Errorf("%w: job error %d", ErrFio, j.Error)
	}
	if j.Write.IOs <= 0 || j.Write.BW <= 0 {
		return run, fmt.Errorf("%w: the job wrote nothing", ErrFio)
	}
	opt := func(k, def string) string {
		if v, ok := j.Options[k]; ok {
			return v
		}
		if v, ok := doc.Global[k]; ok {
			return v
		}
		return def
	}
	run = FioRun{
		Version: doc.Version, RW: opt("rw", "read"), IOEngine: opt("ioengine", "psync"),
		Direct:  opt("direct", "0") == "1",
		BWBytes: j.Write.BW, IOPS: j.Write.IOPS, TotalIOs: j.Write.IOs, RuntimeMS: j.Write.Runtime,
		ClatP50: j.Write.Clat.Percentile["50.000000"], ClatP99: j.Write.Clat.Percentile["99.000000"],
	}
	var err error
	if run.BS, err = parseFioSize(opt("bs", "4k")); err != nil {
		return run, fmt.Errorf("%w: bs: %w", ErrFio, err)
	}
	if run.IODepth, err = strconv.Atoi(opt("iodepth", "1")); err != nil {
		return run, fmt.Errorf("%w: iodepth: %w", ErrFio, err)
	}
	if n, err := strconv.Atoi(opt("nrfiles", "1")); err == nil && n > 1 {
		if fs := opt("filesize", ""); fs != "" {
			if run.FileSize, err = parseFioSize(fs); err != nil {
				return run, fmt.Errorf("%w: filesize: %w", ErrFio, err)
			}
		}
	}
	return run, nil
}

// parseFioSize parses a fio size such as "64k", "1m" or "4096" (fio's
// default kb_base=1024: k, m, g are powers of 1024; a trailing "b"/"ib" is
// allowed).
func parseFioSize(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	mult := 1
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.Atoi(t)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("size %q", s)
	}
	return v * mult, nil
}

// Name is the run's benchmark name (see FioName and FioFilesName for the
// O_DIRECT forms): a run over a set of files adds /filesize=N.
func (r FioRun) Name() string {
	d := 0
	if r.Direct {
		d = 1
	}
	n := fmt.Sprintf("FioWrite/rw=%s/direct=%d/bs=%d/ioengine=%s/iodepth=%d", r.RW, d, r.BS, r.IOEngine, r.IODepth)
	if r.FileSize > 0 {
		n += fmt.Sprintf("/filesize=%d", r.FileSize)
	}
	return n
}

// WriteFioBench writes runs in the Go benchmark format, one line per run,
// after the file configuration lines in config (keys sorted): iterations
// = the I/Os done, ns/op = runtime per I/O (the inverse of IOPS), MB/s =
// fio's bandwidth (10^6 bytes/s, as testing.B reports it), and the
// completion latency p50-ns and p99-ns when fio reported them.
func WriteFioBench(w io.Writer, runs []FioRun, config map[string]string) error {
	bw := benchfmt.NewWriter(w)
	keys := make([]string, 0, len(config))
	for k := range config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, r := range runs {
		res := &benchfmt.Result{Name: benchfmt.Name(r.Name()), Iters: int(r.TotalIOs)}
		for _, k := range keys {
			res.Config = append(res.Config, benchfmt.Config{Key: k, Value: []byte(config[k]), File: true})
		}
		res.Values = append(res.Values,
			benchfmt.Value{Value: 1e9 / r.IOPS, Unit: "ns/op"},
			benchfmt.Value{Value: round3(r.BWBytes / 1e6), Unit: "MB/s"})
		if r.ClatP50 > 0 {
			res.Values = append(res.Values,
				benchfmt.Value{Value: r.ClatP50, Unit: "p50-ns"},
				benchfmt.Value{Value: r.ClatP99, Unit: "p99-ns"})
		}
		if err := bw.Write(res); err != nil {
			return err
		}
	}
	return nil
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }
