package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/control"
	"github.com/sigproc/sigproc/metrics"
	"github.com/sigproc/sigproc/pipeline"
	"github.com/sigproc/sigproc/stage"
)

// runControl is a run's live control: the control server when
// control.listen is set, and the reload of the config's stage parameters
// on SIGHUP and, with control.watch_config, when the file changes.
type runControl struct {
	ctl  *control.Control
	srv  *metrics.Server
	stop []func()
}

// startControl binds the control server (before any output is created, so
// a port in use fails the run early) and arranges the reloads. mx feeds
// the server's /metrics; it is created when nil and returned.
func startControl(ctx context.Context, cfg *config.Config, path string, be pipeline.Backend, chain stage.Chain, mx *metrics.Metrics, log zerolog.Logger) (*runControl, *metrics.Metrics, error) {
	serve := cfg.Control.Listen != ""
	rc := &runControl{ctl: control.New(control.Options{
		Backend: be, Chain: chain, BlockSize: cfg.BlockSize, Slots: cfg.RingSlots, Log: log, Watch: serve,
	})}
	if serve {
		if mx == nil {
			mx = metrics.New(be.Name())
		}
		srv, err := metrics.ServeAll(cfg.Control.Listen, rc.ctl.Handler(mx.Handler()))
		if err != nil {
			return nil, nil, cfg.Wrap("control.listen", err)
		}
		rc.srv = srv
		log.Info().Str("addr", "http://"+srv.Addr()+"/").Msg("serving the control page, API and /metrics")
		if !srv.Loopback() {
			log.Warn().Str("addr", srv.Addr()).
				Msg("control server listens on a non-loopback address (control.allow_remote): anyone who can reach it can retune this run")
		}
	}
	rc.stop = append(rc.stop, startReloads(ctx, path, chain, rc.ctl, cfg.Control.WatchConfig, log))
	return rc, mx, nil
}

// instrument feeds the control's status from the run.
func (rc *runControl) instrument(opts pipeline.Options) pipeline.Options {
	if rc.srv == nil {
		return opts
	}
	return rc.ctl.Instrument(opts)
}

// finish publishes the final stats; the server keeps answering until
// close.
func (rc *runControl) finish(st pipeline.Stats) { rc.ctl.Update(st) }

// close stops the reloads and shuts the server down.
func (rc *runControl) close() error {
	for _, f := range rc.stop {
		f()
	}
	if rc.srv == nil {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return rc.srv.Shutdown(sctx)
}

// watchFile calls changed whenever path's size, modification time or
// identity (an editor's rename over it) changes, polling every period
// until ctx ends. A file that is briefly missing (mid-save) is waited for.
func watchFile(ctx context.Context, path string, period time.Duration, changed func()) {
	last, err := os.Stat(path)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fi, serr := os.Stat(path)
		if serr != nil {
			if !errors.Is(serr, os.ErrNotExist) {
				err = serr
			}
			continue
		}
		if err != nil || last == nil || fi.Size() != last.Size() || !fi.ModTime().Equal(last.ModTime()) || !os.SameFile(fi, last) {
			last, err = fi, nil
			changed()
		}
	}
}
