// Package result is brokerlab's result format: the one small package that the
// experiment runner writes and the figures (package plots) read. It knows
// nothing of the engine or the workloads.
//
// # Run directory
//
// Every run of an experiment gets one directory; nothing outside it is needed
// to rebuild its tables and figures:
//
//	results/<experiment>/<run-stamp>/      run-stamp = <UTC yyyymmddThhmmssZ>-<8 hex of sha256(config)>
//	  manifest.json        Manifest: machine, store file system, dirty_* sysctls, Go, git, config, seed
//	  result.json          Result: experiment name and one Cell per (configuration, repetition);
//	                       result.json.gz instead when it encodes to more than CompressAbove
//	  bench.txt            Go benchmark format (benchstat input): "key: value" config lines,
//	                       "Unit" metadata lines, then one Benchmark line per cell
//	  <stem>.hlog          HdrHistogram interval log of a cell   (written by workloads; see HlogName)
//	  <stem>.<metric>.hgrm HdrHistogram percentile distribution   (written by workloads; see HgrmName)
//	  figures/<name>.png   figures drawn by package plots from the files above
//	  figures/<name>.svg
//
// Files are written atomically (temporary file, fsync, rename, fsync of the
// directory), so a crash leaves either the old or the new file, never a torn one.
//
// # result.json schema (schema 1)
//
//	{"schema":1, "experiment":"e1-write-paths", "cells":[{
//	   "name":"path=mmap/flush=group/size=1024/conc=64",   benchstat-style key=value parts joined by "/"
//	   "params":{"path":"mmap","flush":"group","size":"1024","conc":"64"},  parsed from name
//	   "system":"brokerlab",          brokerlab | fio | nats (peer cells)
//	   "op":"Produce",                Benchmark<Op> in bench.txt (default Produce)
//	   "rep":0, "error":"",           repetition index; non-empty error marks a failed/partial cell
//	   "duration_ns":..., "ops":..., "bytes":..., "msg_per_sec":..., "mb_per_sec":...  (MB = 1e6 B)
//	   "primary_metric":"e2e",        quantile metric used for bench.txt and headline figures
//	   "quantiles":{"e2e":{"p50_ns","p90_ns","p99_ns","p999_ns","p9999_ns","max_ns","mean_ns","count"}},
//	   "spectrum":{"e2e":[{"percentile":99.9,"value_ns":...}, ...]},   percentile in [0,100]
//	   "series":[{"t":10,"rate","mb_per_sec","p50_ns","p99_ns","p999_ns","resident_mib","dirty_mib","extra":{}}],
//	   "markers":[{"t":12.5,"kind":"roll","label":"segment 3"}],
//	   "residency":{"segments":["000..."],"t":[0,10],"fraction":[[1,0.5],[-1,1]]},  [segment][time]; <0 = absent
//	   "flush_batches":[{"up_to":1,"count":10},{"up_to":2,"count":7}],  batches with size in (prev up_to, up_to]
//	   "extra":{"fsyncs_per_op":0.01},
//	   "files":{"hlog":"<stem>.hlog","hgrm":{"e2e":"<stem>.e2e.hgrm"},"hgrm_unit_ns":1000}}]}
//
// JSON cannot hold NaN or ±Inf: WriteResult rejects them with the field's path.
//
// # Concurrency
//
// All types are plain values; none is safe for concurrent mutation. The
// functions hold no package state and may be called from any goroutine.
package result
