package main

import (
	"fmt"
	"os"
	"time"

	"github.com/rs/zerolog"
	"github.com/sigproc/sigproc/backend/cpu"
	"github.com/sigproc/sigproc/backend/cuda"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// gpuOptions maps the config's cuda section to backend options.
func gpuOptions(cfg *config.Config, log zerolog.Logger) cuda.Options {
	return cuda.Options{
		Device:    cfg.CUDA.Device,
		Transport: cuda.Transport(cfg.CUDA.Transport),
		MaxPinned: int64(cfg.CUDA.MaxPinnedMB) << 20,
		Watchdog:  time.Duration(cfg.CUDA.WatchdogMS) * time.Millisecond,
		PTXDir:    cfg.CUDA.PTXDir,
		// A config's write_combined can only turn it on; probe's
		// --write-combined flag does the same.
		WriteCombined: cfg.CUDA.WriteCombined,
		PinSource:     cfg.CUDA.PinSource,
		Log:           log,
	}
}

// newBackend builds the configured backend for the stage chain. backend:
// auto takes the GPU when this binary has CUDA and a device answers, and
// otherwise the CPU, saying why in the log; backend: cuda never falls back.
func newBackend(cfg *config.Config, chain stage.Chain, log zerolog.Logger) (pipeline.Backend, error) {
	switch cfg.Backend {
	case "", "cpu":
		return cpu.New(chain, cfg.BlockSize)
	case "cuda":
		if reason := os.Getenv(cuda.FallbackEnv); reason != "" {
			return nil, fmt.Errorf("backend cuda: CUDA is not usable here: %s", reason)
		}
		return cuda.NewChainBackend(chain, gpuOptions(cfg, log))
	case "auto":
		reason := ""
		if r := os.Getenv(cuda.FallbackEnv); r != "" {
			reason = r
		} else if !cuda.Built() {
			reason = "this binary was built without CUDA (make cuda builds build/sigproc-cuda)"
		} else if _, err := cuda.Probe(gpuOptions(cfg, log)); err != nil {
			reason = err.Error()
		}
		if reason == "" {
			if err := cuda.CheckChain(chain, gpuOptions(cfg, log)); err != nil {
				reason = err.Error()
			}
		}
		if reason != "" {
			log.Info().Str("reason", reason).Msg("backend auto: using cpu")
			return cpu.New(chain, cfg.BlockSize)
		}
		log.Info().Msg("backend auto: using cuda")
		return cuda.NewChainBackend(chain, gpuOptions(cfg, log))
	}
	return nil, fmt.Errorf("unknown backend %q (want cpu, cuda or auto)", cfg.Backend)
}
