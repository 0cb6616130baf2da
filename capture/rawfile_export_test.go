package capture

// SetParallelReads sets the goroutines that file and memory sources made
// afterwards read with (0: chosen from the CPUs), so tests exercise the
// parallel path on any machine.
func SetParallelReads(n int) { fileWorkers = n }
