package zmq

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrEndpoint means an endpoint string is not tcp://host:port or ipc://path.
var ErrEndpoint = errors.New("zmq: bad endpoint")

// Endpoint is a parsed ZeroMQ endpoint.
type Endpoint struct {
	// Network is "tcp" or "unix" (ipc://).
	Network string
	// Address is host:port for tcp ("" host = all interfaces) and the
	// socket path for ipc.
	Address string
}

// maxIPCPath is the longest path a Linux unix socket address holds.
const maxIPCPath = 107

// ParseEndpoint parses tcp://host:port or ipc://path. For tcp, host may be
// * (all interfaces, bind only) and port may be * or 0 (an ephemeral port,
// bind only); bind reports which one it got.
func ParseEndpoint(s string) (Endpoint, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Endpoint{}, fmt.Errorf("%w %q: want tcp://host:port or ipc://path", ErrEndpoint, s)
	}
	switch scheme {
	case "tcp":
		host, port, err := net.SplitHostPort(rest)
		if err != nil || rest == "" {
			return Endpoint{}, fmt.Errorf("%w %q: want tcp://host:port (e.g. tcp://127.0.0.1:5555)", ErrEndpoint, s)
		}
		if host == "" {
			return Endpoint{}, fmt.Errorf("%w %q: empty host (use * to bind every interface)", ErrEndpoint, s)
		}
		if strings.ContainsAny(host, " /") {
			return Endpoint{}, fmt.Errorf("%w %q: bad host %q", ErrEndpoint, s, host)
		}
		if port == "*" {
			port = "0"
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return Endpoint{}, fmt.Errorf("%w %q: port must be a number in 0..65535 or *, got %q", ErrEndpoint, s, port)
		}
		if host == "*" {
			host = ""
		}
		return Endpoint{Network: "tcp", Address: net.JoinHostPort(host, port)}, nil
	case "ipc":
		switch {
		case rest == "":
			return Endpoint{}, fmt.Errorf("%w %q: empty ipc path", ErrEndpoint, s)
		case len(rest) > maxIPCPath:
			return Endpoint{}, fmt.Errorf("%w %q: ipc path longer than %d bytes", ErrEndpoint, s, maxIPCPath)
		case strings.ContainsRune(rest, 0):
			return Endpoint{}, fmt.Errorf("%w %q: NUL in ipc path", ErrEndpoint, s)
		}
		return Endpoint{Network: "unix", Address: rest}, nil
	}
	return Endpoint{}, fmt.Errorf("%w %q: unsupported transport %q (tcp or ipc)", ErrEndpoint, s, scheme)
}

// String formats the endpoint as ZeroMQ spells it.
func (e Endpoint) String() string {
	if e.Network == "unix" {
		return "ipc://" + e.Address
	}
	host, port, _ := net.SplitHostPort(e.Address)
	if host == "" {
		host = "*"
	}
	return "tcp://" + net.JoinHostPort(host, port)
}

// ephemeral reports whether a tcp endpoint asks for any free port.
func (e Endpoint) ephemeral() bool {
	_, port, _ := net.SplitHostPort(e.Address)
	return e.Network == "tcp" && port == "0"
}

// ErrInUse means an ipc endpoint's socket file is being listened on by
// another process (or another sender of this one).
var ErrInUse = errors.New("address in use")

// listen binds the endpoint. An ipc path is checked first (checkIPCPath).
func (e Endpoint) listen() (net.Listener, error) {
	if e.Network == "unix" {
		if err := checkIPCPath(e.Address); err != nil {
			return nil, fmt.Errorf("zmq: bind %s: %w", e, err)
		}
	}
	l, err := net.Listen(e.Network, e.Address)
	if err != nil {
		return nil, fmt.Errorf("zmq: bind %s: %w", e, err)
	}
	if ul, ok := l.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(true)
	}
	return l, nil
}

// probeTimeout bounds checkIPCPath's connection attempt.
const probeTimeout = time.Second

// checkIPCPath makes an ipc path ready to bind. A socket file that someone
// still listens on is refused: libzmq would unlink it and bind over it,
// taking every new connection from the live sender (a hijack). A socket
// file that refuses connections was left by a sender that died, and is
// removed, as libzmq does. Any other file is never touched.
func checkIPCPath(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&os.ModeSocket == 0:
		return errors.New("the path exists and is not a socket; not replacing it")
	}
	c, err := net.DialTimeout("unix", path, probeTimeout)
	if err == nil {
		c.Close()
		return fmt.Errorf("%w: another process (or another sink) is bound to it and answers", ErrInUse)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("cannot tell whether the socket there is live (%w), so not replacing it", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale socket: %w", err)
	}
	return nil
}
