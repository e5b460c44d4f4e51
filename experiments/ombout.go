package experiments

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brokerlab/brokerlab/experiments/ombresult"
	"github.com/brokerlab/brokerlab/experiments/result"
	"github.com/brokerlab/brokerlab/workloads/hist"
)

// OMBPrefix starts the name of every OMB-shaped result file of a run:
// omb-<cell stem>.json beside result.json, one per measured configuration
// (repetition 0, the one with an interval log).
const OMBPrefix = "omb-"

// OMBFileName is the OMB result file of a cell.
func OMBFileName(cellName string) string { return OMBPrefix + result.FileStem(cellName, 0) + ".json" }

// counterSendErrors is the per-interval extra fillCell records for failed
// sends (the OMB result's publishErrorRate).
const counterSendErrors = "send_errors"

// writeOMBResults writes an OMB result (experiments/ombresult) for every
// cell whose repetition 0 completed with an interval log. header, when
// set, supplies OMB's workload fields (an OMB workload file's); otherwise
// they are derived from each cell's experiment. It returns the files
// written; a cell that cannot be converted is an error naming it, the
// others are still written.
func writeOMBResults(runDir string, all []Cell, cells []result.Cell, header *ombresult.Meta) ([]string, error) {
	var files []string
	var errs []error
	for i := range cells {
		rc := &cells[i]
		if rc.Rep != 0 || rc.Files.Hlog == "" || rc.Error != "" {
			continue
		}
		exp, ok := cellExperiment(all, rc)
		if !ok {
			continue
		}
		ivs, err := readCellLog(runDir, rc)
		if err != nil {
			errs = append(errs, fmt.Errorf("omb result of %s: %w", rc.Name, err))
			continue
		}
		m := ombMeta(exp, rc, header)
		in := ombresult.Input{Intervals: ivs, Backlog0: builtBacklog(rc)}
		for _, p := range rc.Series {
			if n := p.Extra[counterSendErrors]; n > 0 {
				in.Errors = append(in.Errors, ombresult.ErrorsAt{At: p.T, Count: int64(n)})
			}
		}
		name := OMBFileName(rc.Name)
		if err := ombresult.Write(filepath.Join(runDir, name), ombresult.Build(m, in)); err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, name)
	}
	return files, errors.Join(errs...)
}

// cellExperiment finds the declared cell rc measured.
func cellExperiment(all []Cell, rc *result.Cell) (Experiment, bool) {
	for _, c := range all {
		sys := c.System
		if sys == "" {
			sys = result.SystemBrokerlab
		}
		if c.Name == rc.Name && sys == rc.SystemOrDefault() {
			return c.Exp, true
		}
	}
	return Experiment{}, false
}

// ombMeta is the OMB header of a cell: header's workload fields when given,
// else the experiment's (messageSize: a fixed size, or the mean measured
// one; partitions: queues per topic; every consumer reads every queue, so
// each is a subscription). The driver names the system and the cell.
func ombMeta(exp Experiment, rc *result.Cell, header *ombresult.Meta) ombresult.Meta {
	w := exp.Workload
	consumers := w.Tailing + w.Lagging
	m := ombresult.Meta{Workload: exp.Name, Topics: w.Topics, Partitions: w.Queues, ProducersPerTopic: w.Producers,
		ConsumersPerTopic: consumers, Subscriptions: consumers}
	if n, err := strconv.ParseInt(strings.TrimPrefix(w.Size, "fixed:"), 10, 64); err == nil {
		m.MessageSize = n
	} else if rc.Ops > 0 {
		m.MessageSize = int64(math.Round(float64(rc.Bytes) / float64(rc.Ops)))
	}
	if header != nil {
		m = *header
	}
	m.Driver = rc.SystemOrDefault() + ":" + rc.Name
	return m
}

// readCellLog reads a cell's interval log (result.ReadCellHlog) as
// hist's logged intervals.
func readCellLog(runDir string, rc *result.Cell) ([]hist.LoggedInterval, error) {
	ivs, err := result.ReadCellHlog(runDir, rc)
	if err != nil {
		return nil, err
	}
	out := make([]hist.LoggedInterval, len(ivs))
	for i, iv := range ivs {
		out[i] = hist.LoggedInterval{Tag: iv.Tag, Start: time.UnixMilli(iv.StartMs), End: time.UnixMilli(iv.EndMs), Hist: iv.Hist}
	}
	return out, nil
}

// builtBacklog is the backlog lagging consumers found at their start (the
// sum of their catchup_backlog_msgs extras): the messages outstanding when
// the measured drain began.
func builtBacklog(rc *result.Cell) int64 {
	var n float64
	for k, v := range rc.Extra {
		if k == "catchup_backlog_msgs" || strings.HasPrefix(k, "catchup_backlog_msgs_") {
			n += v
		}
	}
	return int64(n)
}
