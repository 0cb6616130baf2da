package assemble

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/filter"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// GPUOptions maps the config's cuda section to backend options.
func GPUOptions(cfg *config.Config, log zerolog.Logger) cuda.Options {
	return cuda.Options{
		Device:    cfg.CUDA.Device,
		Transport: cuda.Transport(cfg.CUDA.Transport),
		MaxPinned: int64(cfg.CUDA.MaxPinnedMB) << 20,
		Watchdog:  time.Duration(cfg.CUDA.WatchdogMS) * time.Millisecond,
		PTXDir:    cfg.CUDA.PTXDir,
		// A config's write_combined can only turn it on; probe's
		// --write-combined flag does the same.
		WriteCombined: cfg.CUDA.WriteCombined,
		PinSource:     cfg.CUDA.PinSourceOn(),
		PinWindow:     int64(cfg.CUDA.PinWindowMB) << 20,
		PinThreads:    cfg.CUDA.PinThreads,
		ReadShare:     cfg.CUDA.ReadShare,
		Log:           log,
	}
}

// Backend builds the configured backend for the stage chain. backend:
// auto takes the GPU when this binary has CUDA and a device answers, and
// otherwise the CPU, saying why in the log; backend: cuda never falls back.
// auto takes the GPU for a plain fir on one channel, the case whose gain
// over the CPU has been measured; stage chains and N channels pass
// gpu-check on the GPU, but their gain at each block size is not measured
// yet (unmeasuredOnGPU), so auto keeps those on the CPU.
func Backend(cfg *config.Config, chain stage.Chain, log zerolog.Logger) (pipeline.Backend, error) {
	switch cfg.Backend {
	case "", "cpu":
		return cpu.New(chain, cfg.BlockSize)
	case "cuda":
		if reason := os.Getenv(cuda.FallbackEnv); reason != "" {
			return nil, fmt.Errorf("backend cuda: CUDA is not usable here: %s", reason)
		}
		return cuda.NewChainBackend(chain, GPUOptions(cfg, log))
	case "auto":
		opts := GPUOptions(cfg, log)
		_, plain := chain.PlainFIR()
		reason := os.Getenv(cuda.FallbackEnv)
		switch {
		case reason != "":
		case !cuda.Built():
			reason = "this binary was built without CUDA (make cuda builds build/sigproc-cuda)"
		case !plain || chain.ChannelCount() > 1:
			reason = unmeasuredOnGPU // auto picks what has been measured on a GPU
		default:
			if _, err := cuda.Probe(opts); err != nil {
				reason = err.Error()
			}
		}
		if reason != "" {
			log.Info().Str("reason", reason).Msg("backend auto: using cpu")
			return cpu.New(chain, cfg.BlockSize)
		}
		log.Info().Msg("backend auto: using cuda")
		return cuda.NewChainBackend(chain, opts)
	}
	return nil, fmt.Errorf("unknown backend %q (want cpu, cuda or auto)", cfg.Backend)
}

// Preflight checks, before the run starts, that be will start on the
// stream of pc: a CUDA backend probes its device and checks the pinned
// memory its blocks need against the budget (cuda.max_pinned_mb, or the
// default sized from the host). A run refused here has created no output
// and printed no summary. Backends without the check pass.
func Preflight(cfg *config.Config, be pipeline.Backend, pc pipeline.Config) error {
	p, ok := be.(interface{ Preflight(pipeline.Layout) error })
	if !ok {
		return nil
	}
	err := p.Preflight(pc.Layout())
	if errors.Is(err, cuda.ErrPinnedLimit) {
		return cfg.Wrap("cuda.max_pinned_mb", err)
	}
	return cfg.Wrap("backend", err)
}

// PathBackend builds the backend of one probe path: "cpu", or a CUDA
// transport by name (zero-copy, explicit, explicit-pageable) with the
// config's cuda section, adjusted by tune when it is not nil.
func PathBackend(name string, cfg *config.Config, chain stage.Chain, block int, log zerolog.Logger, tune func(*cuda.Options)) (pipeline.Backend, error) {
	if name == "cpu" {
		return cpu.New(chain, block)
	}
	if t, err := cuda.ParseTransport(name); err != nil || t == cuda.TransportAuto {
		return nil, fmt.Errorf("unknown path %q (want zero-copy, explicit, explicit-pageable or cpu)", name)
	}
	o := GPUOptions(cfg, log)
	o.Transport = cuda.Transport(name)
	if tune != nil {
		tune(&o)
	}
	return cuda.NewChainBackend(chain, o)
}

// Realtime returns the config's realtime section as the pipeline's
// settings, checked against this machine (CPUs available to the process).
// Check it before any device or output file is opened.
func Realtime(cfg *config.Config) (pipeline.Realtime, error) {
	rt := pipeline.Realtime{LockThread: cfg.Realtime.LockThread, CPUs: cfg.Realtime.CPUs, Mlock: cfg.Realtime.Mlock, BusyPoll: cfg.Realtime.BusyPoll}
	return rt, cfg.Wrap("realtime", rt.Validate())
}

// ProbeChain returns the chain a latency probe runs: the config's stages
// (at rate, 1 S/s when rate <= 0) when it has some and ntaps is 0, else a
// plain FIR of ProbeTaps.
func ProbeChain(cfg *config.Config, haveConfig bool, ntaps int, seed uint64, rate float64, complex bool) (stage.Chain, error) {
	if rate <= 0 {
		rate = 1
	}
	if ntaps == 0 && haveConfig && len(cfg.Stages) > 0 {
		return cfg.Chain(rate, complex)
	}
	taps, err := ProbeTaps(cfg, haveConfig, ntaps, seed)
	if err != nil {
		return stage.Chain{}, err
	}
	ch := stage.FIR(rate, complex, taps)
	ch.Stages[0].Method = cfg.Filter.Method
	return ch, nil
}

// ProbeTaps returns the config's filter when ntaps is 0 and there is a
// config, else a designed lowpass (cutoff 0.2 of the rate, Hamming) of
// ntaps taps, 64 when 0; below 3 taps, seeded Gaussian taps.
func ProbeTaps(cfg *config.Config, haveConfig bool, ntaps int, seed uint64) ([]float32, error) {
	if ntaps == 0 && haveConfig {
		rate := cfg.Source.SampleRate
		if rate <= 0 {
			rate = 1
		}
		return cfg.Taps(rate)
	}
	if ntaps == 0 {
		ntaps = 64
	}
	if ntaps < 3 {
		r := rand.New(rand.NewPCG(seed, 1))
		taps := make([]float32, ntaps)
		for i := range taps {
			taps[i] = float32(r.NormFloat64())
		}
		return taps, nil
	}
	spec := filter.Spec{Type: "lowpass", SampleRate: 1, CutoffHz: 0.2, NumTaps: ntaps, Window: "hamming"}
	return filter.Design(spec)
}

// unmeasuredOnGPU is why backend auto keeps stage chains and N channels on
// the CPU: backend: cuda runs them, but their gain over the CPU at each
// block size is not measured yet (README, "Backends").
const unmeasuredOnGPU = "the GPU's gain for stage chains and N channels is not measured yet (backend: cuda runs them)"
