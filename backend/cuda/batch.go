package cuda

import (
	"errors"
	"fmt"
	"math"
)

// BatchMaxTaps is the most taps a BatchFIR takes. Shared memory grows with
// the taps (BatchSharedBytes); 8192 complex taps need 102 KiB, which every
// GPU since Volta offers per block.
const BatchMaxTaps = 8192

// CheckBatchTaps refuses an empty, oversized or non-finite filter.
func CheckBatchTaps(taps []float32) error {
	if len(taps) == 0 {
		return errors.New("gpu: batch FIR: no taps")
	}
	if len(taps) > BatchMaxTaps {
		return fmt.Errorf("gpu: batch FIR: %d taps exceeds the limit %d (direct convolution; split the filter)", len(taps), BatchMaxTaps)
	}
	for i, t := range taps {
		if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
			return fmt.Errorf("gpu: batch FIR: tap %d is %v", i, t)
		}
	}
	return nil
}

// BatchMaxLanes is the most values per frame a BatchFIR takes: 32 real
// channels or 16 complex ones. Each lane needs threads of its own in a
// block (fir_batch_lanes), and shared memory grows with lanes × taps.
const BatchMaxLanes = 32

// CheckBatchLanes refuses a frame of lanes values that the batch kernels
// do not take.
func CheckBatchLanes(lanes int) error {
	if lanes < 1 || lanes > BatchMaxLanes {
		return fmt.Errorf("gpu: batch FIR: %d values per frame; the batch kernel takes 1 to %d (up to %d real or %d complex channels)",
			lanes, BatchMaxLanes, BatchMaxLanes, BatchMaxLanes/2)
	}
	return nil
}
