// Package metrics exposes a sigproc run's counters to Prometheus.
//
// A Metrics holds its own prometheus.Registry (never the global default
// one), so several runs in one process, and tests, do not collide. The
// pipeline counters are read from the latest pipeline.Stats snapshot, fed
// by pipeline.Options.Progress and by Update with the final stats; the
// block latency histogram is fed per block by pipeline.Options.OnBlock,
// which allocates nothing.
//
// Exported series:
//
//	sigproc_samples_in_total               samples read from the source
//	sigproc_samples_filtered_total         samples the filter backend output
//	sigproc_samples_written_total          filtered samples the sink accepted
//	sigproc_blocks_total                   blocks written to the sink
//	sigproc_dropped_capture_blocks_total   blocks discarded because the ring was full
//	sigproc_dropped_capture_samples_total  samples in those blocks
//	sigproc_dropped_filter_blocks_total    blocks put in the ring that never came
//	                                       out of the backend (set when the run ends)
//	sigproc_dropped_filter_samples_total   samples in those blocks
//	sigproc_gaps_total                     sequence numbers the consumer never saw
//	sigproc_block_latency_seconds          capture to host seeing the filtered block
//	sigproc_backend_info{backend}          1, labelled with the backend's Name()
//
// plus the Go runtime and process collectors (go_*, process_*).
//
// sigproc_samples_out_total, sigproc_dropped_blocks_total and
// sigproc_dropped_samples_total, the names from before loss was split into
// capture and filter, are still exported with the same values as
// samples_written and dropped_capture_*.
package metrics
