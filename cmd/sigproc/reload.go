package main

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/control"
	"github.com/sigproc/sigproc/stage"
)

// reloads serialises a run's config reloads (SIGHUP, control.watch_config).
// Each request takes the next sequence number and wakes one goroutine,
// which reads the file and applies it, one reload at a time. A reload
// overtaken by a newer request while it was reading the file is dropped
// unapplied, as the newer one reads the file again: so reloads apply in
// the order asked for, and never an older config after a newer one,
// however SIGHUPs and file changes interleave.
type reloads struct {
	mu   sync.Mutex
	seq  uint64 // requests so far
	why  string // the newest request's trigger
	kick chan struct{}
}

func newReloads() *reloads { return &reloads{kick: make(chan struct{}, 1)} }

// request asks for a reload; it never blocks (a signal handler calls it).
func (r *reloads) request(why string) {
	r.mu.Lock()
	r.seq++
	r.why = why
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default: // a wake-up is pending: it will see this request
	}
}

func (r *reloads) newest() (uint64, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq, r.why
}

// run serves the requests until ctx ends (see serve).
func (r *reloads) run(ctx context.Context, load func() (stage.Chain, error), apply func(seq uint64, why string, ch stage.Chain, err error), superseded func(seq, by uint64)) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		if ctx.Err() == nil {
			r.serve(load, apply, superseded)
		}
	}
}

// serve serves the newest request, its wake-up taken: load reads the
// config and builds its chain, and apply applies it unless a newer request
// came in meanwhile (its wake-up is then pending: the newer one reads the
// file again).
func (r *reloads) serve(load func() (stage.Chain, error), apply func(seq uint64, why string, ch stage.Chain, err error), superseded func(seq, by uint64)) {
	seq, why := r.newest()
	ch, err := load()
	if now, _ := r.newest(); now != seq {
		superseded(seq, now)
		return
	}
	apply(seq, why, ch, err)
}

// startReloads arranges a run's reloads of the config file: on SIGHUP,
// and with watch when the file changes. A SIGHUP held since start-up
// (claimHangup) is served here, before the first block. The returned
// function stops the reloads and waits for the one in progress, if any.
func startReloads(ctx context.Context, file configFile, chain stage.Chain, ctl *control.Control, watch bool, log zerolog.Logger) (stop func()) {
	r := newReloads()
	load := func() (stage.Chain, error) {
		next, err := config.Load(file.path)
		if err != nil {
			return stage.Chain{}, err
		}
		return next.ChainOf(chain.SampleRate, chain.Complex, chain.Channels)
	}
	apply := func(seq uint64, why string, ch stage.Chain, err error) {
		if err != nil {
			log.Error().Err(err).Str("trigger", why).Uint64("reload", seq).Msg("reload refused: the config does not validate; the run goes on unchanged")
			return
		}
		done, err := ctl.Reload(ch)
		switch {
		case err != nil:
			log.Error().Err(err).Str("trigger", why).Uint64("reload", seq).Msg("reload refused; the run goes on unchanged")
		case len(done) == 0:
			log.Info().Str("trigger", why).Uint64("reload", seq).Msg("reload: no stage parameter changed")
		default:
			log.Info().Str("trigger", why).Uint64("reload", seq).Int("stages", len(done)).Int64("chain_input_sample", done[0].ChainAt).
				Msg("reloaded the config's stage parameters (other sections take effect at the next start)")
		}
	}
	superseded := func(seq, by uint64) {
		log.Debug().Uint64("reload", seq).Uint64("by", by).Msg("reload superseded by a newer request before it was applied")
	}
	restore := onHangup(ctx, func() { r.request("SIGHUP") })
	if seq, _ := r.newest(); seq > 0 {
		<-r.kick
		r.serve(load, apply, superseded)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.run(rctx, load, apply, superseded)
	}()
	if watch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchFile(rctx, file, 500*time.Millisecond, func() { r.request("file changed") })
		}()
	}
	return func() {
		restore()
		cancel()
		wg.Wait()
	}
}
