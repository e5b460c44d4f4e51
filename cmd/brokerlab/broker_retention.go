package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/brokerlab/brokerlab/engine/store"
	"github.com/brokerlab/brokerlab/internal/bytesize"
)

// retentionFlags are the commit log's cleaning settings (RocketMQ's
// CleanCommitLogService keys, in RocketMQ's units: hours and percent).
type retentionFlags struct {
	deleteWhen                  string
	fileReservedTime            int
	diskMaxUsedSpaceRatio       int
	diskSpaceCleanForciblyRatio int
	diskSpaceWarningLevelRatio  int
	cleanInterval               time.Duration
	retainBytes                 string
}

// retentionFile holds the same settings in the config file's store section
// (YAML) or in broker.conf, under RocketMQ's names and units.
type retentionFile struct {
	DeleteWhen                  string `yaml:"deleteWhen"`
	FileReservedTime            *int64 `yaml:"fileReservedTime"`            // hours
	DiskMaxUsedSpaceRatio       *int64 `yaml:"diskMaxUsedSpaceRatio"`       // percent
	DiskSpaceCleanForciblyRatio *int64 `yaml:"diskSpaceCleanForciblyRatio"` // percent
	DiskSpaceWarningLevelRatio  *int64 `yaml:"diskSpaceWarningLevelRatio"`  // percent
	CleanResourceInterval       *int64 `yaml:"cleanResourceInterval"`       // milliseconds
	RetainBytes                 string `yaml:"retainBytes"`                 // size; brokerlab's own
}

func addRetentionFlags(cmd *cobra.Command, f *retentionFlags) {
	d := store.DefaultConfig("")
	fl := cmd.Flags()
	fl.StringVar(&f.deleteWhen, "delete-when", d.DeleteWhen,
		"deleteWhen: hours of the day (local time, ';'-separated, e.g. \"01;02;03\") when commit-log segments older than --file-reserved-time are deleted")
	fl.IntVar(&f.fileReservedTime, "file-reserved-time", int(d.FileReservedTime/time.Hour),
		"fileReservedTime: hours a commit-log segment is kept after its last write")
	fl.IntVar(&f.diskMaxUsedSpaceRatio, "disk-max-used-space-ratio", int(d.DiskMaxUsedSpaceRatio*100+0.5),
		"diskMaxUsedSpaceRatio (percent, 10-95): above it expired segments are deleted at any hour")
	fl.IntVar(&f.diskSpaceCleanForciblyRatio, "disk-space-clean-forcibly-ratio", int(d.DiskSpaceCleanForciblyRatio*100+0.5),
		"diskSpaceCleanForciblyRatio (percent, 30-85): above it segments are deleted whatever their age (never the active one, never ahead of dispatch)")
	fl.IntVar(&f.diskSpaceWarningLevelRatio, "disk-space-warning-level-ratio", int(d.DiskSpaceWarningLevelRatio*100+0.5),
		"diskSpaceWarningLevelRatio (percent, 35-90): above it sends are refused (SERVICE_NOT_AVAILABLE, disk full) until cleaning brings use back to the forcible ratio")
	fl.DurationVar(&f.cleanInterval, "clean-interval", d.CleanInterval, "cleanResourceInterval: how often the cleaner runs")
	fl.StringVar(&f.retainBytes, "retain-bytes", "", "also keep the commit log within this size (e.g. 20GiB; Kafka's retention.bytes, not RocketMQ's); \"\" = no size bound")
}

// ratioBounds are RocketMQ's clamps of the three ratios (percent).
var ratioBounds = map[string][2]int64{
	"diskMaxUsedSpaceRatio":       {10, 95},
	"diskSpaceCleanForciblyRatio": {30, 85},
	"diskSpaceWarningLevelRatio":  {35, 90},
}

// apply merges the flags set on the command line over file onto cfg and
// returns a warning for each ratio clamped into RocketMQ's range.
func (f retentionFlags) apply(cfg *store.Config, changed func(string) bool, file retentionFile) ([]string, error) {
	var warns []string
	pickInt := func(flag string, fromFile *int64, flagValue int) (int64, bool) {
		if changed(flag) {
			return int64(flagValue), true
		}
		if fromFile != nil {
			return *fromFile, true
		}
		return 0, false
	}
	if changed("delete-when") {
		cfg.DeleteWhen = f.deleteWhen
	} else if file.DeleteWhen != "" {
		cfg.DeleteWhen = file.DeleteWhen
	}
	if h, ok := pickInt("file-reserved-time", file.FileReservedTime, f.fileReservedTime); ok {
		if h <= 0 {
			return warns, fmt.Errorf("fileReservedTime %d: want a positive number of hours", h)
		}
		cfg.FileReservedTime = time.Duration(h) * time.Hour
	}
	for _, r := range []struct {
		key, flag string
		file      *int64
		flagValue int
		dst       *float64
	}{
		{"diskMaxUsedSpaceRatio", "disk-max-used-space-ratio", file.DiskMaxUsedSpaceRatio, f.diskMaxUsedSpaceRatio, &cfg.DiskMaxUsedSpaceRatio},
		{"diskSpaceCleanForciblyRatio", "disk-space-clean-forcibly-ratio", file.DiskSpaceCleanForciblyRatio, f.diskSpaceCleanForciblyRatio, &cfg.DiskSpaceCleanForciblyRatio},
		{"diskSpaceWarningLevelRatio", "disk-space-warning-level-ratio", file.DiskSpaceWarningLevelRatio, f.diskSpaceWarningLevelRatio, &cfg.DiskSpaceWarningLevelRatio},
	} {
		v, ok := pickInt(r.flag, r.file, r.flagValue)
		if !ok {
			continue
		}
		b := ratioBounds[r.key]
		if c := min(max(v, b[0]), b[1]); c != v {
			warns = append(warns, fmt.Sprintf("%s=%d clamped to %d (RocketMQ's range %d-%d)", r.key, v, c, b[0], b[1]))
			v = c
		}
		*r.dst = float64(v) / 100
	}
	if cfg.DiskSpaceCleanForciblyRatio > cfg.DiskSpaceWarningLevelRatio {
		return warns, fmt.Errorf("diskSpaceCleanForciblyRatio %.0f above diskSpaceWarningLevelRatio %.0f",
			cfg.DiskSpaceCleanForciblyRatio*100, cfg.DiskSpaceWarningLevelRatio*100)
	}
	if changed("clean-interval") {
		if f.cleanInterval <= 0 {
			return warns, fmt.Errorf("--clean-interval must be positive")
		}
		cfg.CleanInterval = f.cleanInterval
	} else if file.CleanResourceInterval != nil {
		if *file.CleanResourceInterval <= 0 {
			return warns, fmt.Errorf("cleanResourceInterval %d: want a positive number of milliseconds", *file.CleanResourceInterval)
		}
		cfg.CleanInterval = time.Duration(*file.CleanResourceInterval) * time.Millisecond
	}
	rb := file.RetainBytes
	if changed("retain-bytes") {
		rb = f.retainBytes
	}
	if rb != "" {
		n, err := bytesize.Parse(rb)
		if err != nil {
			return warns, fmt.Errorf("retainBytes %q: %w", rb, err)
		}
		cfg.RetainBytes = n
	}
	if err := store.CheckDeleteWhen(cfg.DeleteWhen); err != nil {
		return warns, fmt.Errorf("deleteWhen: %w", err)
	}
	return warns, nil
}
