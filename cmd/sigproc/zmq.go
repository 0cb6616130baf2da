package main

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/config"
	"github.com/sigproc/sigproc/sink"
)

// openZMQSource opens a zmq source; it connects on the first read.
func openZMQSource(cfg *config.Config) (capture.Source, error) {
	s := &cfg.Source
	src, err := capture.OpenZMQ(capture.ZMQConfig{
		Endpoint:   s.Endpoint,
		Pattern:    s.Pattern,
		Format:     s.Format,
		SampleRate: s.SampleRate,
		PassTags:   s.PassTags,
		Channels:   s.Channels.Count,
	})
	if err != nil {
		return nil, cfg.Wrap("source", err)
	}
	return src, nil
}

// createZMQSink binds a zmq sink for a stream of channels channels. ctx is
// the run's: once it is done, a push sink waits at most its linger for a
// consumer.
func createZMQSink(ctx context.Context, cfg *config.Config, format string, rate float64, channels int) (sink.Sink, error) {
	s := &cfg.Sink
	snk, err := sink.ListenZMQ(ctx, sink.ZMQConfig{
		Endpoint:   s.Endpoint,
		Pattern:    s.Pattern,
		Format:     format,
		PassTags:   s.PassTags,
		SampleRate: rate,
		Channels:   channels,
	})
	if err != nil {
		return nil, cfg.Wrap("sink.endpoint", err)
	}
	return snk, nil
}

// watchZMQSource logs a zmq source's malformed messages and reconnections
// as they happen; the returned function logs its counters at the end.
func watchZMQSource(src capture.Source, log zerolog.Logger) func() {
	z, ok := src.(*capture.ZMQ)
	if !ok {
		return func() {}
	}
	z.OnMalformed(func(err error, total uint64) {
		log.Warn().Err(err).Uint64("malformed", total).Str("endpoint", z.Endpoint()).Msg("zmq: malformed message discarded")
	})
	z.OnReconnect(func(total uint64) {
		log.Warn().Uint64("reconnects", total).Str("endpoint", z.Endpoint()).Msg("zmq: sender went away; reconnected (messages in flight are lost)")
	})
	return func() {
		st := z.Stats()
		ev := log.Info()
		if st.Malformed > 0 || st.LostSamples > 0 || st.Reconnects > 0 || st.Restarts > 0 {
			ev = log.Warn()
		}
		ev.Str("endpoint", z.Endpoint()).Uint64("messages", st.Messages).Uint64("malformed", st.Malformed).
			Uint64("reconnects", st.Reconnects).Uint64("lost_samples", st.LostSamples).Uint64("restarts", st.Restarts).
			Uint64("tags_dropped", st.TagsDropped).Msg("zmq source")
	}
}

// linkZMQSink makes a zmq sink forward a zmq source's tags; the returned
// function logs the sink's counters at the end.
func linkZMQSink(src capture.Source, snk sink.Sink, log zerolog.Logger) func() {
	z, ok := snk.(*sink.ZMQ)
	if !ok {
		return func() {}
	}
	if ts, ok := src.(*capture.ZMQ); ok {
		z.ForwardTags(ts)
	}
	log.Info().Str("endpoint", z.Endpoint()).Msg("zmq sink bound")
	return func() {
		st := z.Stats()
		ev := log.Info()
		if st.DroppedMessages > 0 || st.QueueFull > 0 {
			ev = log.Warn()
		}
		ev.Str("endpoint", z.Endpoint()).Uint64("messages", st.Messages).Uint64("dropped_messages", st.DroppedMessages).
			Uint64("dropped_samples", st.DroppedSamples).Uint64("queue_full", st.QueueFull).
			Uint64("connects", st.Connects).Uint64("disconnects", st.Disconnects).Msg("zmq sink")
	}
}
