// Package benchratio computes the engine's target ratios (issue 10's P1–P3)
// from Go benchmark results: the commit log against its fair raw baseline,
// group commit against async, sync and its physical limit, and the direct
// write path against fio's O_DIRECT ceiling.
//
// Input is the Go benchmark format (golang.org/x/perf/benchfmt): the output
// of
//
//	go test ./engine/commitlog -run '^$' -bench 'Append|RawPath' -count N
//
// plus, for P3, fio's JSON reports converted to the same format by
// WriteFioBench (benchmark FioWrite/direct=1/bs=65536/ioengine=libaio/
// iodepth=4). Every benchmark line is a sample; -count N gives N samples of
// each name. A ratio pairs samples by row name and count index: the i-th
// line of its numerator's row with the i-th line of its denominator's row
// (each row's own order in the files), and only where both lines report
// the unit, so a row that is skipped, or a line that omits a unit (a
// percentile from too few samples), never shifts another row's pairs. It
// reports the median and the min–max of those per-count ratios. A ratio
// whose paired lines ran different iteration counts (N) is refused unless
// its Spec says why its rows' work differs (WorkVaries): the engine
// benchmarks run a fixed N per row, equal for the rows a ratio divides.
package benchratio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// ErrNoSamples is wrapped by Read when a file holds no benchmark results.
var ErrNoSamples = errors.New("benchratio: no benchmark results")

// Samples holds every measurement of a set of benchmark files, by canonical
// name (the benchmark name without the "Benchmark" prefix and without the
// -GOMAXPROCS suffix, e.g. "Append/path=mmap/flush=group/size=1024/conc=64")
// and by unit as written in the file ("ns/op", "MB/s", "limit-ops/s"), in
// file order.
type Samples struct {
	m     map[string][]map[string]float64 // name → count index → unit → value
	iters map[string][]int                // name → count index → iterations (N)
	names []string                        // in first-seen order
}

// NewSamples returns an empty set.
func NewSamples() *Samples {
	return &Samples{m: map[string][]map[string]float64{}, iters: map[string][]int{}}
}

// ReadFiles reads benchmark files into one set.
func ReadFiles(paths ...string) (*Samples, error) {
	s := NewSamples()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		err = s.Read(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Read adds the results of one benchmark file (fileName names it in
// errors). Syntax errors fail the read: a malformed line means the run
// cannot be trusted.
func (s *Samples) Read(r io.Reader, fileName string) error {
	br := benchfmt.NewReader(r, fileName)
	n := 0
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return fmt.Errorf("benchratio: %w", rec)
		case *benchfmt.Result:
			s.add(rec)
			n++
		}
	}
	if err := br.Err(); err != nil {
		return fmt.Errorf("benchratio: read %s: %w", fileName, err)
	}
	if n == 0 {
		return fmt.Errorf("%w in %s", ErrNoSamples, fileName)
	}
	return nil
}

func (s *Samples) add(r *benchfmt.Result) {
	name := CanonicalName(r.Name)
	if _, ok := s.m[name]; !ok {
		s.names = append(s.names, name)
	}
	units := map[string]float64{}
	for _, v := range r.Values {
		unit, x := v.Unit, v.Value
		if v.OrigUnit != "" { // benchfmt tidies ns/op to sec/op; keep what was written
			unit, x = v.OrigUnit, v.OrigValue
		}
		units[unit] = x
	}
	idx := len(s.m[name])
	if p, err := strconv.Atoi(r.GetConfig(PassKey)); err == nil && p >= 1 && (p > idx || s.m[name][p-1] == nil) {
		idx = p - 1
	}
	for len(s.m[name]) <= idx { // passes this row has no line for stay empty
		s.m[name] = append(s.m[name], nil)
		s.iters[name] = append(s.iters[name], 0)
	}
	s.m[name][idx] = units
	s.iters[name][idx] = r.Iters
}

// PassKey is the file configuration key ("pass: 3") scripts/bench.sh writes
// before each row's run. A line under it is that row's sample at count
// index pass-1, so a row that failed in one pass leaves that index empty
// instead of shifting its later passes onto another row's.
const PassKey = "pass"

// Iters returns the iteration count (N) of each line of name, in count
// order (0 for a pass without a line).
func (s *Samples) Iters(name string) []int { return s.iters[name] }

// CanonicalName is n without its -GOMAXPROCS suffix.
func CanonicalName(n benchfmt.Name) string {
	base, parts := n.Parts()
	var b strings.Builder
	b.Write(base)
	for _, p := range parts {
		if len(p) > 0 && p[0] == '-' {
			continue // GOMAXPROCS
		}
		b.Write(p)
	}
	return b.String()
}

// Get returns the samples of name in unit (nil if absent), in count order,
// leaving out the lines without the unit (and the passes without a line).
func (s *Samples) Get(name, unit string) []float64 {
	var out []float64
	for _, c := range s.m[name] {
		if v, ok := c[unit]; ok {
			out = append(out, v)
		}
	}
	return out
}

// byCount returns name's value in unit at each count index, ok false where
// that line has no such unit.
func (s *Samples) byCount(name, unit string) (vs []float64, ok []bool) {
	for _, c := range s.m[name] {
		v, has := c[unit]
		vs, ok = append(vs, v), append(ok, has)
	}
	return vs, ok
}

// Names returns the benchmark names in first-seen order.
func (s *Samples) Names() []string { return s.names }

// Key returns the value of key in a name's "/key=value" parts ("" if
// absent).
func Key(name, key string) string {
	for _, p := range strings.Split(name, "/")[1:] {
		if k, v, ok := strings.Cut(p, "="); ok && k == key {
			return v
		}
	}
	return ""
}
