package config

import (
	"fmt"
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
//	  token: ""                # allow_remote only: writes need it (else SIGPROC_CONTROL_TOKEN, else a random one)
//	  allowed_hosts: []        # host names the server answers to besides IP literals and localhost
//	  watch_config: false      # reload stage parameters when the file changes
type Control struct {
	// Listen is host:port to serve on; empty disables the server. A
	// non-loopback address (0.0.0.0, a LAN address, or no host) needs
	// AllowRemote.
	Listen string `yaml:"listen"`
	// AllowRemote permits a non-loopback Listen address; the log warns
	// about it, and writes (retunes) then need a token.
	AllowRemote bool `yaml:"allow_remote"`
	// Token is what writes must present (Authorization: Bearer, or the
	// page's cookie) when AllowRemote is set. Empty: the environment's
	// ControlTokenEnv, else a random token logged once at start.
	Token string `yaml:"token"`
	// AllowedHosts are the host names (as a browser sends them in Host)
	// the server answers to, besides IP literals and localhost; any other
	// name gets 421, which is what defeats DNS rebinding.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// WatchConfig reloads the config file's stage parameters when the
	// file changes, as SIGHUP does.
	WatchConfig bool `yaml:"watch_config"`
}

// ControlTokenEnv names the environment variable that gives the control
// server's token when control.allow_remote is set and control.token is not.
const ControlTokenEnv = "SIGPROC_CONTROL_TOKEN"

// MinTokenLen is the shortest control token accepted.
const MinTokenLen = 16

// validateControl checks the control section; Validate calls it.
func (c *Config) validateControl(add addFunc) {
	ct := &c.Control
	if ct.Token != "" || c.idx.has("control.token") {
		if err := CheckControlToken(ct.Token); err != nil {
			add("control.token", "%v", err)
		} else if !ct.AllowRemote {
			add("control.token", "only used with control.allow_remote: true (on loopback the API needs no token)")
		}
	}
	for i, h := range ct.AllowedHosts {
		if msg := checkHostName(h); msg != "" {
			add(fmt.Sprintf("control.allowed_hosts[%d]", i), "%s", msg)
		}
	}
	l := ct.Listen
	if l == "" {
		if c.idx.has("control.listen") {
			add("control.listen", "must not be empty (omit the key, or the control section, to turn the server off)")
		}
		for _, k := range []string{"allow_remote", "allowed_hosts"} {
			if c.idx.has("control."+k) && (k != "allow_remote" || ct.AllowRemote) {
				add("control."+k, "needs control.listen")
			}
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
		add("control.listen", "%q is reachable from other machines and the control API retunes the run: listen on 127.0.0.1:%s, or set control.allow_remote: true (writes then need a token)", l, port)
	}
}

// CheckControlToken checks a control token (control.token or
// ControlTokenEnv): at least MinTokenLen characters that can go in an HTTP
// header and a cookie unquoted.
func CheckControlToken(tok string) error {
	if len(tok) < MinTokenLen {
		return fmt.Errorf("must be at least %d characters, got %d", MinTokenLen, len(tok))
	}
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~+/=", r)) {
			return fmt.Errorf("may hold only letters, digits and -._~+/= (it goes in a header and a cookie), got %q", r)
		}
	}
	return nil
}

// checkHostName returns why h is not a host name for allowed_hosts, or "".
func checkHostName(h string) string {
	switch {
	case h == "":
		return "must not be empty"
	case net.ParseIP(strings.Trim(h, "[]")) != nil:
		return fmt.Sprintf("%q is an IP literal: those are always allowed; list host names only", h)
	case strings.EqualFold(h, "localhost"):
		return "localhost is always allowed; list other host names only"
	case len(h) > 253:
		return "longer than 253 characters"
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Sprintf("%q is not a host name (labels of 1..63 letters, digits or -, no port or scheme)", h)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return fmt.Sprintf("%q is not a host name (labels of 1..63 letters, digits or -, no port or scheme)", h)
			}
		}
	}
	return ""
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
