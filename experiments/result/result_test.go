package result

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestResultJSONRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := Result{Experiment: "e1-write-paths", Cells: sampleCells()}
	if err := WriteResult(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResult(filepath.Join(dir, ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	want.Normalize() // fills Schema, Params
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip differs:\n got %+v\nwant %+v", got, want)
	}
	if got.Cells[0].Params["conc"] != "64" || got.Cells[2].Params["sync"] != "fdatasync" {
		t.Fatalf("params not filled from names: %v %v", got.Cells[0].Params, got.Cells[2].Params)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ResultFile))
	for _, field := range []string{`"duration_ns"`, `"msg_per_sec"`, `"p999_ns"`, `"spectrum"`, `"residency"`, `"flush_batches"`, `"up_to"`, `"primary_metric"`, `"hgrm_unit_ns"`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("result.json lacks %s", field)
		}
	}
}

func TestWriteResultDoesNotMutateInput(t *testing.T) {
	cells := sampleCells()
	cells[1].Params = nil
	if err := WriteResult(t.TempDir(), Result{Experiment: "x", Cells: cells}); err != nil {
		t.Fatal(err)
	}
	if cells[1].Params != nil {
		t.Fatal("WriteResult filled the caller's Params")
	}
}

func TestValidateRejects(t *testing.T) {
	cases := map[string]struct {
		mutate func(c []Cell) []Cell
		want   error
		field  string
	}{
		"nan quantile": {func(c []Cell) []Cell {
			q := c[0].Quantiles["e2e"]
			q.P99 = math.NaN()
			c[0].Quantiles["e2e"] = q
			return c
		}, ErrInvalid, "quantiles.e2e"},
		"inf series":      {func(c []Cell) []Cell { c[0].Series[1].DirtyMiB = math.Inf(1); return c }, ErrInvalid, "series[1]"},
		"inf residency":   {func(c []Cell) []Cell { c[0].Residency.Fraction[1][0] = math.Inf(-1); return c }, ErrInvalid, "residency.fraction[1][0]"},
		"residency shape": {func(c []Cell) []Cell { c[0].Residency.T = c[0].Residency.T[:1]; return c }, ErrInvalid, "residency row"},
		"duplicate":       {func(c []Cell) []Cell { c[1].Rep = 0; return c }, ErrInvalid, "duplicate"},
		"bad name":        {func(c []Cell) []Cell { c[2].Name = "no-equals"; c[2].Params = nil; return c }, ErrBadName, "not key=value"},
		"space in name":   {func(c []Cell) []Cell { c[2].Name = "a=b c"; c[2].Params = nil; return c }, ErrBadName, "white space"},
		"params disagree": {func(c []Cell) []Cell {
			c[2].Params = map[string]string{"bs": "8k", "sync": "fdatasync"}
			return c
		}, ErrInvalid, "disagree"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Result{Experiment: "x", Cells: tc.mutate(sampleCells())}
			r.Normalize()
			err := r.Validate()
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate() = %v, want %v mentioning %q", err, tc.want, tc.field)
			}
			if err := WriteResult(t.TempDir(), r); !errors.Is(err, tc.want) {
				t.Fatalf("WriteResult() = %v, want %v", err, tc.want)
			}
		})
	}
	ok := Result{Experiment: "x", Cells: sampleCells()}
	ok.Normalize()
	if err := ok.Validate(); err != nil {
		t.Fatalf("sample is invalid: %v", err)
	}
}

func TestNames(t *testing.T) {
	ps := []Param{{"path", "mmap"}, {"flush", "group"}, {"seg", "64MiB"}}
	name := FormatName(ps...)
	if name != "path=mmap/flush=group/seg=64MiB" {
		t.Fatalf("FormatName = %q", name)
	}
	got, err := ParseName(name)
	if err != nil || !reflect.DeepEqual(got, ps) {
		t.Fatalf("ParseName = %v, %v", got, err)
	}
	for _, bad := range []string{"", "a=1/b", "=1", "a=1/a=2", "a=1 b=2", "rate=-1", "a=x-12"} {
		if _, err := ParseName(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("ParseName(%q) = %v, want ErrBadName", bad, err)
		}
	}
	if _, err := ParseName("a=x-y/b="); err != nil {
		t.Errorf("empty value and inner dash should parse: %v", err)
	}
	if got := FileStem("path=mmap/flush=group/key=a b*c", 2); got != "path=mmap,flush=group,key=a_b_c.r2" {
		t.Errorf("FileStem = %q", got)
	}
	if got := HgrmName("a=1/b=2", 0, "e2e"); got != "a=1,b=2.r0.e2e.hgrm" {
		t.Errorf("HgrmName = %q", got)
	}
	if got := HlogName("a=1", 3); got != "a=1.r3.hlog" {
		t.Errorf("HlogName = %q", got)
	}
}

func TestPrimaryMetric(t *testing.T) {
	c := Cell{Quantiles: map[string]Quantiles{"e2e": {}, "append": {}, "flush": {}}}
	if got := c.PrimaryMetric(); got != "append" {
		t.Fatalf("default primary = %q, want the alphabetically first", got)
	}
	c.Primary = "e2e"
	if got := c.PrimaryMetric(); got != "e2e" {
		t.Fatalf("primary = %q", got)
	}
	if got := (&Cell{}).PrimaryMetric(); got != "" {
		t.Fatalf("empty primary = %q", got)
	}
}

// A result larger than CompressAbove is written gzip'd, read back equal, and
// written to the same bytes twice; a later small result replaces it.
func TestWriteResultCompressesLarge(t *testing.T) {
	defer func(old int) { compressAbove = old }(compressAbove)
	compressAbove = 64 << 10
	root := t.TempDir()
	dir, err := CreateRunDir(root, "segments", "s1")
	if err != nil {
		t.Fatal(err)
	}
	cells := sampleCells()
	for i := range 4_000 {
		cells[0].Markers = append(cells[0].Markers, Marker{T: float64(i) / 1000, Kind: "roll", Label: "roll"})
	}
	want := Result{Experiment: "segments", Cells: cells}
	if err := WriteResult(dir, want); err != nil {
		t.Fatal(err)
	}
	if refs, err := ListRuns(root); err != nil || len(refs) != 1 {
		t.Fatalf("ListRuns finds no run holding only result.json.gz: %v %v", refs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ResultFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("result.json beside result.json.gz: %v", err)
	}
	first, err := os.ReadFile(filepath.Join(dir, ResultGzFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(first) > compressAbove {
		t.Fatalf("compressed result is %d bytes", len(first))
	}
	run, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	want.Normalize()
	if !reflect.DeepEqual(run.Result, want) {
		t.Fatal("gzip'd result read back differs")
	}
	if err := WriteResult(dir, want); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, ResultGzFile)); !bytes.Equal(again, first) {
		t.Fatal("the same result compressed to different bytes")
	}
	if err := WriteResult(dir, Result{Experiment: "segments", Cells: sampleCells()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ResultGzFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale result.json.gz kept beside result.json: %v", err)
	}
}
