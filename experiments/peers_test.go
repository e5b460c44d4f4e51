package experiments

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

const pairBase = `
name: pairs
settle: 1ms
engine: {segment_size: 1MiB}
workload: {mode: closed, producers: 8, size: fixed:1024}
matrix:
  - {param: path, values: [mmap]}
  - {param: flush, values: [sync, group, async]}
extra:
  - {path: mmap, flush: group, transport: loopback}
  - {path: mmap, flush: async, transport: loopback}
  - {path: mmap, flush: group, transport: loopback, rate: "2000"}
  - {path: mmap, flush: sync, size: "4096"}
  - {path: mmap, flush: sync, conc: "2"}
  - {path: direct, flush: async, size: "65536", conc: "4"}
peers: [nats, fio]
`

func parsePairs(t *testing.T, pairings string) (*Experiment, error) {
	t.Helper()
	return Parse([]byte(pairBase + "pairings:\n" + pairings))
}

// Like-for-like pairings are accepted: same transport, size, producers,
// durability and loop type.
func TestPairingsLikeForLikeAccepted(t *testing.T) {
	e, err := parsePairs(t, `
  - name: group_commit_vs_per_message_fsync
    numerator: {path: mmap, flush: group, transport: inproc}
    denominator: {path: mmap, flush: sync, transport: inproc, size: "1024", conc: "8"}
    metric: msg/s
  - name: group_commit_vs_syncalways_loopback
    numerator: {system: brokerlab, flush: group, transport: loopback, mode: closed}
    denominator: {system: nats, flush: sync, mode: closed}
    metric: msg/s
  - name: async_vs_nats_async_loopback
    numerator: {system: brokerlab, flush: async, transport: loopback}
    denominator: {system: nats, flush: async}
    metric: msg/s
  - name: p99_group_commit_vs_syncalways_open_2k
    numerator: {system: brokerlab, flush: group, transport: loopback, rate: "2000"}
    denominator: {system: nats, rate: "2000"}
    metric: p99
  - name: direct_append_vs_fio_direct
    numerator: {path: direct, size: "65536"}
    denominator: {system: fio, path: direct, size: "65536", conc: "4"}
    metric: MB/s
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Pairings) != 5 {
		t.Fatalf("pairings %+v", e.Pairings)
	}
}

// Every unlike pairing is refused with an error naming what differs.
func TestPairingsUnlikeRejected(t *testing.T) {
	for _, tc := range []struct {
		name, num, den, metric, want string
	}{
		{"inproc_vs_nats_wire", "{path: mmap, flush: sync, transport: inproc, size: \"1024\", conc: \"8\"}", "{system: nats, flush: sync, mode: closed}", "msg/s",
			"transport differs (in-process call (no protocol) vs loopback TCP)"},
		{"sizes", "{path: mmap, flush: sync, size: \"4096\"}", "{path: mmap, flush: sync, transport: inproc, size: \"1024\", conc: \"8\"}", "msg/s",
			"message size differs (4096 vs 1024)"},
		{"producers", "{path: mmap, flush: sync, conc: \"2\"}", "{path: mmap, flush: group, transport: inproc}", "msg/s",
			"producer count differs (2 vs 8)"},
		{"durability", "{path: mmap, flush: async, transport: inproc}", "{path: mmap, flush: group, transport: inproc}", "msg/s",
			"durability differs (acknowledged before fsync vs acknowledged after fsync)"},
		{"closed_loop_latency", "{path: mmap, flush: group, transport: inproc}", "{path: mmap, flush: sync, transport: inproc, size: \"1024\", conc: \"8\"}", "p99",
			"latency is compared in open loop only"},
		{"open_vs_closed", "{flush: group, transport: loopback, rate: \"2000\"}", "{system: nats, flush: sync, mode: closed}", "msg/s",
			"loop type differs (open vs closed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parsePairs(t, "  - {name: "+tc.name+", numerator: "+tc.num+", denominator: "+tc.den+", metric: "+tc.metric+"}\n")
			if !errors.Is(err, ErrUnlikePair) || !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want ErrUnlikePair", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// Selectors must name exactly one cell; metrics and names are checked.
func TestPairingsSelectorErrors(t *testing.T) {
	for _, tc := range []struct{ p, want string }{
		{"{name: amb, numerator: {path: mmap, flush: group}, denominator: {path: mmap, flush: sync, conc: \"2\"}, metric: msg/s}", "matches 3 cells"},
		{"{name: none, numerator: {path: pool}, denominator: {path: mmap, flush: sync, conc: \"2\"}, metric: msg/s}", "matches no cell"},
		{"{name: metric, numerator: {flush: async, transport: inproc, path: mmap}, denominator: {flush: async, system: nats}, metric: best}", "metric \"best\""},
		{"{name: \"bad name\", numerator: {path: mmap}, denominator: {path: mmap}, metric: msg/s}", "pairing name"},
		{"{name: same, numerator: {path: mmap, flush: sync, conc: \"2\"}, denominator: {path: mmap, flush: sync, conc: \"2\"}, metric: msg/s}", "same cell"},
	} {
		_, err := parsePairs(t, "  - "+tc.p+"\n")
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.p, err, tc.want)
		}
	}
}

// NATS peers mirror the loopback cells only, and always over TCP; fio
// ceilings follow the in-process cells' size, producers and sync pattern.
func TestPeerAndFioCells(t *testing.T) {
	e, err := Parse([]byte(pairBase))
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.AllCells()
	if err != nil {
		t.Fatal(err)
	}
	var nats, fio []string
	for _, c := range all {
		switch c.System {
		case result.SystemNATS:
			nats = append(nats, c.Name)
			if c.Exp.Engine.Transport != "loopback" {
				t.Errorf("nats cell %s not over loopback", c.Name)
			}
		case result.SystemFio:
			fio = append(fio, c.Name)
		}
	}
	wantNATS := []string{"path=jetstream/flush=sync/transport=loopback", "path=jetstream/flush=async/transport=loopback",
		"path=jetstream/flush=sync/transport=loopback/rate=2000"}
	if strings.Join(nats, ",") != strings.Join(wantNATS, ",") {
		t.Errorf("nats cells %v, want %v", nats, wantNATS)
	}
	for _, want := range []string{
		"path=direct/flush=sync/size=1024/conc=8/ceiling=device",
		"path=direct/flush=group/size=1024/conc=8/ceiling=device",
		"path=direct/flush=none/size=1024/conc=8/ceiling=device",
		"path=buffered/flush=none/size=1024/conc=8/ceiling=page-cache",
		"path=direct/flush=none/size=65536/conc=4/ceiling=device",
	} {
		if !strings.Contains(strings.Join(fio, ","), want) {
			t.Errorf("fio cells %v lack %s", fio, want)
		}
	}
}

func rcell(sys, name string, rep int, msgs float64) result.Cell {
	return result.Cell{System: sys, Name: name, Rep: rep, MsgPerSec: msgs, Primary: "service", Ops: 1,
		Quantiles: map[string]result.Quantiles{"service": {P50: 1, P99: 1e6 / msgs, Count: 1}}}
}

// A ratio is per repetition, then median with min–max: never best-of-N.
func TestComputeRatiosMedianNotBest(t *testing.T) {
	e, err := parsePairs(t, `
  - name: group_commit_vs_per_message_fsync
    numerator: {path: mmap, flush: group, transport: inproc}
    denominator: {path: mmap, flush: sync, transport: inproc, size: "1024", conc: "8"}
    metric: msg/s
`)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := e.AllCells()
	g, s := "path=mmap/flush=group", "path=mmap/flush=sync"
	cells := []result.Cell{
		rcell("brokerlab", g, 0, 3000), rcell("brokerlab", s, 0, 1000), // 3
		rcell("brokerlab", g, 1, 9000), rcell("brokerlab", s, 1, 1000), // 9 (best)
		rcell("brokerlab", g, 2, 4000), rcell("brokerlab", s, 2, 1000), // 4
	}
	failed := rcell("brokerlab", g, 3, 1e9)
	failed.Error = "interrupted"
	cells = append(cells, failed, rcell("brokerlab", s, 3, 1))
	rs := ComputeRatios(e.Pairings, all, cells)
	if len(rs) != 1 || rs[0].Stat != (result.Stat{Min: 3, Median: 4, Max: 9, N: 3}) {
		t.Fatalf("ratios %+v", rs)
	}
	line := rs[0].String()
	if !strings.HasPrefix(line, "RATIO group_commit_vs_per_message_fsync 4.0 [3.0–9.0] n=3\t# path=mmap/flush=group / path=mmap/flush=sync (msg/s") {
		t.Fatalf("line %q", line)
	}
	if rs := ComputeRatios(e.Pairings, all, nil); rs[0].Missing == "" || !strings.Contains(rs[0].String(), "n/a") {
		t.Fatalf("no data: %+v", rs)
	}
}

func TestSig2(t *testing.T) {
	for v, want := range map[float64]string{0.3333: "0.33", 4.452: "4.5", 2.38: "2.4", 123.4: "120", 9.96: "10", 0.0996: "0.10", 1: "1.0", 0.001234: "0.0012"} {
		if got := Sig2(v); got != want {
			t.Errorf("Sig2(%v) = %s, want %s", v, got, want)
		}
	}
}

// A reference matrix narrower than the file's may leave a pairing's cells
// out: the pairing validates (like quick) and its RATIO line says n/a and
// why; a pairing that matches no cell in the file's own matrix is an error.
func TestReferenceMatrixLeavesPairingOut(t *testing.T) {
	const doc = `
name: narrow
workload: {mode: closed, producers: 4, size: "fixed:128"}
matrix:
  - {param: path, values: [mmap, pwrite]}
  - {param: flush, values: [sync, group]}
reference:
  matrix:
    - {param: path, values: [mmap]}
    - {param: flush, values: [sync, group]}
pairings:
  - {name: mmap_group_vs_sync, numerator: {path: mmap, flush: group}, denominator: {path: mmap, flush: sync}, metric: msg/s}
  - {name: pwrite_group_vs_sync, numerator: {path: pwrite, flush: group}, denominator: {path: pwrite, flush: sync}, metric: msg/s}
`
	e, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	r := *e
	r.ApplyReference()
	if err := r.Validate(); err != nil {
		t.Fatalf("reference: %v", err)
	}
	cells, err := r.Cells()
	if err != nil || len(cells) != 2 {
		t.Fatalf("reference cells %d %v", len(cells), err)
	}
	rs := ComputeRatios(r.Pairings, cells, nil)
	if len(rs) != 2 || !strings.Contains(rs[1].String(), "n/a") || !strings.Contains(rs[1].Missing, "leaves its cells out") {
		t.Fatalf("ratios %+v", rs)
	}
	bad := strings.Replace(doc, "pwrite_group_vs_sync, numerator: {path: pwrite", "pool_group_vs_sync, numerator: {path: pool", 1)
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "matches no cell") {
		t.Fatalf("a pairing outside the file's matrix: %v", err)
	}
}
