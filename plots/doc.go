// Package plots draws brokerlab's figures as pure functions of result files
// (package experiments/result): the same result.json (and .hgrm files)
// always gives byte-identical PNG and SVG output. It imports the result
// format only, never the engine or the workloads.
//
// Each figure function takes cells and returns a *Figure (one or more
// gonum/plot panels) or an error wrapping ErrNoData when the cells hold
// nothing that figure can show. RenderRunTo decides which figures apply to a
// run directory and writes them to <dir>/<name>.png and .svg, outside the
// run: a committed run keeps only its result files and figures are derived
// on demand (brokerlab plot --out DIR). Every figure states its loop type,
// producers, message size and clock in the title, keeps its legend in a
// column beside the data, shows min–max whiskers over repetitions, uses
// ms and MiB/s, and switches to log axes where values span decades.
//
//	LatencyByPercentile  latency vs percentile, x = 1/(1-p) on a log axis (90% … 99.999%)
//	Frontier             achieved msg/s vs p50/p99/p99.9, one line per configuration (rate swept)
//	GroupCommit          msg/s and p99 vs producers per policy, plus flush batch-size histogram
//	SegmentSweep         segment size (log2 axis, 8MiB … 1GiB) vs p99/p99.9 and msg/s
//	ResidencyHeatmap     segments × time, colour = page-cache resident fraction; under it, when the
//	                     samples have cachestat layers or a model, resident/dirty/writeback MiB
//	                     measured (solid) and predicted (dashed) with the model's onsets
//	TimeSeries           one interval field over time, with roll/stall markers
//	Bars                 grouped bars (e.g. path × policy) with peer ceilings as labelled lines
//	Hiccups              per-interval maximum latency over time, from the cells' .hlog
//
// Determinism: fonts are gonum's embedded Liberation fonts (SVG references
// them by name and does not embed them), no timestamps are drawn, map keys
// are iterated in sorted order, series keep the order of their cells, and
// PNGs are drawn at a fixed DPI.
//
// Log axes panic in gonum on non-positive values; every figure drops such
// points (and the +Inf of the 100th percentile) before plotting, and
// rendering converts any remaining panic into an error wrapping ErrRender.
//
// Concurrency: figure functions and RenderRunTo share no state and may run
// concurrently; a *Figure must not be rendered from two goroutines at once.
package plots
