package metrics

import (
	"net/http"
	"regexp"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sigproc/sigproc/pipeline"
)

// LatencyBuckets are the upper bounds, in seconds, of
// sigproc_block_latency_seconds: 10 µs doubling to about 10.5 s, which spans
// a CPU block on a fast host to a badly backed-up ring.
var LatencyBuckets = prometheus.ExponentialBuckets(10e-6, 2, 21)

// Metrics is the set of a run's metrics, registered in a private registry.
// Its methods are safe for concurrent use.
type Metrics struct {
	reg     *prometheus.Registry
	latency prometheus.Histogram

	// The latest stats snapshot, one atomic per counter so that Update and
	// scrapes never lock or allocate.
	in, out, blocks, dropB, dropS, gaps atomic.Uint64
	filtered, dropFB, dropFS            atomic.Uint64
	clipped                             atomic.Uint64
	nonFinite                           atomic.Uint64
}

// New returns metrics for a run on the named backend (pipeline.Backend's
// Name(), e.g. "cpu" or "cuda/zero-copy").
func New(backend string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, v *atomic.Uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(v.Load()) })
	}
	m.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "sigproc_block_latency_seconds",
		Help:    "Time from a block's capture to the host seeing it filtered.",
		Buckets: LatencyBuckets,
	})
	info := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "sigproc_backend_info",
		Help:        "The filter backend of the run (always 1; the backend label names it).",
		ConstLabels: prometheus.Labels{"backend": backend},
	})
	info.Set(1)
	m.reg.MustRegister(
		counter("sigproc_samples_in_total", "Samples read from the source, dropped ones included.", &m.in),
		counter("sigproc_samples_filtered_total", "Samples the filter backend output.", &m.filtered),
		counter("sigproc_samples_written_total", "Filtered samples the sink accepted.", &m.out),
		counter("sigproc_blocks_total", "Blocks written to the sink.", &m.blocks),
		counter("sigproc_dropped_capture_blocks_total", "Blocks discarded at capture because the ring was full.", &m.dropB),
		counter("sigproc_dropped_capture_samples_total", "Samples in blocks discarded at capture.", &m.dropS),
		counter("sigproc_dropped_filter_blocks_total", "Blocks published into the ring that never came out of the backend (counted when the run ends).", &m.dropFB),
		counter("sigproc_dropped_filter_samples_total", "Samples in blocks dropped at the filter.", &m.dropFS),
		counter("sigproc_gaps_total", "Block sequence numbers the consumer never saw.", &m.gaps),
		counter("sigproc_clipped_values_total", "Output values clipped to the int16 range (int16 sink formats).", &m.clipped),
		counter("sigproc_input_nonfinite_values_total", "NaN and infinite values read from a float source.", &m.nonFinite),
		// The names before the capture/filter split, kept for existing
		// dashboards: the same values as samples_written and dropped_capture.
		counter("sigproc_samples_out_total", "Filtered samples written to the sink (same as sigproc_samples_written_total).", &m.out),
		counter("sigproc_dropped_blocks_total", "Blocks discarded at capture (same as sigproc_dropped_capture_blocks_total).", &m.dropB),
		counter("sigproc_dropped_samples_total", "Samples discarded at capture (same as sigproc_dropped_capture_samples_total).", &m.dropS),
		m.latency,
		info,
		// The live heap after the last GC (go_gc_heap_live_bytes) says
		// whether memory is leaking; RSS and heap_alloc follow GC timing.
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/live:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// Registry returns the private registry, to gather from or add to.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Update stores a stats snapshot; the counters report it from then on.
// Pipeline counters only grow, so successive snapshots keep the Prometheus
// counters monotonic.
func (m *Metrics) Update(st pipeline.Stats) {
	m.in.Store(st.SamplesIn)
	m.filtered.Store(st.SamplesFiltered)
	m.out.Store(st.SamplesWritten)
	m.blocks.Store(st.Blocks)
	m.dropB.Store(st.DroppedBlocks)
	m.dropS.Store(st.DroppedSamples)
	m.dropFB.Store(st.DroppedFilterBlocks)
	m.dropFS.Store(st.DroppedFilterSamples)
	m.gaps.Store(st.Gaps)
}

// SetClipped stores the number of output values clipped so far (the
// sink's count; it only grows).
func (m *Metrics) SetClipped(n uint64) { m.clipped.Store(n) }

// SetNonFinite stores the number of NaN and infinite values the source
// has delivered so far (it only grows).
func (m *Metrics) SetNonFinite(n uint64) { m.nonFinite.Store(n) }

// ObserveBlock records the latency of one filtered block: seenNs minus the
// block's capture timestamp, both on the run's clock. It has the signature
// of pipeline.Options.OnBlock and allocates nothing.
func (m *Metrics) ObserveBlock(out pipeline.Output, seenNs int64) {
	d := seenNs - out.Timestamp
	if d < 0 {
		d = 0 // clocks are the same; guard against a backend's bad stamp
	}
	m.latency.Observe(float64(d) / 1e9)
}

// Instrument returns opts with Progress and OnBlock also feeding m; hooks
// already set are still called, first.
func (m *Metrics) Instrument(opts pipeline.Options) pipeline.Options {
	if prev := opts.Progress; prev != nil {
		opts.Progress = func(st pipeline.Stats) { prev(st); m.Update(st) }
	} else {
		opts.Progress = m.Update
	}
	if prev := opts.OnBlock; prev != nil {
		opts.OnBlock = func(out pipeline.Output, seenNs int64) { prev(out, seenNs); m.ObserveBlock(out, seenNs) }
	} else {
		opts.OnBlock = m.ObserveBlock
	}
	return opts
}
