//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/sigproc/sigproc/internal/cudrv"
	"github.com/sigproc/sigproc/internal/tagged"
	"github.com/sigproc/sigproc/kernels"
	"github.com/sigproc/sigproc/pipeline"
)

// zeroCopy is the zero-copy transport: one persistent kernel polls the
// input ring's tagged words in mapped, pinned host memory and writes its
// output the same way, and the consumer spins on the output tags (see the
// package doc's protocol). It runs a plain fir of one or N channels and
// retunes it (kernels/fir.cu, zc_retune_cuda.go), or a chain of shift, fir
// and resample stages (kernels/zchain.cu, planZCChain), whose shifts and
// firs it retunes.
type zeroCopy struct {
	b *backend // the run's configuration, context, stream, device taps and allocations

	l        pipeline.Layout
	ring     *pipeline.Ring
	returned uint64 // blocks returned so far: the index of the next
	out      []float32

	ctrl     []byte
	inWords  []uint64
	outWords []uint64
	words    int      // tagged words per input slot
	outSlot  int      // tagged words per output slot
	chain    *zcChain // a chain of stages (chain_persistent, _bank); nil: a plain fir
	times    []uint64 // optional timesWords per block, see kernels/fir.cu
	clockKHz int      // SM clock, to turn clock64 cycles into time
	hostT    []int64  // optional hostStride per block: write start, published, first output word seen, all seen, last word seen (ns)
	t0       time.Time
	launched bool
	zr       zcRetune // retunes, see zc_retune_cuda.go
}

// start allocates the mapped rings, control and parameter blocks, builds
// the ring whose hooks write the tagged input words, and launches the
// persistent kernel on the backend's stream; it returns once the kernel
// reports running.
func (z *zeroCopy) start(l pipeline.Layout) (*pipeline.Ring, error) {
	if err := z.setup(l); err != nil {
		return nil, err
	}
	return z.ring, nil
}

func (z *zeroCopy) setup(l pipeline.Layout) error {
	z.l, z.returned = l, 0
	if z.b.chain != nil {
		return z.setupChain(l)
	}
	z.out = make([]float32, l.BlockValues())
	ntaps := len(z.b.taps)
	z.words, z.outSlot = evenWords(l), evenWords(l)
	// Shared memory: padded taps, then three [history | block] buffers,
	// both sized for the most taps a retune may bring.
	hcap := retuneCapacity(ntaps, l.BlockSize, l.Channels, z.b.info.SharedOptin)
	smem := persistentSmem(hcap, l.BlockSize, l.Channels)
	if zeroCopySmem(ntaps, l, z.b.info.SharedOptin) > z.b.info.SharedOptin {
		return fmt.Errorf("gpu: zero-copy kernel needs %d KiB of shared memory for %d taps and %d-sample blocks of %d values per frame, %s has %d KiB; use smaller blocks, fewer channels or transport: explicit",
			smem>>10, ntaps, l.BlockSize, l.Channels, z.b.info.Name, z.b.info.SharedOptin>>10)
	}
	kernel := persistentKernel(l.Channels)
	fn, err := z.kernel("fir.ptx", kernels.PTX, "FIR", kernel, smem, zcStaticSmem)
	if err != nil {
		return err
	}
	ctrl, in, out, err := z.pinRings(l)
	if err != nil {
		return err
	}
	var timesDev cudrv.DevicePtr
	if z.b.opts.Timing {
		times, err := z.b.pin(timesCap*timesWords*8, true, false)
		if err != nil {
			return err
		}
		z.times = tagged.Words(times.Ptr(), timesWords*timesCap)
		timesDev = times.DevicePtr()
		z.hostT = make([]int64, hostStride*timesCap)
		z.t0 = time.Now()
		if z.clockKHz, err = cudrv.ClockKHz(z.b.opts.Device); err != nil {
			return err
		}
	}
	params, err := z.b.pin(int64(paramFloats(hcap))*4, true, false)
	if err != nil {
		return err
	}
	z.zr.init(params.Ptr(), hcap, z.b.taps)
	if err := z.newRing(l); err != nil {
		return err
	}

	threads, split := persistentGeometry(z.words/2, ntaps, z.b.opts.Split)
	ctrlDev, inDev, outDev, paramsDev := ctrl.DevicePtr(), in.DevicePtr(), out.DevicePtr(), params.DevicePtr()
	args := []int64{int64(ntaps), int64(l.BlockSize), int64(l.Channels), int64(l.Slots), int64(split), z.b.opts.StallAt, int64(hcap)}
	kparams := []unsafe.Pointer{
		unsafe.Pointer(&ctrlDev), unsafe.Pointer(&inDev), unsafe.Pointer(&outDev), unsafe.Pointer(&z.b.dtaps),
		unsafe.Pointer(&args[0]), unsafe.Pointer(&args[1]), unsafe.Pointer(&args[2]),
		unsafe.Pointer(&args[3]), unsafe.Pointer(&args[4]), unsafe.Pointer(&args[5]), unsafe.Pointer(&timesDev),
		unsafe.Pointer(&paramsDev), unsafe.Pointer(&args[6]),
	}
	if err := z.launch(fn, kernel, threads, smem, kparams); err != nil {
		return err
	}
	z.b.opts.Log.Debug().Int("threads", threads).Int("split", split).Int("smem", smem).Int("slots", l.Slots).
		Int("lanes", l.Channels).Int("retune_max_taps", hcap).Msg("persistent FIR kernel running")
	return nil
}

// setupChain starts the persistent chain kernel (kernels/zchain.cu) on
// the plan of the backend's chain for l's blocks: the same rings and
// protocol as the plain FIR's, an output slot of the chain's most output
// values a block, and a parameter block of two images of the chain's
// parameters for retunes (retuneStages).
func (z *zeroCopy) setupChain(l pipeline.Layout) error {
	p, err := planZCChain(*z.b.chain, l.BlockSize, z.b.info.SharedOptin)
	if err != nil {
		return err
	}
	if p.inCh != l.Channels {
		return fmt.Errorf("gpu: zero-copy chain %s takes frames of %d values, the stream has %d", z.b.chain, p.inCh, l.Channels)
	}
	smem := p.smemBytes()
	if smem+zcChainStaticSmem > z.b.info.SharedOptin {
		return fmt.Errorf("gpu: the zero-copy chain kernel needs %d KiB of shared memory for %s on %d-sample blocks, %s has %d KiB; use smaller blocks or transport: explicit",
			(smem+zcChainStaticSmem)>>10, z.b.chain, l.BlockSize, z.b.info.Name, z.b.info.SharedOptin>>10)
	}
	img, err := p.image(*z.b.chain, nil)
	if err != nil {
		return err
	}
	z.chain = p
	z.out = make([]float32, p.maxOut*p.outCh)
	z.words, z.outSlot = evenWords(l), p.outWords()
	kernel := "chain_persistent"
	if p.banks() {
		kernel = "chain_persistent_bank" // its registers apart (see zchain.cu)
	}
	fn, err := z.kernel("zchain.ptx", kernels.ZChainPTX, "chain", kernel, smem, zcChainStaticSmem)
	if err != nil {
		return err
	}
	ctrl, in, out, err := z.pinRings(l)
	if err != nil {
		return err
	}
	params, err := z.b.pin(int64(paramFloats(p.imageLen))*4, true, false)
	if err != nil {
		return err
	}
	z.zr.init(params.Ptr(), p.imageLen, img)
	if err := z.newRing(l); err != nil {
		return err
	}
	dops, err := z.b.alloc(int64(len(p.ops)) * 8)
	if err != nil {
		return err
	}
	if err := cudrv.MemcpyHtoD(dops, unsafe.Pointer(&p.ops[0]), int64(len(p.ops))*8); err != nil {
		return fmt.Errorf("gpu: copy the chain's ops: %w", err)
	}
	dtaps, err := z.b.alloc(int64(len(p.taps)) * 4)
	if err != nil {
		return err
	}
	if err := cudrv.MemcpyHtoD(dtaps, unsafe.Pointer(&p.taps[0]), int64(len(p.taps))*4); err != nil {
		return fmt.Errorf("gpu: copy the chain's taps: %w", err)
	}
	if err := cudrv.SyncUploads("zero-copy chain"); err != nil {
		return err
	}
	threads := zcChainThreads(z.words)
	ctrlDev, inDev, outDev, paramsDev := ctrl.DevicePtr(), in.DevicePtr(), out.DevicePtr(), params.DevicePtr()
	b2i := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	args := []int64{int64(len(p.ops) / zcOpWords), int64(len(p.taps)), int64(l.BlockSize), int64(p.channels), b2i(p.inCplx),
		int64(l.Slots), int64(z.words), int64(z.outSlot), b2i(p.outCplx), int64(p.stageOff), int64(p.smemFloats), z.b.opts.StallAt,
		int64(z.zr.tcap)}
	kparams := []unsafe.Pointer{
		unsafe.Pointer(&ctrlDev), unsafe.Pointer(&inDev), unsafe.Pointer(&outDev), unsafe.Pointer(&dops),
		unsafe.Pointer(&args[0]), unsafe.Pointer(&dtaps), unsafe.Pointer(&args[1]), unsafe.Pointer(&args[2]),
		unsafe.Pointer(&args[3]), unsafe.Pointer(&args[4]), unsafe.Pointer(&args[5]), unsafe.Pointer(&args[6]),
		unsafe.Pointer(&args[7]), unsafe.Pointer(&args[8]), unsafe.Pointer(&args[9]), unsafe.Pointer(&args[10]),
		unsafe.Pointer(&args[11]), unsafe.Pointer(&paramsDev), unsafe.Pointer(&args[12]),
	}
	if err := z.launch(fn, kernel, threads, smem, kparams); err != nil {
		return err
	}
	z.b.opts.Log.Info().Str("chain", z.b.chain.String()).Int("ops", len(p.ops)/zcOpWords).Int("threads", threads).
		Int("smem", smem).Int("slots", l.Slots).Int("out_values_max", p.maxOut*p.outCh).Msg("persistent chain kernel running")
	return nil
}

// kernel loads the module (from ptxFile in the PTX directory, or the
// embedded ptx) and returns its kernel name, allowed smem bytes of
// dynamic shared memory beside its static bytes. The module is freed with
// the context: a kernel that will not stop keeps it.
func (z *zeroCopy) kernel(ptxFile, ptx, what, name string, smem, static int) (cudrv.Function, error) {
	mod, err := cudrv.LoadModule(cudrv.PTXFile(z.b.opts.PTXDir, ptxFile), ptx, what)
	if err != nil {
		return cudrv.Function{}, err
	}
	fn, err := mod.Function(name)
	if err != nil {
		return cudrv.Function{}, fmt.Errorf("gpu: kernel %s: %w", name, err)
	}
	if smem+static > 48<<10 {
		if err := fn.SetMaxDynamicSmem(smem); err != nil {
			return cudrv.Function{}, fmt.Errorf("gpu: %w", err)
		}
	}
	return fn, nil
}

// pinRings maps the control block and the rings of tagged words: z.words
// a slot in, z.outSlot out.
func (z *zeroCopy) pinRings(l pipeline.Layout) (ctrl, in, out *cudrv.HostBuf, err error) {
	if ctrl, err = z.b.pin(ctrlSize, true, false); err != nil {
		return nil, nil, nil, err
	}
	if in, err = z.b.pin(int64(l.Slots*z.words)*8, true, z.b.opts.WriteCombined); err != nil {
		return nil, nil, nil, err
	}
	if out, err = z.b.pin(int64(l.Slots*z.outSlot)*8, true, false); err != nil {
		return nil, nil, nil, err
	}
	z.ctrl = ctrl.Bytes()
	z.inWords = tagged.Words(in.Ptr(), l.Slots*z.words)
	z.outWords = tagged.Words(out.Ptr(), l.Slots*z.outSlot)
	return ctrl, in, out, nil
}

// newRing makes the ring the producer fills, its hooks writing the
// tagged input words (zr.attach).
func (z *zeroCopy) newRing(l pipeline.Layout) error {
	ring, err := pipeline.NewRing(pipeline.AlignedBytes(l.Size()), l)
	if err != nil {
		return err
	}
	var stamp func(i uint64, k int)
	if hostT, t0 := z.hostT, z.t0; hostT != nil {
		stamp = func(i uint64, k int) { hostT[hostStride*(i&(timesCap-1))+uint64(k)] = int64(time.Since(t0)) }
	}
	if err := z.zr.attach(ring, z.inWords, z.words, !z.b.opts.NoDemote, stamp); err != nil {
		return err
	}
	z.ring = ring
	return nil
}

// launch starts the persistent kernel fn on the backend's stream and
// waits until it reports running: within the watchdog, or it never will.
func (z *zeroCopy) launch(fn cudrv.Function, name string, threads, smem int, kparams []unsafe.Pointer) error {
	if err := fn.Launch(1, threads, smem, z.b.stream, kparams); err != nil {
		return fmt.Errorf("gpu: launch %s (%d threads, %d B shared): %w", name, threads, smem, err)
	}
	z.launched = true
	if err := z.waitCtrl(ctrlRunning, 1, z.b.opts.watchdog()); err != nil {
		return fmt.Errorf("gpu: persistent kernel did not start: %w", err)
	}
	z.zr.live.Store(true)
	return nil
}

func (z *zeroCopy) ctrlWord(off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&z.ctrl[off]))
}

// waitCtrl spins until the control word at off reaches want.
func (z *zeroCopy) waitCtrl(off int, want uint64, limit time.Duration) error {
	t0 := time.Now()
	for z.ctrlWord(off).Load() < want {
		if e := z.ctrlWord(ctrlError).Load(); e != 0 {
			return fmt.Errorf("kernel reported error %d", e)
		}
		if _, err := z.b.stream.Done(); err != nil {
			return fmt.Errorf("kernel failed: %w", err)
		}
		if time.Since(t0) > limit {
			return fmt.Errorf("%w in %v (heartbeat %d)", ErrWatchdog, limit, z.ctrlWord(ctrlHeartbeat).Load())
		}
		runtime.Gosched()
	}
	return nil
}

// ComputeTimes returns, for the zero-copy transport with Options.Timing,
// the GPU time in µs from a block's last input word arriving to its output
// being written, for the blocks returned so far (the last timesCap of
// them), measured in SM cycles (globaltimer ticks too coarsely on some
// GPUs). Call it before Close.
func (z *zeroCopy) ComputeTimes() []float64 {
	if z.times == nil || z.clockKHz <= 0 {
		return nil
	}
	n := min(z.returned, timesCap)
	out := make([]float64, 0, n)
	for i := z.returned - n; i < z.returned; i++ {
		if g, ok := z.gpuPhasesUs(i); ok {
			out = append(out, g[0])
		}
	}
	return out
}

// gpuPhasesUs reads block i's kernel clocks (see kernels/fir.cu, times) as
// µs: {compute: whole block seen → thread 0's output written, input wait:
// thread 0's own input pair → whole block seen, all stored: whole block
// seen → every thread's output store issued}.
func (z *zeroCopy) gpuPhasesUs(i uint64) ([3]float64, bool) {
	j := timesWords * (i & (timesCap - 1))
	var c [4]uint64
	for k := range c {
		c[k] = atomic.LoadUint64(&z.times[j+uint64(k)])
	}
	first, all, cin, cout := c[0], c[1], c[2], c[3]
	if cin == 0 || cout < cin || first == 0 || first > cin || all < cin {
		return [3]float64{}, false
	}
	us := func(d uint64) float64 { return float64(d) * 1e3 / float64(z.clockKHz) }
	return [3]float64{us(cout - cin), us(cin - first), us(all - cin)}, true
}

// Breakdown returns, with Options.Timing, per-stage latency samples in µs
// of the zero-copy transport for the blocks returned so far (the last
// timesCap): "host_write" (the tagged-word write into the mapped ring; for
// a pipeline.WordSource, which wrote the words itself, only the padding
// and demote),
// "gpu_compute" (ComputeTimes), "host_read" (first valid output word to the
// last), and "pcie_round_trip": publish to first output word, less the GPU
// compute, that is the input's detection plus the output's write-back and
// detection; "output_spread" (first output word → last output word seen) is
// the part of host_read spent waiting for the output to arrive rather than
// copying it. Two GPU-side figures split it further: "gpu_input_wait"
// (thread 0's own input words arrived → every thread's had: the spread of
// the input's arrival) and "gpu_all_stored" (whole block seen → the last
// thread issued its output stores, which bounds how spread out the output's
// arrival at the host can be). Call it before Close.
func (z *zeroCopy) Breakdown() map[string][]float64 {
	if z.hostT == nil || z.clockKHz <= 0 {
		return nil
	}
	n := min(z.returned, timesCap)
	var wr, rt, comp, read, spread, wait, all []float64
	for i := z.returned - n; i < z.returned; i++ {
		j := hostStride * (i & (timesCap - 1))
		start, pub, first, last, lastw := z.hostT[j], z.hostT[j+1], z.hostT[j+2], z.hostT[j+3], z.hostT[j+4]
		g, ok := z.gpuPhasesUs(i)
		if !ok || pub == 0 || pub < start || first < pub || lastw < first || last < lastw {
			continue
		}
		wr = append(wr, float64(pub-start)/1e3)
		rt = append(rt, float64(first-pub)/1e3-g[0])
		comp = append(comp, g[0])
		read = append(read, float64(last-first)/1e3)
		spread = append(spread, float64(lastw-first)/1e3)
		wait = append(wait, g[1])
		all = append(all, g[2])
	}
	return map[string][]float64{"host_write": wr, "pcie_round_trip": rt, "gpu_compute": comp, "host_read": read,
		"output_spread": spread, "gpu_input_wait": wait, "gpu_all_stored": all}
}

// logBreakdown logs the median and p99 of each Breakdown stage once, when
// timing was asked for.
func (z *zeroCopy) logBreakdown() {
	m := z.Breakdown()
	if m == nil || z.returned == 0 {
		return
	}
	ev := z.b.opts.Log.Info().Uint64("blocks", z.returned)
	for _, k := range []string{"host_write", "pcie_round_trip", "gpu_input_wait", "gpu_compute", "gpu_all_stored", "output_spread", "host_read"} {
		v := m[k]
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		ev = ev.Float64(k+"_p50_us", v[len(v)/2]).Float64(k+"_p99_us", v[min(len(v)-1, len(v)*99/100)])
	}
	ev.Msg("zero-copy latency breakdown")
	z.hostT = nil // once
}

// next waits for the next block from the producer (its publish hook has
// written the tagged input words) and spins on its output tags.
func (z *zeroCopy) next(ctx context.Context) (pipeline.Output, error) {
	blk, err := z.ring.Next(ctx)
	if err != nil {
		return pipeline.Output{}, err
	}
	i := z.returned
	s := int(i%uint64(z.l.Slots)) * z.outSlot
	nv := len(blk.Samples)
	if z.chain != nil {
		nv = z.chain.blockOut(nv/z.l.Channels) * z.chain.outCh
		if nv == 0 {
			// No output words to wait for (a decimator's block shorter
			// than its factor): the input slot is free once the kernel
			// has finished the block.
			if err := z.waitCtrl(ctrlHeartbeat, i+1, z.b.opts.watchdog()); err != nil {
				return pipeline.Output{}, fmt.Errorf("gpu: block %d: %w", i, err)
			}
		}
	}
	out := z.out[:nv]
	// Spin on the output tags: the latency path. Every 4096 polls, check
	// the kernel's health and the watchdog (heartbeat must advance).
	spins := 0
	var t0 time.Time
	beat := z.ctrlWord(ctrlHeartbeat).Load()
	limit := z.b.opts.watchdog()
	words := z.outWords[s : s+len(out)]
	if z.hostT != nil && len(words) > 0 {
		// Timing only: wait for the first word alone, to split the host's
		// read from the round trip, then for the last, to split the
		// output's arrival from the host's copy.
		j := hostStride * (i & (timesCap - 1))
		for _, k := range [...]struct {
			w  int
			at uint64
		}{{0, 2}, {len(words) - 1, 4}} {
			w0 := time.Now()
			for n := 0; uint32(atomic.LoadUint64(&words[k.w])>>32) != uint32(i+1); n++ {
				if n&4095 == 4095 && time.Since(w0) > limit {
					return pipeline.Output{}, fmt.Errorf("%w for %v waiting for block %d", ErrWatchdog, limit, i)
				}
			}
			z.hostT[j+k.at] = int64(time.Since(z.t0))
		}
	}
	err = tagged.Read(out, words, uint32(i+1), func() error {
		spins++
		if spins&4095 != 0 {
			return nil
		}
		if t0.IsZero() {
			t0 = time.Now()
		}
		if e := z.ctrlWord(ctrlError).Load(); e != 0 {
			return fmt.Errorf("gpu: kernel reported error %d at block %d", e, i)
		}
		if h := z.ctrlWord(ctrlHeartbeat).Load(); h != beat {
			beat, t0 = h, time.Now()
		}
		if time.Since(t0) > limit {
			return fmt.Errorf("%w for %v waiting for block %d (heartbeat %d)", ErrWatchdog, limit, i, beat)
		}
		// No runtime.Gosched: this goroutine is locked to its OS thread,
		// and yielding would cost a futex hand-off (see pipeline.backoff).
		return nil
	})
	if err != nil {
		return pipeline.Output{}, err
	}
	if z.hostT != nil {
		z.hostT[hostStride*(i&(timesCap-1))+3] = int64(time.Since(z.t0))
	}
	z.ring.Release()
	z.returned++
	return blockOutput(blk.Seq, blk.Timestamp, len(blk.Samples), z.l.Channels, out), nil
}

// close stops the kernel through the stop flag and waits for it, bounded
// by the watchdog; keep reports a kernel that did not stop, which still
// reads the mapped rings.
func (z *zeroCopy) close() (keep bool, err error) {
	z.logBreakdown()
	z.zr.stop()
	if !z.launched {
		return false, nil
	}
	z.ctrlWord(ctrlStop).Store(1)
	if err := z.waitCtrl(ctrlRunning, 2, z.b.opts.watchdog()); err != nil {
		return true, fmt.Errorf("gpu: stop persistent kernel (its memory is released at process exit): %w", err)
	}
	z.launched = false
	if err := z.b.stream.Synchronize(); err != nil {
		return false, fmt.Errorf("gpu: persistent kernel: %w", err)
	}
	return false, nil
}
