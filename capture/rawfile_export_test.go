package capture

// SetParallelReads sets the goroutines that file and memory sources made
// afterwards read with (0: chosen from the CPUs), so tests exercise the
// parallel path on any machine.
func SetParallelReads(n int) { fileWorkers = n }

// SkipViewSizeCheck makes the views of r, a float32 file, skip their
// fstat, so that a truncation is caught by the scan's fault recovery.
func SkipViewSizeCheck(r *Raw) { r.direct.skipSizeCheck = true }
