// Package experiments runs brokerlab experiments: an experiment YAML file
// (engine config × workload × a matrix of swept parameters, warm-up,
// duration, repetitions, peers and declared pairings) becomes a run
// directory under results/ with Go benchmark lines (bench.txt),
// result.json, gzip'd .hlog interval logs, manifest.json (the resolved
// config, replayable with --replay) and ratios.txt. Figures and .hgrm
// tables are derived outside the run.
//
// Measurement rules: cells run in an order shuffled per repetition from the
// seed, with sync(2) and a settle pause between them; each records load
// average, pressure stall shares and the store device's write bytes and
// utilisation; comparisons are only the declared like-for-like pairings
// (pairing.go), reported as median and min–max over repetitions.
//
// The same Run is used by `brokerlab run` and by tests; the package owns no
// mutable globals.
package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/brokerlab/brokerlab/experiments/loopfs"
	"github.com/brokerlab/brokerlab/experiments/result"

	"github.com/brokerlab/brokerlab/engine/flush"
	"github.com/brokerlab/brokerlab/engine/iopath"
	"github.com/brokerlab/brokerlab/internal/bytesize"
	"github.com/brokerlab/brokerlab/workloads/randvar"
)

// ErrConfig marks every experiment-file error.
var ErrConfig = errors.New("experiments: bad experiment")

// Size is a byte count written with an optional KiB/MiB/GiB suffix.
type Size int64

// ParseSize parses "4096", "64KiB", "8MiB", "1GiB" (also KB/MB/GB as
// powers of 1024, and K/M/G): bytesize's syntax, an ErrConfig error.
func ParseSize(s string) (Size, error) {
	v, err := bytesize.Parse(s)
	if err != nil {
		return 0, fmt.Errorf("%w: size %q (want e.g. 4096, 64KiB, 8MiB, 1GiB)", ErrConfig, s)
	}
	return Size(v), nil
}

func (s Size) String() string { return bytesize.Format(int64(s)) }

// UnmarshalYAML accepts an integer or a suffixed string.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = v
	return nil
}

// MarshalYAML writes the suffixed form.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// MarshalText lets JSON manifests show the readable form.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the form MarshalText writes (replay of a manifest).
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Duration is a time.Duration written as "5s", "500ms".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("%w: line %d: duration %q (want e.g. 500ms, 10s, 2m)", ErrConfig, n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes the Go form.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads the Go form (replay of a manifest).
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil || v < 0 {
		return fmt.Errorf("%w: duration %q", ErrConfig, b)
	}
	*d = Duration(v)
	return nil
}

// D converts to time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Experiment is one experiment file.
type Experiment struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	// Seed makes every generator reproducible.
	Seed int64 `yaml:"seed" json:"seed"`
	// Warmup runs before measurement starts; Duration is measured.
	Warmup   Duration `yaml:"warmup" json:"warmup"`
	Duration Duration `yaml:"duration" json:"duration"`
	// Repetitions of every cell (>= 3 for reference runs).
	Repetitions int `yaml:"repetitions" json:"repetitions"`
	// Interval of histogram logs, probes and progress samples.
	Interval Duration `yaml:"interval" json:"interval"`
	Engine   Engine   `yaml:"engine" json:"engine"`
	Workload Workload `yaml:"workload" json:"workload"`
	// Matrix axes are swept as a cross product, first axis outermost.
	Matrix []Axis `yaml:"matrix" json:"matrix"`
	// Extra cells beside the matrix, each a set of matrix parameters applied
	// to the base (e.g. {path: direct, size: "65536"} for a large-append cell).
	Extra []map[string]string `yaml:"extra,omitempty" json:"extra,omitempty"`
	// Stall, if set, injects a stall into the engine's flushes.
	Stall *Stall `yaml:"stall,omitempty" json:"stall,omitempty"`
	// Peers run beside the brokerlab cells (fio, nats).
	Peers []string `yaml:"peers,omitempty" json:"peers,omitempty"`
	// PeerDuration is the measured time of each fio job (default: Duration).
	PeerDuration Duration `yaml:"peer_duration,omitempty" json:"peer_duration,omitempty"`
	// Quick overrides apply with --quick (CI-sized runs).
	Quick *Quick `yaml:"quick,omitempty" json:"quick,omitempty"`
	// Reference overrides apply with --reference; the reference minimums
	// (ReferenceWarmup, ReferenceReps, and ReferenceDuration when the
	// flush/writeback cycle matters) are then enforced on top.
	Reference *Quick `yaml:"reference,omitempty" json:"reference,omitempty"`
	// Writeback marks an experiment whose result depends on the flush and
	// kernel writeback cycle (async flushing, segment rolls, residency):
	// reference runs then measure at least ReferenceDuration. Any async
	// cell implies it.
	Writeback bool `yaml:"writeback,omitempty" json:"writeback,omitempty"`
	// Transient marks an experiment that measures a transient from a cold
	// start (the reclaim cliff: the page cache filling to its budget, then
	// reclaim). A reference run keeps the file's warm-up, since a 60 s
	// warm-up would pass the transient before measurement starts, and
	// measures ReferenceMinDuration instead of ReferenceDuration: the
	// transient and the steady state after it, across twelve writeback
	// periods and two dirty-expiry periods of the kernel's defaults. It
	// also keeps the file's sampling interval (a transient at a 5 s
	// interval would be a handful of points). Repetitions keep their
	// reference minimum.
	Transient bool `yaml:"transient,omitempty" json:"transient,omitempty"`
	// Settle is the pause after sync(2) between cells (default 2s), so one
	// cell's writeback does not land in the next one's measurement.
	Settle Duration `yaml:"settle,omitempty" json:"settle,omitempty"`
	// Pairings are the declared like-for-like comparisons (RATIO lines).
	Pairings []Pairing `yaml:"pairings,omitempty" json:"pairings,omitempty"`
	// Mode is how the durations were chosen: "quick", "reference" or ""
	// (the file's own values). Set by Run; recorded for replay.
	Mode string `yaml:"-" json:"mode,omitempty"`
}

// Reference-mode minimums (issue: measurements a reviewer would accept).
const (
	ReferenceWarmup   = Duration(60 * time.Second)
	ReferenceDuration = Duration(5 * time.Minute)
	// ReferenceInterval is the least reporting (and .hlog) interval of a
	// reference run.
	ReferenceInterval = Duration(5 * time.Second)
	// ReferenceMinDuration is the least any reference cell measures.
	ReferenceMinDuration = Duration(60 * time.Second)
	ReferenceReps        = 5
)

// Engine is the system under test.
type Engine struct {
	Path        string `yaml:"path" json:"path" pair:"system"` // mmap|pwrite|pool|direct|uncached (another system has its own)
	Flush       string `yaml:"flush" json:"flush"`             // sync|async|group|rmqgroup|dsync
	SegmentSize Size   `yaml:"segment_size" json:"segment_size" pair:"seg"`
	// Prealloc creates the next segment in the background.
	Prealloc *bool `yaml:"prealloc,omitempty" json:"prealloc,omitempty"`
	// Warm touches every page of a new segment; Mlock locks it.
	Warm  bool `yaml:"warm" json:"warm"`
	Mlock bool `yaml:"mlock" json:"mlock"`
	// Advice is the page-cache hint for segments (random, sequential, willneed).
	Advice string `yaml:"advice" json:"advice"`
	// CacheSize is the direct path's block cache.
	CacheSize Size `yaml:"cache_size" json:"cache_size"`
	// Budget runs the engine under a memory cgroup of this size (page-cache
	// budget); 0 = none.
	Budget Size `yaml:"budget" json:"budget"`
	// DontNeed drops the store's own files from the page cache every
	// interval (fadvise DONTNEED; never the machine's caches).
	DontNeed bool `yaml:"dontneed" json:"dontneed"`
	// Retain bounds the commit log by size during the run: the store's
	// cleaner runs every second and deletes the segments wholly more than
	// Retain behind the newest message (store.Config.RetainBytes), so a
	// long fast cell stays in a steady state instead of filling the disk.
	// 0 keeps everything.
	Retain Size `yaml:"retain,omitempty" json:"retain,omitempty"`
	// Async flush knobs (RocketMQ defaults when zero).
	FlushInterval Duration `yaml:"flush_interval" json:"flush_interval"`
	// CoalesceWait is group commit's coalescing window (0: RocketMQ's
	// flush-at-once).
	CoalesceWait Duration `yaml:"coalesce_wait" json:"coalesce_wait" pair:"coalesce"`
	// Transport: inproc (default), loopback (broker over remoting) or
	// process (the broker, and a NATS peer, in a child process over
	// loopback TCP, with the server's CPU per message measured; see
	// system_proc.go for what it refuses).
	Transport string `yaml:"transport" json:"transport"`
	// TLS runs the loopback broker's port in TLS enforcing mode (ephemeral
	// certificate) and the driver over TLS, so cells with tls on and off
	// show what TLS costs; with --namesrv the driver dials over TLS.
	TLS bool `yaml:"tls,omitempty" json:"tls,omitempty"`
	// Replication is none (default), async or sync: a slave store on
	// loopback fed by the broker's HA service as ASYNC_MASTER or
	// SYNC_MASTER (a send is acknowledged once the slave has it); transport
	// loopback only. RTT is the replication link's round trip, added by a
	// netdelay relay between slave and master (0: plain loopback).
	Replication string   `yaml:"replication,omitempty" json:"replication,omitempty"`
	RTT         Duration `yaml:"rtt,omitempty" json:"rtt,omitempty"`
	// FS runs the cell's store on a file system made for the run: ext4,
	// xfs or btrfs on a loop device over a sparse image under the store
	// root (experiments/loopfs; needs root and the mkfs tool). "" keeps
	// the store root's own file system. FSSize is the image size
	// (default DefaultFSSize); fio ceilings of such cells run on the same
	// mount.
	FS     string `yaml:"fs,omitempty" json:"fs,omitempty"`
	FSSize Size   `yaml:"fs_size,omitempty" json:"fs_size,omitempty"`
	// Stages records the per-stage latency breakdown of every send (the
	// broker's stages over loopback, the store's in process) as the cell's
	// stage.* metrics (experiments/stages.go).
	Stages bool `yaml:"stages,omitempty" json:"stages,omitempty"`
	// Client is the loopback producers' and consumers' client: brokerlab
	// (its own remoting client, workloads/netdriver; the default) or
	// rocketmq (the official Apache RocketMQ Go client,
	// workloads/rmqdriver, through an in-process name server) or rocketmq5
	// (the official RocketMQ 5 Go client, workloads/rmq5driver, over the
	// broker's gRPC front end with POP consumption: at most one tailing
	// consumer and no lagging one).
	Client string `yaml:"client,omitempty" json:"client,omitempty"`
}

// Workload drives the engine.
type Workload struct {
	Mode string `yaml:"mode" json:"mode" pair:"rate"` // closed|open (a rate selector sets open)
	// Producers: closed loop, concurrent producers; open loop, the workers
	// sharing the schedule (too few and the loop falls behind: send delay).
	Producers int     `yaml:"producers" json:"producers" pair:"conc"`
	Rate      float64 `yaml:"rate" json:"rate"`         // open loop: msg/s
	Schedule  string  `yaml:"schedule" json:"schedule"` // uniform|poisson
	Size      string  `yaml:"size" json:"size"`         // randvar spec: fixed:1024, uniform:128-4096, ...
	Topics    int     `yaml:"topics" json:"topics"`
	Queues    int     `yaml:"queues" json:"queues"`
	// QueueChoice picks a queue per message: roundrobin|uniform|zipf.
	QueueChoice string `yaml:"queue_choice" json:"queue_choice"`
	// Batch sends this many messages per request (1 = single sends).
	Batch int `yaml:"batch" json:"batch"`
	// Consumers.
	Tailing  int  `yaml:"tailing" json:"tailing"`
	Lagging  int  `yaml:"lagging" json:"lagging"`
	LagBytes Size `yaml:"lag_bytes" json:"lag_bytes"`
	// LagTail keeps lagging consumers reading as tailing ones once caught
	// up (OMB's backlog drain: consumers stay after the drain).
	LagTail bool `yaml:"lag_tail,omitempty" json:"lag_tail,omitempty"`
	// Prefill writes this much before the measured phase (for cold reads).
	Prefill Size `yaml:"prefill" json:"prefill"`
}

// Axis is one swept parameter.
type Axis struct {
	Param  string   `yaml:"param" json:"param"`
	Values []string `yaml:"values" json:"values"`
}

// Stall injects a flush stall at At for Length.
type Stall struct {
	At     Duration `yaml:"at" json:"at"`
	Length Duration `yaml:"length" json:"length"`
}

// Quick holds --quick overrides.
type Quick struct {
	Warmup      *Duration `yaml:"warmup,omitempty" json:"warmup,omitempty"`
	Duration    *Duration `yaml:"duration,omitempty" json:"duration,omitempty"`
	Repetitions *int      `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	Matrix      []Axis    `yaml:"matrix,omitempty" json:"matrix,omitempty"`
	// Extra replaces the extra cells when set (an empty list: none).
	Extra *[]map[string]string `yaml:"extra,omitempty" json:"extra,omitempty"`
	// PeerDuration caps the measured time of each fio job.
	PeerDuration *Duration `yaml:"peer_duration,omitempty" json:"peer_duration,omitempty"`
}

// Load reads and validates an experiment file. Unknown keys are errors.
func Load(path string) (*Experiment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	e, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// Parse decodes and validates YAML, filling defaults.
func Parse(b []byte) (*Experiment, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var e Experiment
	if err := dec.Decode(&e); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file", ErrConfig)
		}
		if errors.Is(err, ErrConfig) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	e.fillDefaults()
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return &e, nil
}

// ApplyQuick applies the --quick overrides.
func (e *Experiment) ApplyQuick() {
	e.Mode = "quick"
	e.applyOverrides(e.Quick)
	e.Settle = min(e.Settle, Duration(250*time.Millisecond))
}

// ApplyReference applies the --reference overrides, then raises warm-up,
// repetitions and the measured duration to the reference minimums (60 s,
// 5, 60 s; 5 min for an experiment marked Writeback; a Transient one keeps
// its warm-up and measures 60 s). Cells that flush
// asynchronously get at least 5 min each (see cellDurations), so durable
// cells are not stretched needlessly.
func (e *Experiment) ApplyReference() {
	e.Mode = "reference"
	e.applyOverrides(e.Reference)
	if !e.Transient {
		e.Warmup = max(e.Warmup, ReferenceWarmup)
	}
	e.Repetitions = max(e.Repetitions, ReferenceReps)
	e.Duration = max(e.Duration, ReferenceMinDuration)
	// jHiccup's 5 s reporting interval: long runs keep their gzip'd interval
	// logs within the results budget (about 1.5 KB per interval per cell).
	if !e.Transient { // a transient is sampled at the file's interval
		e.Interval = max(e.Interval, ReferenceInterval)
	}
	if e.Writeback && !e.Transient {
		e.Duration = max(e.Duration, ReferenceDuration)
	}
}

// cellDurations raises, in a reference run, the measured duration of every
// cell whose result depends on the flush/writeback cycle (async flushing,
// or an experiment marked Writeback) to ReferenceDuration.
func cellDurations(e *Experiment, cells []Cell) {
	if e.Mode != "reference" || e.Transient {
		return
	}
	for i := range cells {
		if cells[i].System == result.SystemFio {
			continue // a ceiling measures the peer duration
		}
		if e.Writeback || cells[i].Exp.Engine.Flush == "async" {
			cells[i].Exp.Duration = max(cells[i].Exp.Duration, ReferenceDuration)
		}
	}
}

// WritebackMatters reports whether the flush/writeback cycle shapes the
// result: Writeback is set, or some cell flushes asynchronously.
func (e *Experiment) WritebackMatters() bool {
	if e.Writeback {
		return true
	}
	cells, err := e.Cells()
	if err != nil {
		return e.Writeback
	}
	for _, c := range cells {
		if c.Exp.Engine.Flush == "async" {
			return true
		}
	}
	return false
}

func (e *Experiment) applyOverrides(q *Quick) {
	if q == nil {
		return
	}
	if q.Warmup != nil {
		e.Warmup = *q.Warmup
	}
	if q.Duration != nil {
		e.Duration = *q.Duration
	}
	if q.Repetitions != nil {
		e.Repetitions = *q.Repetitions
	}
	if q.Matrix != nil {
		e.Matrix = q.Matrix
	}
	if q.Extra != nil {
		e.Extra = *q.Extra
	}
	if q.PeerDuration != nil {
		e.PeerDuration = *q.PeerDuration
	}
}

func (e *Experiment) fillDefaults() {
	if e.Seed == 0 {
		e.Seed = 1
	}
	if e.Duration == 0 {
		e.Duration = Duration(5 * time.Second)
	}
	if e.Repetitions == 0 {
		e.Repetitions = 1
	}
	if e.Interval == 0 {
		e.Interval = Duration(time.Second)
	}
	if e.Settle == 0 {
		e.Settle = Duration(2 * time.Second)
	}
	en := &e.Engine
	if en.Path == "" {
		en.Path = "mmap"
	}
	if en.Flush == "" {
		en.Flush = "async"
	}
	if en.SegmentSize == 0 {
		en.SegmentSize = 64 << 20
	}
	if en.CacheSize == 0 {
		en.CacheSize = 64 << 20
	}
	if en.Transport == "" {
		en.Transport = "inproc"
	}
	if en.Replication == "" {
		en.Replication = "none"
	}
	if en.Client == "" {
		en.Client = ClientBrokerlab
	}
	w := &e.Workload
	if w.Mode == "" {
		w.Mode = "closed"
	}
	if w.Producers == 0 {
		w.Producers = 1 // closed loop: one producer
		if w.Mode == "open" {
			w.Producers = 64 // open loop: workers sharing the schedule
		}
	}
	if w.Schedule == "" {
		w.Schedule = "uniform"
	}
	if w.Size == "" {
		w.Size = "fixed:1024"
	}
	if w.Topics == 0 {
		w.Topics = 1
	}
	if w.Queues == 0 {
		w.Queues = 4
	}
	if w.QueueChoice == "" {
		w.QueueChoice = "roundrobin"
	}
	if w.Batch == 0 {
		w.Batch = 1
	}
}

// Validate checks every value, naming the key at fault.
func (e *Experiment) Validate() error {
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v: want %s", ErrConfig, key, v, want)
	}
	if e.Name == "" {
		return fmt.Errorf("%w: name is required", ErrConfig)
	}
	if e.Repetitions < 1 {
		return bad("repetitions", e.Repetitions, ">= 1")
	}
	if e.Duration <= 0 {
		return bad("duration", e.Duration, "> 0")
	}
	if err := validateEngine(e.Engine); err != nil {
		return err
	}
	w := e.Workload
	switch w.Mode {
	case "closed", "open":
	default:
		return bad("workload.mode", w.Mode, "closed or open")
	}
	if w.Mode == "open" && w.Rate <= 0 {
		return bad("workload.rate", w.Rate, "> 0 msg/s for an open loop")
	}
	switch w.Schedule {
	case "uniform", "poisson":
	default:
		return bad("workload.schedule", w.Schedule, "uniform or poisson")
	}
	switch w.QueueChoice {
	case "roundrobin", "uniform", "zipf":
	default:
		return bad("workload.queue_choice", w.QueueChoice, "roundrobin, uniform or zipf")
	}
	if w.Producers < 1 || w.Producers > 4096 {
		return bad("workload.producers", w.Producers, "1..4096")
	}
	if w.Topics < 1 || w.Queues < 1 || w.Batch < 1 {
		return bad("workload.topics/queues/batch", fmt.Sprint(w.Topics, "/", w.Queues, "/", w.Batch), ">= 1")
	}
	if err := validSizeSpec(w.Size); err != nil {
		return fmt.Errorf("%w: workload.size = %q: %v", ErrConfig, w.Size, err)
	}
	seen := map[string]bool{}
	for i, ax := range e.Matrix {
		if seen[ax.Param] {
			return bad(fmt.Sprintf("matrix[%d].param", i), ax.Param, "each parameter once")
		}
		seen[ax.Param] = true
		if len(ax.Values) == 0 {
			return bad(fmt.Sprintf("matrix[%d].values", i), "[]", "at least one value")
		}
		for _, v := range ax.Values {
			c := *e
			if err := c.set(ax.Param, v); err != nil {
				return fmt.Errorf("matrix[%d]: %w", i, err)
			}
			if err := validateEngine(c.Engine); err != nil {
				return fmt.Errorf("matrix[%d]: %w", i, err)
			}
		}
	}
	for i, ex := range e.Extra {
		c := *e
		for _, k := range sortedParamKeys(ex) {
			if err := c.set(k, ex[k]); err != nil {
				return fmt.Errorf("extra[%d]: %w", i, err)
			}
		}
		if err := validateEngine(c.Engine); err != nil {
			return fmt.Errorf("extra[%d]: %w", i, err)
		}
	}
	if e.Stall != nil && e.Stall.Length <= 0 {
		return bad("stall.length", e.Stall.Length, "> 0")
	}
	for _, p := range e.Peers {
		if p != "fio" && p != "nats" {
			return bad("peers", p, "fio or nats")
		}
	}
	if err := e.processStallError(); err != nil {
		return err
	}
	return e.validatePairings()
}

// validateDSync refuses a cell whose flush policy needs a durable write on
// a write path without one (dsync on mmap or pool). It is checked on whole
// cells (Cells), not per matrix value: a path axis may come later.
func validateDSync(en Engine) error {
	if flush.Kind(en.Flush).DurableWrites() && !iopath.SupportsDSync(iopath.Kind(en.Path)) {
		return fmt.Errorf("%w: engine.flush = %s: want a write path with a durable write (pwrite, uncached or direct), not path=%s", ErrConfig, en.Flush, en.Path)
	}
	return nil
}

func validateEngine(en Engine) error {
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("%w: engine.%s = %v: want %s", ErrConfig, key, v, want)
	}
	switch en.Path {
	case "mmap", "pwrite", "pool", "direct", "uncached":
	default:
		return bad("path", en.Path, "mmap, pwrite, pool, direct or uncached")
	}
	if _, err := flush.ParseKind(en.Flush); err != nil {
		return bad("flush", en.Flush, "one of "+strings.Join(flushNames(), ", "))
	}
	if en.SegmentSize < 64<<10 || en.SegmentSize%4096 != 0 {
		return bad("segment_size", en.SegmentSize, ">= 64KiB and a multiple of 4KiB")
	}
	switch en.Advice {
	case "", "normal", "random", "sequential", "willneed":
	default:
		return bad("advice", en.Advice, "normal, random, sequential or willneed")
	}
	switch en.Transport {
	case "inproc", "loopback", TransportProcess:
	default:
		return bad("transport", en.Transport, "inproc, loopback or process")
	}
	if err := processEngineError(en); err != nil {
		return err
	}
	switch en.Client {
	case ClientBrokerlab, ClientRocketMQ, ClientRocketMQ5:
	default:
		return bad("client", en.Client, "brokerlab, rocketmq or rocketmq5")
	}
	if (en.Client == ClientRocketMQ || en.Client == ClientRocketMQ5) && ((en.Transport != "loopback" && en.Transport != TransportProcess) || en.TLS) {
		return bad("client", en.Client, "transport loopback or process without tls (the official client speaks to the broker's port)")
	}
	if en.TLS && en.Transport != "loopback" {
		return bad("tls", "on", "transport loopback (TLS is on the broker's port)")
	}
	switch en.Replication {
	case "none", "async", "sync":
	default:
		return bad("replication", en.Replication, "none, async or sync")
	}
	if en.Replication != "none" && en.Transport != "loopback" {
		return bad("replication", en.Replication, "transport loopback (the HA service is the broker's)")
	}
	if en.RTT < 0 {
		return bad("rtt", en.RTT, "a round trip >= 0 (used with replication async or sync)")
	}
	if en.FS != "" && !slices.Contains(loopfs.Types, en.FS) {
		return bad("fs", en.FS, strings.Join(loopfs.Types, ", ")+" or empty (the store root's own)")
	}
	if en.FS != "" && en.FSSize != 0 && en.FSSize < 256<<20 {
		return bad("fs_size", en.FSSize, "at least 256MiB")
	}
	return nil
}

// set applies one matrix value to the experiment copy e.
func (e *Experiment) set(param, v string) error {
	bad := func(want string) error {
		return fmt.Errorf("%w: matrix value %s=%q: want %s", ErrConfig, param, v, want)
	}
	parseBool := func() (bool, error) {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, bad("true or false")
		}
		return b, nil
	}
	switch param {
	case "path":
		e.Engine.Path = v
	case "flush":
		e.Engine.Flush = v
	case "seg", "segment_size":
		s, err := ParseSize(v)
		if err != nil {
			return err
		}
		e.Engine.SegmentSize = s
	case "warm":
		b, err := parseBool()
		if err != nil {
			return err
		}
		e.Engine.Warm = b
	case "prealloc":
		b, err := parseBool()
		if err != nil {
			return err
		}
		e.Engine.Prealloc = &b
	case "dontneed":
		b, err := parseBool()
		if err != nil {
			return err
		}
		e.Engine.DontNeed = b
	case "advice":
		e.Engine.Advice = v
	case "coalesce":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return bad("a duration such as 200us")
		}
		e.Engine.CoalesceWait = Duration(d)
	case "budget":
		s, err := ParseSize(v)
		if err != nil {
			return err
		}
		e.Engine.Budget = s
	case "transport":
		e.Engine.Transport = v
	case "replication":
		e.Engine.Replication = v
	case "fs":
		e.Engine.FS = v
	case "rtt":
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return bad("a round-trip time such as 1ms")
		}
		e.Engine.RTT = Duration(d)
	case "client":
		e.Engine.Client = v
	case "stages":
		b, err := parseBool()
		if err != nil {
			return err
		}
		e.Engine.Stages = b
	case "tls":
		switch strings.ToLower(v) {
		case "on", "true":
			e.Engine.TLS = true
		case "off", "false":
			e.Engine.TLS = false
		default:
			return bad("on or off")
		}
	case "conc", "producers":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return bad("a producer count >= 1")
		}
		e.Workload.Producers = n
	case "rate":
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r <= 0 {
			return bad("a rate > 0 msg/s")
		}
		e.Workload.Rate = r
		e.Workload.Mode = "open"
	case "size":
		if _, err := strconv.Atoi(v); err == nil {
			v = "fixed:" + v
		}
		if err := validSizeSpec(v); err != nil {
			return bad("a message size or size spec")
		}
		e.Workload.Size = v
	case "batch":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return bad("a batch size >= 1")
		}
		e.Workload.Batch = n
	default:
		return fmt.Errorf("%w: unknown matrix parameter %q (have path, flush, seg, warm, prealloc, dontneed, advice, coalesce, budget, transport, replication, rtt, fs, conc, rate, size, batch, tls, client, stages)", ErrConfig, param)
	}
	return nil
}

// flushNames are the flush policies the engine knows.
func flushNames() []string {
	var out []string
	for _, k := range flush.AllKinds() {
		out = append(out, string(k))
	}
	return out
}

// validSizeSpec checks a message-size distribution spec.
func validSizeSpec(spec string) error {
	_, err := randvar.Parse(spec)
	return err
}
