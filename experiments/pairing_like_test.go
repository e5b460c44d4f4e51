package experiments

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/brokerlab/brokerlab/experiments/result"
)

// otherValue returns a value of v's type different from v.
func otherValue(t *testing.T, name string, v reflect.Value) reflect.Value {
	t.Helper()
	n := reflect.New(v.Type()).Elem()
	switch v.Kind() {
	case reflect.Bool:
		n.SetBool(!v.Bool())
	case reflect.String:
		n.SetString(v.String() + "x")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n.SetInt(v.Int() + 4096)
	case reflect.Float32, reflect.Float64:
		n.SetFloat(v.Float() + 1)
	case reflect.Pointer:
		if v.IsNil() {
			n.Set(reflect.New(v.Type().Elem()))
		}
	case reflect.Slice:
		if v.IsNil() {
			n.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
	case reflect.Map:
		if v.IsNil() {
			n.Set(reflect.MakeMap(v.Type()))
		}
	default:
		t.Fatalf("%s: no other value for kind %s: teach otherValue", name, v.Kind())
	}
	return n
}

// For every attribute of the resolved configuration (found by reflection,
// so a knob added later is in this table too), two cells unlike in it alone
// are refused, and the refusal names it and both values.
func TestPairingUnlikeInEveryAttribute(t *testing.T) {
	e, err := Parse([]byte("name: like\nduration: 1s\nwarmup: 1s\nengine: {path: mmap, flush: group}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := e.Cells()
	if err != nil {
		t.Fatal(err)
	}
	p := Pairing{Name: "same", Num: map[string]string{"path": "mmap"}, Den: map[string]string{"path": "mmap"}, Metric: "msg/s"}
	num := cells[0]
	if err := checkLike(p, &num, &num); err != nil {
		t.Fatalf("a cell against itself: %v", err)
	}
	attrs := configAttrs(&num)
	names := map[string]bool{}
	for i, a := range attrs {
		names[a.Name] = true
		den := num
		da := configAttrs(&den)[i]
		if a.Name == "system" { // the cell's, not its configuration's
			den.System = result.SystemNATS
			da = configAttrs(&den)[i]
		} else {
			da.Value.Set(otherValue(t, a.Name, a.Value))
		}
		err := checkLike(p, &num, &den)
		want := a.Name + " differs (" + attrString(a.Value) + " vs " + attrString(da.Value) + ")"
		if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), want) {
			t.Errorf("cells unlike in %s: err = %v, want %q", a.Name, err, want)
		}
	}
	// The measured time and the warm-up are among them, and so are the knobs
	// the issue found unchecked.
	for _, n := range []string{"system", "duration", "warmup", "engine.tls", "engine.stages", "engine.budget", "engine.rtt",
		"engine.replication", "engine.fs", "engine.client", "engine.segment_size", "engine.advice", "workload.tailing",
		"workload.topics", "workload.queues", "workload.schedule"} {
		if !names[n] {
			t.Errorf("attribute %s is not compared (have %v)", n, names)
		}
	}
}

// What the selectors set differently is the pairing's variable; a knob the
// selectors leave alone must be equal, and the refusal names it.
func TestPairingVariableIsWhatSelectorsSet(t *testing.T) {
	const base = `
name: vary
engine: {path: mmap, flush: group, transport: loopback}
workload: {mode: open, rate: 1000}
extra:
  - {path: pwrite}
  - {path: direct, tls: on, stages: "true", budget: 256MiB}
pairings:
`
	if _, err := Parse([]byte(base + "  - {name: ok, numerator: {path: pwrite}, denominator: {path: mmap}, metric: p99}\n")); err != nil {
		t.Fatalf("path alone varies: %v", err)
	}
	_, err := Parse([]byte(base + "  - {name: knobs, numerator: {path: direct, tls: on}, denominator: {path: mmap}, metric: p99}\n"))
	for _, want := range []string{"engine.stages differs (true vs false)", "engine.budget differs (256MiB vs 0)"} {
		if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "engine.tls") {
		t.Errorf("tls is the pairing's variable, yet refused: %v", err)
	}
}

// A reference run lengthens the async cells; each pairing's two cells are
// then measured for the same time (the longer), so the replication
// pairings divide like durations.
func TestReferencePairsMeasureEqualDurations(t *testing.T) {
	e, err := Load("replication.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := NewPlan(e, Options{Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pl.Exp.Pairings {
		num, err1 := selectOne(p, "numerator", p.Num, pl.All)
		den, err2 := selectOne(p, "denominator", p.Den, pl.All)
		if err1 != nil || err2 != nil {
			continue
		}
		if num.Exp.Duration != den.Exp.Duration || num.Exp.Duration.D() < 5*time.Minute && num.Exp.Engine.Flush == "async" {
			t.Errorf("%s: %v / %v measured", p.Name, num.Exp.Duration.D(), den.Exp.Duration.D())
		}
	}
	// Had they differed, the pairing would be refused naming the duration.
	num := pl.Cells[0]
	den := num
	den.Exp.Duration = num.Exp.Duration * 5
	err = checkLike(Pairing{Name: "d", Metric: "msg/s"}, &num, &den)
	if !errors.Is(err, ErrUnlikePair) || !strings.Contains(err.Error(), "duration differs") {
		t.Fatalf("unlike durations: %v", err)
	}
}
