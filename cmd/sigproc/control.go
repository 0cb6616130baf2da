package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
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
func startControl(ctx context.Context, cfg *config.Config, file configFile, be pipeline.Backend, chain stage.Chain, slots int, retuned func(stage.Chain, []stage.Retune), mx *metrics.Metrics, log zerolog.Logger) (*runControl, *metrics.Metrics, error) {
	serve := cfg.Control.Listen != ""
	token, generated, err := controlToken(cfg)
	if err != nil {
		return nil, nil, err
	}
	rc := &runControl{ctl: control.New(control.Options{
		Backend: be, Chain: chain, BlockSize: cfg.BlockSize, Slots: slots, Log: log, Watch: serve,
		AllowedHosts: cfg.Control.AllowedHosts, Token: token, Retuned: retuned,
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
		if !srv.Loopback() {
			log.Warn().Str("addr", srv.Addr()).
				Msg("control server listens on a non-loopback address (control.allow_remote): anyone who can reach it can read the run's status and spectra; retunes need the token")
		}
		switch {
		case generated:
			// Logged once: the page keeps it in a cookie once opened
			// through this URL.
			log.Info().Str("url", pageURL(srv.Addr())+"?token="+token).
				Msg("control token made for this run: open this URL, or send Authorization: Bearer TOKEN")
		case token != "":
			log.Info().Msg("control writes need the token (" + tokenSource(cfg) + "): open the page as /?token=TOKEN, or send Authorization: Bearer TOKEN")
		}
		// Last, so that a reader (a script, a test) who waits for this
		// line has the server's other lines, the token's URL among them.
		log.Info().Str("addr", "http://"+srv.Addr()+"/").Msg("serving the control page, API and /metrics")
	}
	rc.stop = append(rc.stop, startReloads(ctx, file, chain, rc.ctl, cfg.Control.WatchConfig, log))
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
	// Requests in flight get a second; a client slower than that is cut
	// off, which does not fail the run.
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return rc.srv.Shutdown(sctx)
}

// controlToken is the token the control server's writes need: none on
// loopback (allow_remote false); else control.token, the environment's
// config.ControlTokenEnv, or a random one (generated true).
func controlToken(cfg *config.Config) (token string, generated bool, err error) {
	if !cfg.Control.AllowRemote || cfg.Control.Listen == "" {
		return "", false, nil
	}
	if cfg.Control.Token != "" {
		return cfg.Control.Token, false, nil
	}
	if tok := os.Getenv(config.ControlTokenEnv); tok != "" {
		if err := config.CheckControlToken(tok); err != nil {
			return "", false, fmt.Errorf("%s: %w", config.ControlTokenEnv, err)
		}
		return tok, false, nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("control token: %w", err)
	}
	return hex.EncodeToString(b), true, nil
}

func tokenSource(cfg *config.Config) string {
	if cfg.Control.Token != "" {
		return "control.token"
	}
	return config.ControlTokenEnv
}

// pageURL is the page's address for the log: an unspecified listen
// address (0.0.0.0, ::) is shown as 127.0.0.1, which works on this
// machine; from another, use this machine's address.
func pageURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// configFile is the config file a run loaded: its path, and the file as it
// stood just before it was read (nil if that stat failed). The watch
// compares against that, so that a change saved while the run was still
// starting, before the watch began, is applied too.
type configFile struct {
	path   string
	loaded os.FileInfo
}

// statConfig stats path before it is loaded (see configFile).
func statConfig(path string) configFile {
	fi, _ := os.Stat(path)
	return configFile{path: path, loaded: fi}
}

// watchFile calls changed whenever the file's size, modification time or
// identity (an editor's rename over it) differs from what it was when
// loaded, or at the last change, polling every period until ctx ends. A
// file that is briefly missing (mid-save) is waited for.
func watchFile(ctx context.Context, file configFile, period time.Duration, changed func()) {
	path, last := file.path, file.loaded
	var err error
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
