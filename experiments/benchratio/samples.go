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
// each name. A ratio pairs the i-th sample of its numerator with the i-th
// sample of its denominator (the runs' order in the files) and reports the
// median and the min–max of those per-count ratios.
package benchratio

import (
	"errors"
	"fmt"
	"io"
	"os"
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
	m     map[string]map[string][]float64
	names []string // in first-seen order
}

// NewSamples returns an empty set.
func NewSamples() *Samples { return &Samples{m: map[string]map[string][]float64{}} }

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
	units, ok := s.m[name]
	if !ok {
		units = map[string][]float64{}
		s.m[name] = units
		s.names = append(s.names, name)
	}
	for _, v := range r.Values {
		unit, x := v.Unit, v.Value
		if v.OrigUnit != "" { // benchfmt tidies ns/op to sec/op; keep what was written
			unit, x = v.OrigUnit, v.OrigValue
		}
		units[unit] = append(units[unit], x)
	}
}

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

// Get returns the samples of name in unit (nil if absent).
func (s *Samples) Get(name, unit string) []float64 { return s.m[name][unit] }

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
