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
//	sigproc_samples_in_total        samples read from the source
//	sigproc_samples_out_total       filtered samples written to the sink
//	sigproc_blocks_total            blocks written to the sink
//	sigproc_dropped_blocks_total    blocks discarded because the ring was full
//	sigproc_dropped_samples_total   samples in those blocks
//	sigproc_gaps_total              sequence numbers the consumer never saw
//	sigproc_block_latency_seconds   capture to host seeing the filtered block
//	sigproc_backend_info{backend}   1, labelled with the backend's Name()
//
// plus the Go runtime and process collectors (go_*, process_*).
package metrics
