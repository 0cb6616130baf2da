// Package filter designs FIR filters and runs them over sample streams.
//
// Design builds windowed-sinc lowpass, highpass, bandpass and bandstop
// filters; Measure and FrequencyResponse check what a set of taps really
// does; ParseTaps and LoadTaps read taps from text files. FIR is a
// streaming, allocation-free filter for real or interleaved I/Q float32
// blocks. On amd64 it runs generated AVX-512 or AVX2+FMA assembly
// (fir_amd64.s, from internal/asmgen; build tag purego disables it),
// elsewhere a portable Go kernel. Convolve is the slow float64 reference
// used to verify every kernel.
//
// FIR is direct-form only. Overlap-save FFT convolution was considered
// for long filters but not added: at 512 taps the AVX-512 kernel runs
// about 140 MS/s on one core, which an allocation-free pure-Go float32
// FFT is unlikely to beat, and go-dsp's FFT (complex128, allocating,
// about 2 ms per 4096 points) is far slower. It may pay off beyond a few
// thousand taps.
package filter
