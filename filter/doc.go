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
// Decimator (a FIR keeping every M-th output, polyphase: only the kept
// outputs are computed) and Resampler (a rational L/M polyphase resampler,
// scipy's upfirdn) stream the same way; on amd64 they run the strided
// AVX2 kernel of decim_amd64.s (strided.go). KaiserOrder and a Spec with
// TransitionHz and AttenuationDB design by specification, as scipy's
// kaiserord.
//
// FIR has two methods (Method): the direct sum, and overlap-save fast
// convolution for long filters (fastconv.go), with the same streaming
// contract, so any block split gives the same output to float32
// rounding. NewFIR picks by tap count and block size from a cost model
// fitted on the development machine (crossover.go); NewFIRMethod forces
// one. The fast method runs its own split-format radix-4 FFT (fft.go):
// on amd64 AVX-512 or AVX2 passes, with the last two stages, the
// spectrum product and the inverse's first two fused in registers
// (fft_amd64.s, fft_avx2_amd64.s); Go elsewhere. gonum's
// dsp/fourier was measured and not used: complex128 only, and 3.6 times
// slower than this package's Go passes alone (11.5 against 3.2 ns per
// point per radix-2 stage for a forward plus inverse transform of
// 4096..65536 points, one core). go-dsp allocates per call.
package filter
