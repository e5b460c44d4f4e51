// Package omb runs OpenMessaging Benchmark (OMB) workload files with
// brokerlab: a workload YAML exactly as OMB reads it (Workload.java's keys)
// is detected by its keys, mapped onto a brokerlab experiment (open loop at
// producerRate against the embedded broker, or a running one with
// --namesrv), and run; producerRate 0 first searches the maximum
// sustainable rate (search.go), consumerBacklogSizeGB > 0 builds a backlog
// with the consumers absent and measures its drain (mapping.go). Every run
// writes OMB's result JSON beside result.json (experiments/ombresult).
//
// Concurrency: the functions are safe for concurrent use; a Workload is a
// plain value owned by its caller.
package omb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrWorkload marks an unreadable or invalid OMB workload file.
var ErrWorkload = errors.New("omb: bad workload")

// Key distributors (OMB's KeyDistributorType).
const (
	NoKey          = "NO_KEY"
	KeyRoundRobin  = "KEY_ROUND_ROBIN"
	KeyRandomNano  = "RANDOM_NANO"
	defaultWarmupM = 1 // Workload.java: warmupDurationMinutes = 1
)

// Workload is OMB's Workload.java, key for key. Pointers mark the keys
// whose absence differs from zero.
type Workload struct {
	Name                      string   `yaml:"name"`
	Topics                    int      `yaml:"topics"`
	PartitionsPerTopic        int      `yaml:"partitionsPerTopic"`
	KeyDistributor            string   `yaml:"keyDistributor"`
	MessageSize               int      `yaml:"messageSize"`
	UseRandomizedPayloads     bool     `yaml:"useRandomizedPayloads"`
	RandomBytesRatio          float64  `yaml:"randomBytesRatio"`
	RandomizedPayloadPoolSize int      `yaml:"randomizedPayloadPoolSize"`
	PayloadFile               string   `yaml:"payloadFile"`
	SubscriptionsPerTopic     int      `yaml:"subscriptionsPerTopic"`
	ProducersPerTopic         int      `yaml:"producersPerTopic"`
	ConsumerPerSubscription   int      `yaml:"consumerPerSubscription"`
	ProducerRate              int      `yaml:"producerRate"`
	ConsumerBacklogSizeGB     int64    `yaml:"consumerBacklogSizeGB"`
	BacklogDrainRatio         *float64 `yaml:"backlogDrainRatio"`
	TestDurationMinutes       int      `yaml:"testDurationMinutes"`
	WarmupDurationMinutes     *int     `yaml:"warmupDurationMinutes"`
}

// distinctive are keys only an OMB workload has; brokerlab's experiment
// files have the keys in foreign instead.
var (
	distinctive = []string{"partitionsPerTopic", "producersPerTopic", "subscriptionsPerTopic",
		"consumerPerSubscription", "producerRate", "testDurationMinutes", "consumerBacklogSizeGB", "messageSize"}
	foreign = []string{"engine", "workload", "matrix"}
)

// Detect reports whether b is an OMB workload: a YAML mapping with at
// least one of OMB's distinctive keys and none of a brokerlab experiment's
// (engine, workload, matrix).
func Detect(b []byte) bool {
	var m map[string]any
	if yaml.Unmarshal(b, &m) != nil {
		return false
	}
	found := false
	for k := range m {
		if slices.Contains(foreign, k) {
			return false
		}
		found = found || slices.Contains(distinctive, k)
	}
	return found
}

// IsWorkloadFile reports whether the file at path is an OMB workload
// (false for an unreadable file: the experiment loader reports that).
func IsWorkloadFile(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && Detect(b)
}

// Load reads and validates an OMB workload file.
func Load(path string) (*Workload, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWorkload, err)
	}
	w, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// Parse decodes an OMB workload. A key OMB does not have is an error
// naming it (never silently ignored).
func Parse(b []byte) (*Workload, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var w Workload
	if err := dec.Decode(&w); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty file", ErrWorkload)
		}
		return nil, fmt.Errorf("%w: %w", ErrWorkload, err)
	}
	if w.KeyDistributor == "" {
		w.KeyDistributor = NoKey
	}
	if err := w.Validate(); err != nil {
		return nil, err
	}
	return &w, nil
}

// Validate checks the values, naming the key at fault.
func (w *Workload) Validate() error {
	bad := func(key string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v: want %s", ErrWorkload, key, v, want)
	}
	switch {
	case w.Topics < 1:
		return bad("topics", w.Topics, ">= 1")
	case w.PartitionsPerTopic < 1:
		return bad("partitionsPerTopic", w.PartitionsPerTopic, ">= 1")
	case w.MessageSize < 1:
		return bad("messageSize", w.MessageSize, ">= 1 byte")
	case w.ProducersPerTopic < 1:
		return bad("producersPerTopic", w.ProducersPerTopic, ">= 1")
	case w.SubscriptionsPerTopic < 0:
		return bad("subscriptionsPerTopic", w.SubscriptionsPerTopic, ">= 0")
	case w.ConsumerPerSubscription < 0:
		return bad("consumerPerSubscription", w.ConsumerPerSubscription, ">= 0")
	case w.ProducerRate < 0:
		return bad("producerRate", w.ProducerRate, ">= 0 msg/s (0: find the maximum sustainable rate)")
	case w.ConsumerBacklogSizeGB < 0:
		return bad("consumerBacklogSizeGB", w.ConsumerBacklogSizeGB, ">= 0")
	case w.ConsumerBacklogSizeGB > 0 && w.ProducerRate == 0:
		// OMB refuses this too: "Cannot probe producer sustainable rate when building backlog".
		return bad("producerRate", 0, "> 0 with consumerBacklogSizeGB (a rate search cannot build a backlog)")
	case w.ConsumerBacklogSizeGB > 0 && w.SubscriptionsPerTopic < 1:
		return bad("subscriptionsPerTopic", w.SubscriptionsPerTopic, ">= 1 with consumerBacklogSizeGB (someone must drain it)")
	case w.TestDurationMinutes < 1:
		return bad("testDurationMinutes", w.TestDurationMinutes, ">= 1 (brokerlab run --duration or --quick shortens a run)")
	case w.WarmupDurationMinutes != nil && *w.WarmupDurationMinutes < 0:
		return bad("warmupDurationMinutes", *w.WarmupDurationMinutes, ">= 0")
	case w.RandomBytesRatio < 0 || w.RandomBytesRatio > 1:
		return bad("randomBytesRatio", w.RandomBytesRatio, "in [0, 1]")
	case w.BacklogDrainRatio != nil && (*w.BacklogDrainRatio < 0 || *w.BacklogDrainRatio > 1):
		return bad("backlogDrainRatio", *w.BacklogDrainRatio, "in [0, 1]")
	}
	switch w.KeyDistributor {
	case NoKey, KeyRoundRobin, KeyRandomNano:
	default:
		return bad("keyDistributor", w.KeyDistributor, "NO_KEY, KEY_ROUND_ROBIN or RANDOM_NANO")
	}
	return nil
}

// WarmupMinutes is warmupDurationMinutes with OMB's default (1).
func (w *Workload) WarmupMinutes() int {
	if w.WarmupDurationMinutes == nil {
		return defaultWarmupM
	}
	return *w.WarmupDurationMinutes
}

// ExperimentName is the run directory's name for a workload file: its
// base name without the extension (OMB names its files so:
// 1-topic-16-partitions-1kb.yaml), made of [A-Za-z0-9._-] only.
func ExperimentName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	var b strings.Builder
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "omb"
	}
	return b.String()
}
