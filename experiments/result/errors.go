package result

import "errors"

var (
	// ErrBadName is returned for a cell name that is not a "/"-joined list of
	// key=value parts without spaces.
	ErrBadName = errors.New("result: malformed cell name")
	// ErrInvalid is returned by Validate (and the writers) for a result that
	// cannot be stored faithfully, e.g. NaN values or duplicate cells.
	ErrInvalid = errors.New("result: invalid result")
	// ErrNoResult is returned by LoadRun when a directory holds neither
	// result.json nor bench.txt.
	ErrNoResult = errors.New("result: no result file in run directory")
	// ErrBadHgrm is returned for text that is not an HdrHistogram percentile
	// distribution.
	ErrBadHgrm = errors.New("result: malformed .hgrm percentile distribution")
	// ErrNoSpectrum is returned by CellSpectrum when a cell has neither a
	// stored spectrum nor an .hgrm file for the metric.
	ErrNoSpectrum = errors.New("result: no percentile spectrum for metric")
	// ErrBadExperiment is returned for an experiment name that is not a
	// single path element.
	ErrBadExperiment = errors.New("result: experiment name must be one path element")
)
