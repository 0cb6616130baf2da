package config

import (
	"net"
	"strconv"
	"strings"
)

// Control configures the live control server: one port serving the
// control page, its JSON API (status, spectra, retuning stages) and
// /metrics, and how the config file's stage parameters are reloaded.
//
//	control:
//	  listen: 127.0.0.1:8080   # host:port; empty or absent = off
//	  allow_remote: false      # a non-loopback listen address needs true
//	  watch_config: false      # reload stage parameters when the file changes
type Control struct {
	// Listen is host:port to serve on; empty disables the server. A
	// non-loopback address (0.0.0.0, a LAN address, or no host) needs
	// AllowRemote: the API retunes the run and has no authentication.
	Listen string `yaml:"listen"`
	// AllowRemote permits a non-loopback Listen address; the log warns
	// about it.
	AllowRemote bool `yaml:"allow_remote"`
	// WatchConfig reloads the config file's stage parameters when the
	// file changes, as SIGHUP does.
	WatchConfig bool `yaml:"watch_config"`
}

// validateControl checks the control section; Validate calls it.
func (c *Config) validateControl(add addFunc) {
	ct := &c.Control
	l := ct.Listen
	if l == "" {
		if c.idx.has("control.listen") {
			add("control.listen", "must not be empty (omit the key, or the control section, to turn the server off)")
		}
		if ct.AllowRemote {
			add("control.allow_remote", "needs control.listen")
		}
		return
	}
	host, port, err := net.SplitHostPort(l)
	p, perr := strconv.Atoi(port)
	switch {
	case err != nil:
		add("control.listen", "want host:port (e.g. 127.0.0.1:8080), got %q", l)
	case perr != nil || p < 0 || p > 65535:
		add("control.listen", "port must be a number in 0..65535, got %q", port)
	case strings.ContainsAny(host, " /"):
		add("control.listen", "bad host %q", host)
	case !ct.AllowRemote && !LoopbackHost(host):
		add("control.listen", "%q is reachable from other machines and the control API retunes the run without authentication: listen on 127.0.0.1:%s, or set control.allow_remote: true", l, port)
	}
}

// LoopbackHost reports whether host (from host:port) names only this
// machine: localhost or a loopback IP. An empty host means every
// interface.
func LoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
