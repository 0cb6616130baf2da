package config

import (
	"errors"
	"net"
	"slices"
	"strings"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/internal/zmq"
)

var (
	sourcePatterns = []string{PatternPull, PatternSub}
	sinkPatterns   = []string{PatternPush, PatternPub}
)

// validateZMQSource checks a zmq source: it connects, so the endpoint
// needs a host and a port.
func (c *Config) validateZMQSource(s *Source, add addFunc) {
	if s.Endpoint == "" {
		add("source.endpoint", "required for zmq sources: the sender's bound endpoint, tcp://host:port or ipc://path")
	} else if ep, err := zmq.ParseEndpoint(s.Endpoint); err != nil {
		add("source.endpoint", "%s", endpointMsg(err))
	} else if host, port, _ := net.SplitHostPort(ep.Address); ep.Network == "tcp" && (host == "" || port == "0") {
		add("source.endpoint", "%q: a zmq source connects, so it needs the sender's host and port (not * or 0)", s.Endpoint)
	}
	patternEnum(s.Pattern, "source.pattern", sourcePatterns, "zmq sources connect with pull (to a push_sink) or sub (to a pub_sink)", add)
	switch {
	case s.Format == "":
		add("source.format", "required for zmq sources: the item type on the wire (%s)", strings.Join(rawFormats, ", "))
	case !slices.Contains(rawFormats, s.Format):
		add("source.format", "unknown value %q for zmq (allowed: %s)", s.Format, strings.Join(rawFormats, ", "))
	}
	if !(s.SampleRate > 0) || s.SampleRate > 1e15 {
		add("source.sample_rate", "required for zmq sources (the wire does not carry it): > 0, got %s", num(s.SampleRate))
	}
	if s.Paced {
		add("source.paced", "only synthetic sources can be paced; a zmq stream comes at the sender's pace")
	}
	if s.Complex {
		add("source.complex", "only for synthetic sources; zmq takes it from the format")
	}
	if len(s.Channels.Names) > 0 {
		add("source.channels", "a list of names is for iio scan elements; give the channels in each item (channels: 4: a GNU Radio vlen-4 stream)")
	} else if n := s.Channels.Count; n > capture.MaxChannels || (n == 0 && c.idx.has("source.channels")) {
		add("source.channels", "must be in 1..%d, got %d", capture.MaxChannels, n)
	}
}

// validateZMQSink checks a zmq sink: it binds.
func (c *Config) validateZMQSink(s *Sink, add addFunc) {
	if s.Endpoint == "" {
		add("sink.endpoint", "required for zmq sinks: the endpoint to bind, tcp://host:port (host * = every interface) or ipc://path")
	} else if _, err := zmq.ParseEndpoint(s.Endpoint); err != nil {
		add("sink.endpoint", "%s", endpointMsg(err))
	}
	patternEnum(s.Pattern, "sink.pattern", sinkPatterns, "zmq sinks bind with push (lossless, to a pull_source) or pub (fan-out, to sub_sources)", add)
}

func patternEnum(v, path string, allowed []string, why string, add addFunc) {
	switch {
	case v == "":
		add(path, "required: %s", why)
	case !slices.Contains(allowed, v):
		add(path, "unknown value %q (allowed: %s; %s)", v, strings.Join(allowed, ", "), why)
	}
}

// endpointMsg drops the package prefix from an endpoint error.
func endpointMsg(err error) string {
	if errors.Is(err, zmq.ErrEndpoint) {
		return strings.TrimPrefix(err.Error(), "zmq: ")
	}
	return err.Error()
}
