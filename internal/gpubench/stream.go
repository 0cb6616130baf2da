package gpubench

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sigproc/sigproc/backend/cuda"
)

// Types of the streaming-from-host pipeline (sigproc bench stream), shared
// by the cuda and the pure build.

// StreamReader is what RunStream reads from; capture.Source satisfies it.
// Read fills dst (a pinned buffer) completely unless the input ends (io.EOF,
// possibly with n > 0 valid values) or fails; n is a multiple of the
// values per sample.
type StreamReader interface {
	Read(ctx context.Context, dst []float32) (int, error)
}

// StreamWriter is what RunStream writes the filtered chunks to, in order;
// sink.Sink satisfies it. Write must not keep samples after it returns.
type StreamWriter interface {
	Write(samples []float32) error
}

// Stream modes, StreamResult.Mode.
const (
	// StreamModeSource reads a StreamReader into pinned buffers and writes
	// a StreamWriter from pinned buffers.
	StreamModeSource = "source"
	// StreamModeMemory copies chunks straight from registered host memory
	// and back into registered host memory: no host copies at all.
	StreamModeMemory = "memory"
)

// StreamMaxStreams bounds StreamConfig.Streams.
const StreamMaxStreams = 64

// StreamMaxBuffers bounds StreamConfig.Buffers.
const StreamMaxBuffers = 256

// StreamConfig configures RunStream and RunStreamMemory.
type StreamConfig struct {
	Device  int       // CUDA device ordinal
	Taps    []float32 // filter taps (1 to cuda.BatchMaxTaps)
	Complex bool      // interleaved I/Q samples
	// ChunkSamples is the samples (I/Q pairs when Complex) of each chunk:
	// one H2D copy, one kernel launch and one D2H copy.
	ChunkSamples int
	// Streams is the number of CUDA streams; chunk k goes on stream
	// k mod Streams (its buffer set's stream).
	Streams int
	// Buffers is the number of chunks in flight, each with its own device
	// input and output buffers (and pinned host buffers in source mode);
	// 0 means max(3, 2·Streams). It bounds the memory the pipeline uses.
	Buffers int
	PTXPath string // load the batch FIR kernels from this PTX file ("" = embedded)
	// RefBytes and RefReps size a pinned H2D copy measurement made in the
	// same context before the stream runs (StreamResult.PinnedH2D); 0
	// RefReps skips it.
	RefBytes int64
	RefReps  int
	// Timeline keeps every chunk's stage times in StreamResult.Timeline.
	Timeline bool
	// Progress, if set, is called after each chunk reaches the writer (or,
	// in memory mode, the output buffer) with the samples done so far. It
	// runs on a pipeline goroutine and must be quick.
	Progress func(samplesOut int64)
}

func (c StreamConfig) channels() int {
	if c.Complex {
		return 2
	}
	return 1
}

func (c StreamConfig) buffers() int {
	if c.Buffers > 0 {
		return c.Buffers
	}
	return max(3, 2*c.Streams)
}

// maxChunkValues bounds the values of one chunk buffer (4 GiB of float32).
const maxChunkValues = 1 << 30

func (c StreamConfig) validate() error {
	if err := cuda.CheckBatchTaps(c.Taps); err != nil {
		return fmt.Errorf("gpu: stream: %w", err)
	}
	hist := (len(c.Taps) - 1) * c.channels()
	switch {
	case c.Device < 0:
		return fmt.Errorf("gpu: stream: device must be >= 0, got %d", c.Device)
	case c.ChunkSamples <= 0:
		return fmt.Errorf("gpu: stream: chunk must be > 0 samples, got %d", c.ChunkSamples)
	case c.ChunkSamples > (maxChunkValues-hist)/c.channels():
		return fmt.Errorf("gpu: stream: chunk of %d samples exceeds the limit %d", c.ChunkSamples, (maxChunkValues-hist)/c.channels())
	case c.Streams < 1 || c.Streams > StreamMaxStreams:
		return fmt.Errorf("gpu: stream: streams must be 1 to %d, got %d", StreamMaxStreams, c.Streams)
	case c.Buffers < 0 || c.Buffers == 1 || c.Buffers > StreamMaxBuffers:
		return fmt.Errorf("gpu: stream: buffers must be 0 (default) or 2 to %d, got %d", StreamMaxBuffers, c.Buffers)
	case c.RefReps < 0:
		return fmt.Errorf("gpu: stream: reference reps must be >= 0, got %d", c.RefReps)
	case c.RefReps > 0 && (c.RefBytes < MinBandwidthSize || c.RefBytes%4096 != 0):
		return fmt.Errorf("gpu: stream: reference copy size %d must be a whole number of 4 KiB pages, at least 1 MiB", c.RefBytes)
	}
	return nil
}

// ChunkTiming is one chunk's stage times in milliseconds from the run's
// start event (CUDA events recorded around each stage on the chunk's
// stream). A stage's interval begins when its stream reaches it, so it
// includes any wait for a copy engine busy with another stream's copy.
// HostSubmitMs and HostDoneMs are the host's clock from the run's start:
// when the chunk was submitted, and when the host saw its D2H finish.
type ChunkTiming struct {
	Chunk        int        `json:"chunk"`
	Stream       int        `json:"stream"`
	Samples      int        `json:"samples"`
	H2D          [2]float64 `json:"h2d_ms"`
	Kernel       [2]float64 `json:"kernel_ms"`
	D2H          [2]float64 `json:"d2h_ms"`
	HostSubmitMs float64    `json:"host_submit_ms"`
	HostDoneMs   float64    `json:"host_done_ms"`
}

// StageStats summarises one stage over all chunks.
type StageStats struct {
	// SumMs adds each chunk's interval (queueing behind other streams
	// included).
	SumMs float64 `json:"sum_ms"`
	// BusyMs is the length of the union of the intervals: the time at
	// least one chunk was in this stage.
	BusyMs float64 `json:"busy_ms"`
	// BusyFraction is BusyMs over the GPU wall time.
	BusyFraction float64 `json:"busy_fraction"`
}

// StageSummary is the three stages.
type StageSummary struct {
	H2D    StageStats `json:"h2d"`
	Kernel StageStats `json:"kernel"`
	D2H    StageStats `json:"d2h"`
}

// StreamResult is what a stream run measured.
type StreamResult struct {
	Device       string `json:"device"`
	Mode         string `json:"mode"`
	Taps         int    `json:"taps"`
	Complex      bool   `json:"complex"`
	ChunkSamples int    `json:"chunk_samples"`
	Streams      int    `json:"streams"`
	Buffers      int    `json:"buffers"`
	Chunks       int    `json:"chunks"`
	// SamplesIn were submitted to the GPU, SamplesOut reached the output;
	// Drops is their difference, zero unless the run failed: a stream from
	// host memory or a file has back-pressure, nothing is ever dropped.
	SamplesIn  int64 `json:"samples_in"`
	SamplesOut int64 `json:"samples_out"`
	Drops      int64 `json:"drops"`
	BytesIn    int64 `json:"bytes_in"`
	BytesOut   int64 `json:"bytes_out"`
	// WallSeconds is the host's clock from the first chunk read (or
	// submitted, in memory mode) to the last chunk written: end to end.
	WallSeconds float64 `json:"wall_seconds"`
	// GPUSeconds is the first H2D start to the last D2H end (CUDA events).
	GPUSeconds float64 `json:"gpu_seconds"`
	InGiBps    float64 `json:"in_gibps"`    // BytesIn / WallSeconds
	InOutGiBps float64 `json:"inout_gibps"` // (BytesIn + BytesOut) / WallSeconds
	GSps       float64 `json:"gsps"`        // SamplesOut / WallSeconds / 1e9
	// PinnedH2D is the reference copy measured in the same context first;
	// PinnedFraction is InGiBps / PinnedH2D.GiBps.
	PinnedH2D      *CopyResult  `json:"pinned_h2d,omitempty"`
	PinnedFraction float64      `json:"pinned_fraction,omitempty"`
	Stages         StageSummary `json:"stages"`
	// Overlap is the stages' busy time summed over the GPU wall time:
	// above 1 means stages ran at once (at most 3).
	Overlap     float64       `json:"overlap"`
	Interrupted bool          `json:"interrupted"`
	Timeline    []ChunkTiming `json:"timeline,omitempty"`
}

// ErrStreamCount means a stream run ended with fewer samples out than in.
var ErrStreamCount = errors.New("gpu: stream: samples out differ from samples in")

// summarize fills the rates and stage statistics of r from its counters,
// the host wall time and the chunk timings tl.
func (r *StreamResult) summarize(tl []ChunkTiming, wall float64) {
	r.Chunks = len(tl)
	r.Drops = r.SamplesIn - r.SamplesOut
	ch := int64(1)
	if r.Complex {
		ch = 2
	}
	r.BytesIn = r.SamplesIn * ch * 4
	r.BytesOut = r.SamplesOut * ch * 4
	r.WallSeconds = wall
	if wall > 0 {
		r.InGiBps = float64(r.BytesIn) / wall / GiB
		r.InOutGiBps = float64(r.BytesIn+r.BytesOut) / wall / GiB
		r.GSps = float64(r.SamplesOut) / wall / 1e9
	}
	if r.PinnedH2D != nil && r.PinnedH2D.GiBps > 0 {
		r.PinnedFraction = r.InGiBps / r.PinnedH2D.GiBps
	}
	if len(tl) == 0 {
		return
	}
	first, last := tl[0].H2D[0], tl[0].D2H[1]
	for _, t := range tl {
		first = min(first, t.H2D[0])
		last = max(last, t.D2H[1])
	}
	gpuMs := last - first
	r.GPUSeconds = gpuMs / 1e3
	pick := []func(ChunkTiming) [2]float64{
		func(t ChunkTiming) [2]float64 { return t.H2D },
		func(t ChunkTiming) [2]float64 { return t.Kernel },
		func(t ChunkTiming) [2]float64 { return t.D2H },
	}
	stats := make([]StageStats, len(pick))
	iv := make([][2]float64, len(tl))
	for s, f := range pick {
		var sum float64
		for i, t := range tl {
			iv[i] = f(t)
			sum += iv[i][1] - iv[i][0]
		}
		busy := unionLength(iv)
		stats[s] = StageStats{SumMs: sum, BusyMs: busy}
		if gpuMs > 0 {
			stats[s].BusyFraction = busy / gpuMs
			r.Overlap += busy / gpuMs
		}
	}
	r.Stages = StageSummary{H2D: stats[0], Kernel: stats[1], D2H: stats[2]}
}

// unionLength is the total length covered by the intervals (which it
// sorts); reversed intervals count as empty.
func unionLength(iv [][2]float64) float64 {
	slices.SortFunc(iv, func(a, b [2]float64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	var total, lo, hi float64
	open := false
	for _, v := range iv {
		if v[1] <= v[0] {
			continue
		}
		switch {
		case !open:
			lo, hi, open = v[0], v[1], true
		case v[0] > hi:
			total += hi - lo
			lo, hi = v[0], v[1]
		default:
			hi = max(hi, v[1])
		}
	}
	if open {
		total += hi - lo
	}
	return total
}
