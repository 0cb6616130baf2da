package gpubench

import (
	"errors"
	"fmt"

	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/internal/cudrv"
)

// Types of the batch FIR benchmark, shared by the cuda and the pure build.

// BenchFIRConfig configures BenchFIR.
type BenchFIRConfig struct {
	Device  int       // CUDA device ordinal
	Input   []float32 // samples to filter, interleaved I/Q when Complex
	Complex bool      // Input is interleaved I/Q
	// Lanes is the values per frame: N channels, each real (1) or I/Q
	// (2), every lane filtered on its own; 0 = 1, or 2 with Complex.
	Lanes   int
	Taps    [][]float32 // one timed run per tap set
	Warmup  int         // untimed passes before the timed ones
	Reps    int         // timed passes, each one Launch over all of Input
	PTXPath string      // load the batch kernels from this PTX file ("" = embedded)
	Threads int         // threads per block (a multiple of 32, <= 256); 0 = default (128)
	// Method is direct (the batch kernel), fft (overlap-save with cuFFT)
	// or auto (cuda.ResolveMethod per tap count).
	Method      filter.Method
	FFTSize     int  // overlap-save transform size; 0 = cuda.OLSFFTSize
	ChunkValues int  // overlap-save values per pass; 0 = the default
	Strided     bool // overlap-save: full passes transform straight from the input (cuda.OLSOptions.Strided)
	Fused       bool // overlap-save in one shared-memory kernel instead of cuFFT (cuda.OLSOptions.Fused)
	Radix4      bool // the fused kernel two stages at a time (cuda.OLSOptions.Radix4)
	// Output, if set, receives each tap set's filtered output after its
	// timed passes (the buffer is reused for the next tap set).
	Output func(ntaps int, y []float32) error
}

func (c BenchFIRConfig) validate() error {
	switch {
	case len(c.Input) == 0:
		return errors.New("gpu: bench fir: no input")
	case c.Complex && len(c.Input)%2 != 0:
		return fmt.Errorf("gpu: bench fir: complex input has odd length %d", len(c.Input))
	case c.Lanes != 0 && cuda.CheckBatchLanes(c.Lanes) != nil:
		return fmt.Errorf("bench fir: %w", cuda.CheckBatchLanes(c.Lanes))
	case c.lanes() > 0 && len(c.Input)%c.lanes() != 0:
		return fmt.Errorf("gpu: bench fir: %d input values are not whole frames of %d values", len(c.Input), c.lanes())
	case len(c.Taps) == 0:
		return errors.New("gpu: bench fir: no tap sets")
	case c.Reps <= 0:
		return fmt.Errorf("gpu: bench fir: reps must be > 0, got %d", c.Reps)
	case c.Warmup < 0:
		return fmt.Errorf("gpu: bench fir: warmup must be >= 0, got %d", c.Warmup)
	case c.Threads < 0 || c.Threads%32 != 0:
		return fmt.Errorf("gpu: bench fir: threads must be 0 (default) or a multiple of 32, got %d", c.Threads)
	}
	for _, t := range c.Taps {
		if cuda.ResolveMethod(c.Method, len(t)) != filter.MethodDirect {
			continue // NewOLSFIR checks the taps
		}
		if err := cuda.CheckBatchTaps(t); err != nil {
			return err
		}
	}
	return nil
}

// lanes is the values per frame.
func (c BenchFIRConfig) lanes() int {
	switch {
	case c.Lanes > 0:
		return c.Lanes
	case c.Complex:
		return 2
	}
	return 1
}

// ReferenceFIRLanes is ReferenceFIR for frames of lanes values, each lane
// filtered on its own (de-interleaved, filtered as one real stream and
// interleaved again).
func ReferenceFIRLanes(taps, x []float32, lanes, workers int) ([]float32, error) {
	if lanes <= 2 {
		return ReferenceFIR(taps, x, lanes == 2, workers)
	}
	frames := len(x) / lanes
	y := make([]float32, len(x))
	one := make([]float32, frames)
	for c := range lanes {
		for f := range frames {
			one[f] = x[f*lanes+c]
		}
		yc, err := ReferenceFIR(taps, one, false, workers)
		if err != nil {
			return nil, err
		}
		for f, v := range yc {
			y[f*lanes+c] = v
		}
	}
	return y, nil
}

// BenchFIRRun is the timing of one tap set.
type BenchFIRRun struct {
	Taps        int       // number of taps
	Method      string    // "direct" or "fft"
	Seconds     []float64 // GPU time of each timed pass (CUDA events)
	Threads     int       // threads per block (direct)
	Blocks      int       // blocks per pass (direct)
	SharedBytes int       // dynamic shared memory per block (direct)
	FFTSize     int       // transform points (fft)
	Segments    int       // segments per pass (fft)
	CuFFT       string    // the cuFFT library, or "fused" (fft)
}

// BenchFIRResult is what BenchFIR measured, with the device's memory
// figures for the bandwidth fraction.
type BenchFIRResult struct {
	Device          cudrv.DeviceInfo
	MemClockKHz     int     // peak memory clock (CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
	MemBusWidthBits int     // memory bus width
	PeakBytesPerSec float64 // clock × 2 (DDR) × bus width / 8
	SMs             int     // multiprocessors
	ClockKHz        int     // peak SM clock
	Runs            []BenchFIRRun
}
