package result

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File names inside a run directory.
const (
	ManifestFile = "manifest.json"
	ResultFile   = "result.json"
	// ResultGzFile replaces ResultFile when the encoded result is larger
	// than CompressAbove (long runs with per-segment residency samples
	// reach tens of MiB of highly repetitive JSON).
	ResultGzFile = "result.json.gz"
	BenchFile    = "bench.txt"
	FiguresDir   = "figures"
)

// RunStamp names a run: "<UTC yyyymmddThhmmssZ>-<first 8 hex of sha256(config)>".
// Stamps sort by time.
func RunStamp(t time.Time, config []byte) string {
	sum := sha256.Sum256(config)
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(sum[:4])
}

// CreateRunDir creates root/<experiment>/<stamp>/ and returns its path.
// Figures are derived data and are not written into it.
func CreateRunDir(root, experiment, stamp string) (string, error) {
	for _, s := range []string{experiment, stamp} {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, `/\`) {
			return "", fmt.Errorf("%w: %q", ErrBadExperiment, s)
		}
	}
	dir := filepath.Join(root, experiment, stamp)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("result: create run dir: %w", err)
	}
	return dir, nil
}

// CompressAbove is the encoded size above which WriteResult writes
// result.json.gz instead of result.json.
const CompressAbove = 4 << 20

// compressAbove is the threshold WriteResult uses: CompressAbove, lowered by
// tests so that they need not build 4 MiB results.
var compressAbove = CompressAbove

func marshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteManifest writes dir/manifest.json atomically.
func WriteManifest(dir string, m Manifest) error {
	if m.Schema == 0 {
		m.Schema = SchemaVersion
	}
	if len(m.Config) == 0 {
		m.Config = json.RawMessage("null")
	}
	b, err := marshalIndent(m)
	if err != nil {
		return fmt.Errorf("result: encode manifest: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, ManifestFile), b, 0o644)
}

// WriteResult normalizes and validates r, then writes dir/result.json
// atomically, or dir/result.json.gz (gzip, no name or time in its header, so
// the same result gives the same bytes) when the encoding is larger than
// CompressAbove. It removes the other of the two files if present.
func WriteResult(dir string, r Result) error {
	r.Cells = slices.Clone(r.Cells)
	r.Normalize()
	if err := r.Validate(); err != nil {
		return err
	}
	b, err := marshalIndent(r)
	if err != nil {
		return fmt.Errorf("result: encode result: %w", err)
	}
	name, stale := ResultFile, ResultGzFile
	if len(b) > compressAbove {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // the level is valid
		if _, err := zw.Write(b); err != nil {
			return fmt.Errorf("result: compress result: %w", err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("result: compress result: %w", err)
		}
		b = buf.Bytes()
		name, stale = ResultGzFile, ResultFile
	}
	if err := WriteFileAtomic(filepath.Join(dir, name), b, 0o644); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, stale)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("result: %w", err)
	}
	return nil
}

// FinishRun writes a run's last files: the Go bench file of cells, then the
// manifest, marked finished now with status.
func FinishRun(dir string, m Manifest, cells []Cell, status string) error {
	if err := WriteBenchFile(dir, m, cells); err != nil {
		return err
	}
	m.Finish(status, time.Now())
	return WriteManifest(dir, m)
}

// WriteBenchFile writes dir/bench.txt atomically (see WriteBench).
func WriteBenchFile(dir string, m Manifest, cells []Cell) error {
	var buf bytes.Buffer
	if err := WriteBench(&buf, m, cells); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, BenchFile), buf.Bytes(), 0o644)
}

// ReadManifest reads a manifest.json file.
func ReadManifest(path string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(path)
	if err != nil {
		return m, fmt.Errorf("result: %w", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("result: decode %s: %w", path, err)
	}
	return m, nil
}

// ReadResult reads and normalizes a result.json file, or a gzip'd one when
// path ends in ".gz". It does not Validate: a partial result is still
// readable.
func ReadResult(path string) (Result, error) {
	var r Result
	f, err := openDecompressed(path)
	if err != nil {
		return r, fmt.Errorf("result: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return r, fmt.Errorf("result: decode %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("result: decode %s: %w", path, err)
	}
	r.Normalize()
	return r, nil
}

// openDecompressed opens path for reading, through gzip when its name ends
// in ".gz". Errors from opening the file are returned unwrapped.
func openDecompressed(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return f, err
	}
	z, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return gzipFile{z, f}, nil
}

// gzipFile closes both the gzip reader and the file under it.
type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g gzipFile) Close() error { return errors.Join(g.Reader.Close(), g.f.Close()) }

// Run is a loaded run directory.
type Run struct {
	Dir      string
	Manifest *Manifest // nil when manifest.json is missing
	Result   Result
	// FromBench is set when result.json was missing and the cells were
	// read from bench.txt (they then carry no series, spectra, etc.).
	FromBench bool
}

// LoadRun reads a run directory: manifest.json when present, and
// result.json (or result.json.gz), or bench.txt when neither exists. It returns an
// error wrapping ErrNoResult when neither exists.
func LoadRun(dir string) (*Run, error) {
	run := &Run{Dir: dir}
	if m, err := ReadManifest(filepath.Join(dir, ManifestFile)); err == nil {
		run.Manifest = &m
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r, err := ReadResult(filepath.Join(dir, ResultFile))
	if errors.Is(err, fs.ErrNotExist) {
		r, err = ReadResult(filepath.Join(dir, ResultGzFile))
	}
	switch {
	case err == nil:
		run.Result = r
	case errors.Is(err, fs.ErrNotExist):
		f, err := os.Open(filepath.Join(dir, BenchFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoResult, dir)
		}
		if err != nil {
			return nil, fmt.Errorf("result: %w", err)
		}
		defer f.Close()
		cells, cfg, err := ReadBench(f, filepath.Join(dir, BenchFile))
		if err != nil {
			return nil, err
		}
		run.Result = Result{Schema: SchemaVersion, Experiment: cfg["experiment"], Cells: cells}
		run.Result.Normalize()
		run.FromBench = true
	default:
		return nil, err
	}
	if run.Result.Experiment == "" && run.Manifest != nil {
		run.Result.Experiment = run.Manifest.Experiment
	}
	return run, nil
}

// RunRef locates one run under a results root.
type RunRef struct {
	Experiment string
	Stamp      string
	Dir        string
}

// ListRuns lists root/<experiment>/<stamp>/ directories that hold a
// manifest.json, result.json or bench.txt, sorted by experiment then stamp
// (so, for RunStamp names, by time). A missing root yields no runs.
func ListRuns(root string) ([]RunRef, error) {
	exps, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("result: list runs: %w", err)
	}
	var out []RunRef
	for _, e := range exps {
		if !e.IsDir() {
			continue
		}
		stamps, err := os.ReadDir(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("result: list runs: %w", err)
		}
		for _, s := range stamps {
			dir := filepath.Join(root, e.Name(), s.Name())
			if s.IsDir() && isRunDir(dir) {
				out = append(out, RunRef{Experiment: e.Name(), Stamp: s.Name(), Dir: dir})
			}
		}
	}
	slices.SortFunc(out, func(a, b RunRef) int {
		if c := strings.Compare(a.Experiment, b.Experiment); c != 0 {
			return c
		}
		return strings.Compare(a.Stamp, b.Stamp)
	})
	return out, nil
}

func isRunDir(dir string) bool {
	for _, f := range []string{ManifestFile, ResultFile, ResultGzFile, BenchFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}
