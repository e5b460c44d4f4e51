package experiments

import (
	"errors"
	"strings"
	"testing"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// replBase is a replication experiment: fsync on the master, a copy on a
// replica, or both, over loopback.
const replBase = `
name: repl
warmup: 1s
duration: 1s
engine: {path: mmap, transport: loopback}
workload: {mode: closed, producers: 8, size: fixed:1024}
matrix:
  - param: flush
    values: [async, group]
  - param: replication
    values: [sync]
  - param: rtt
    values: [0s, 1ms]
extra:
  - {flush: group, replication: none}
`

func parseRepl(pairings string) (*Experiment, error) {
	return Parse([]byte(replBase + "pairings:\n" + pairings))
}

// A copy on a replica and an fsync are different durability: refused unless
// the pairing declares that it compares durability, and then named in its
// RATIO line.
func TestPairingComparesDurability(t *testing.T) {
	const pair = `  - name: replicate_vs_fsync_rtt0
    numerator: {flush: async, replication: sync, rtt: 0s}
    denominator: {flush: group, replication: none}
    metric: msg/s
`
	_, err := parseRepl(pair)
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(),
		"durability differs (acknowledged once a replica holds it, before fsync vs acknowledged after fsync)") {
		t.Fatalf("undeclared durability comparison: err = %v", err)
	}
	both := `  - name: replicate_and_fsync_vs_fsync_rtt0
    numerator: {flush: group, replication: sync, rtt: 0s}
    denominator: {flush: group, replication: none}
    metric: msg/s
`
	if _, err := parseRepl(both); !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(),
		"acknowledged after fsync and once a replica holds it vs acknowledged after fsync") {
		t.Fatalf("fsync + replica vs fsync alone: err = %v", err)
	}

	e, err := parseRepl(pair + "    compares: durability\n" + both + "    compares: durability\n")
	if err != nil {
		t.Fatal(err)
	}
	all, err := e.AllCells()
	if err != nil {
		t.Fatal(err)
	}
	var cells []result.Cell
	for rep := range 3 {
		cells = append(cells,
			rcell("", "path=mmap/flush=async/replication=sync/rtt=0s", rep, 2000),
			rcell("", "path=mmap/flush=group/replication=sync/rtt=0s", rep, 800),
			rcell("", "path=mmap/flush=group/replication=none", rep, 1000))
	}
	rs := ComputeRatios(e.Pairings, all, cells)
	if len(rs) != 2 || rs[0].Missing != "" || rs[0].Stat.Median != 2 || rs[1].Stat.Median != 0.8 {
		t.Fatalf("ratios %+v", rs)
	}
	line := rs[0].String()
	if !strings.Contains(line, "RATIO replicate_vs_fsync_rtt0 2.0 [2.0–2.0] n=3") ||
		!strings.Contains(line, "declared to differ in durability: acknowledged once a replica holds it, before fsync vs acknowledged after fsync") {
		t.Fatalf("ratio line %q", line)
	}
}

// The declaration is checked: it must name durability, the cells must differ
// in it, and every other property must still match.
func TestPairingComparesChecked(t *testing.T) {
	for _, tc := range []struct{ p, want string }{
		{`{name: rtt, numerator: {flush: group, replication: sync, rtt: 1ms}, denominator: {flush: group, replication: sync, rtt: 0s}, metric: msg/s, compares: durability}`,
			"declares compares: durability, but both cells are acknowledged after fsync and once a replica holds it"},
		{`{name: sizes, numerator: {flush: async, replication: sync, rtt: 0s}, denominator: {flush: group, replication: none}, metric: msg/s, compares: size}`,
			`compares "size": only "durability" may be declared`},
		{`{name: latency, numerator: {flush: async, replication: sync, rtt: 0s}, denominator: {flush: group, replication: none}, metric: p99, compares: durability}`,
			"latency is compared in open loop only"},
	} {
		_, err := parseRepl("  - " + tc.p + "\n")
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.p, err, tc.want)
		}
	}
	// Same durability and nothing declared: a plain like-for-like pairing.
	if _, err := parseRepl("  - {name: rtt_1ms_vs_0, numerator: {flush: group, replication: sync, rtt: 1ms}, denominator: {flush: group, replication: sync, rtt: 0s}, metric: msg/s}\n"); err != nil {
		t.Fatal(err)
	}
}
