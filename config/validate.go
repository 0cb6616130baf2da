package config

import (
	"fmt"
	"math"
	"net"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/filter"
)

// Allowed enum values, in the order error messages list them.
var (
	sourceTypes  = []string{SourceSynthetic, SourceFile, SourceStdin, SourceIIO, SourceALSA, SourceZMQ}
	fileFormats  = []string{FormatRF32, FormatRI16, FormatCF32, FormatCI16, FormatCU8, FormatCS8, FormatWAV, FormatSigMF}
	rawFormats   = []string{FormatRF32, FormatRI16, FormatCF32, FormatCI16, FormatCU8, FormatCS8}
	signals      = []string{SignalTone, SignalMultitone, SignalChirp, SignalNoise, SignalImpulse, SignalSum}
	overruns     = []string{OverrunBlock, OverrunDrop}
	backends     = []string{BackendCPU, BackendCUDA, BackendAuto}
	transports   = []string{TransportAuto, TransportZeroCopy, TransportExplicit, TransportExplicitPageable}
	sinkTypes    = []string{SinkFile, SinkSigMF, SinkWAV, SinkNull, SinkZMQ}
	sinkFormats  = []string{FormatRF32, FormatCF32, FormatRI16, FormatCI16, FormatCS8}
	wavFormats   = []string{WAVPCM16, WAVPCM24, WAVFloat32}
	logLevels    = []string{"trace", "debug", "info", "warn", "error"}
	logFormats   = []string{LogConsole, LogJSON}
	designTypes  = []string{filter.Lowpass, filter.Highpass, filter.Bandpass, filter.Bandstop}
	methods      = []string{filter.MethodAuto.String(), filter.MethodDirect.String(), filter.MethodFFT.String()}
	designWindow = []string{filter.WindowHamming, filter.WindowHann, filter.WindowBlackman, filter.WindowKaiser, filter.WindowRectangular}
)

// Keys each source type and signal uses, beyond what the struct allows.
var (
	sourceKeys = map[string][]string{
		SourceSynthetic: {"type", "sample_rate", "complex", "paced", "duration_s", "num_samples"},
		SourceFile:      {"type", "path", "format", "sample_rate", "channels", "complex", "duration_s", "num_samples"},
		SourceStdin:     {"type", "format", "sample_rate", "channels", "complex", "duration_s", "num_samples"},
		SourceIIO:       {"type", "device", "channels", "complex", "apply_scale", "sample_rate", "buffer_length", "sysfs_root", "dev_root", "duration_s", "num_samples"},
		SourceALSA:      {"type", "device", "format", "channels", "channel_count", "complex", "sample_rate", "period_size", "buffer_size", "duration_s", "num_samples"},
		SourceZMQ:       {"type", "endpoint", "pattern", "format", "sample_rate", "channels", "pass_tags", "duration_s", "num_samples"},
	}
	sinkKeys = map[string][]string{
		SinkFile:  {"type", "path", "format", "overwrite", "split"},
		SinkSigMF: {"type", "path", "format", "overwrite", "split"},
		SinkWAV:   {"type", "path", "format", "overwrite"},
		SinkNull:  {"type"},
		SinkZMQ:   {"type", "endpoint", "pattern", "format", "pass_tags"},
	}
	signalKeys = map[string][]string{
		SignalTone:      {"signal", "frequency_hz", "amplitude", "phase_rad"},
		SignalMultitone: {"signal", "tones"},
		SignalChirp:     {"signal", "frequency_hz", "chirp_end_hz", "chirp_period_s", "amplitude", "phase_rad"},
		SignalNoise:     {"signal", "noise_std", "seed"},
		SignalImpulse:   {"signal", "impulse_every", "amplitude"},
		SignalSum:       {"signal", "components"},
	}
	designKeys = map[string][]string{
		"lowpass":  {"type", "cutoff_hz", "num_taps", "window"},
		"highpass": {"type", "cutoff_hz", "num_taps", "window"},
		"bandpass": {"type", "low_hz", "high_hz", "num_taps", "window"},
		"bandstop": {"type", "low_hz", "high_hz", "num_taps", "window"},
	}
)

// checkKeys rejects keys that the chosen type does not use (a tones list on a
// tone, a path on a null sink): they would be silently ignored otherwise.
func (c *Config) checkKeys(errs *errorList) {
	unused := func(mapPath, key, what string, allowed []string) {
		errs.add(&Error{File: c.name, Line: c.idx.lineOf(join(mapPath, key)), Field: join(mapPath, key),
			Msg: fmt.Sprintf("not used by %s (keys used: %s)", what, strings.Join(allowed, ", "))})
	}
	if allowed, ok := sourceKeys[c.Source.Type]; ok {
		if c.Source.Type == SourceSynthetic {
			if sk, ok := signalKeys[c.Source.Signal]; ok {
				allowed = append(slices.Clone(allowed), sk...)
			} else {
				allowed = nil // unknown signal: Validate reports it
			}
		}
		for _, k := range c.idx.keys["source"] {
			if allowed != nil && !slices.Contains(allowed, k) {
				what := "source type " + c.Source.Type
				if c.Source.Type == SourceSynthetic && slices.Contains(yamlKeys(reflect.TypeOf(Waveform{})), k) {
					what = "signal " + c.Source.Signal
				}
				unused("source", k, what, allowed)
			}
		}
	}
	var walk func(w *Waveform, path string)
	walk = func(w *Waveform, path string) {
		for i := range w.Components {
			p := fmt.Sprintf("%s.components[%d]", path, i)
			if allowed, ok := signalKeys[w.Components[i].Signal]; ok {
				for _, k := range c.idx.keys[p] {
					if !slices.Contains(allowed, k) {
						unused(p, k, "signal "+w.Components[i].Signal, allowed)
					}
				}
			}
			walk(&w.Components[i], p)
		}
	}
	if c.Source.Type == SourceSynthetic {
		walk(&c.Source.Waveform, "source")
	}
	for _, f := range c.filters() {
		if f.noMethod != "" && c.idx.has(f.path+".method") {
			unused(f.path, "method", f.noMethod, f.allowed)
		}
		d := f.f.Design
		if d == nil {
			continue
		}
		allowed, ok := designKeys[d.Type]
		if !ok {
			continue
		}
		dp := f.path + ".design"
		bySpec := d.bySpec() || c.idx.has(dp+".transition_hz") || c.idx.has(dp+".attenuation_db")
		if bySpec {
			var edges []string
			for _, k := range allowed {
				if k != "num_taps" && k != "window" {
					edges = append(edges, k)
				}
			}
			allowed = append(edges, "transition_hz", "attenuation_db")
		} else if d.Window == "kaiser" {
			allowed = append(slices.Clone(allowed), "kaiser_beta")
		}
		for _, k := range c.idx.keys[dp] {
			if !slices.Contains(allowed, k) {
				what := d.Type
				switch {
				case bySpec:
					what = "a design by transition_hz and attenuation_db (they set the Kaiser window's length and beta)"
				case k == "kaiser_beta":
					what = "window " + d.Window
					if d.Window == "" {
						what = "the default window " + DefaultWindow
					}
				}
				unused(dp, k, what, allowed)
			}
		}
	}
	if allowed, ok := sinkKeys[c.Sink.Type]; ok {
		for _, k := range c.idx.keys["sink"] {
			if !slices.Contains(allowed, k) {
				unused("sink", k, "sink type "+c.Sink.Type, allowed)
			}
		}
	}
	if c.Sink.Type == SinkNull && c.idx.has("sink.overwrite") {
		unused("sink", "overwrite", "sink type null", []string{"type"})
	}
}

// Validate checks every field and returns all problems found, each as an
// *Error (joined with errors.Join when there are several). Load and Parse
// call it; call it again after changing fields (command-line overrides).
func (c *Config) Validate() error {
	var errs errorList
	add := func(path, format string, args ...any) {
		e := &Error{File: c.name, Line: c.idx.lineOf(path), Field: path, Msg: fmt.Sprintf(format, args...)}
		if flag, ok := c.origin[path]; ok {
			e.Flag = flag
		}
		errs.add(e)
	}
	enum := enumOf(add)
	positive := func(path string, v float64) {
		if !(v > 0) || math.IsInf(v, 0) {
			add(path, "must be > 0, got %s", num(v))
		}
	}

	// Source.
	s := &c.Source
	rate := 0.0 // known-before-open sample rate
	if c.idx != nil && !c.idx.has("source") && s.Type == "" {
		add("source", "required (a mapping with at least type)")
	} else if enum("source.type", s.Type, sourceTypes, true) {
		switch s.Type {
		case SourceSynthetic:
			if s.SampleRate == 0 && !c.idx.has("source.sample_rate") {
				add("source.sample_rate", "required for synthetic sources")
			} else {
				positive("source.sample_rate", s.SampleRate)
			}
			rate = s.SampleRate
			c.validateWaveform(&s.Waveform, "source", s.SampleRate, s.Complex, add, enum)
		case SourceFile, SourceStdin:
			if s.Type == SourceFile && s.Path == "" {
				add("source.path", "required for file sources")
			}
			format := s.EffectiveFormat()
			switch {
			case s.Type == SourceStdin && s.Format == "":
				add("source.format", "required for stdin (one of %s, %s)", strings.Join(rawFormats, ", "), FormatWAV)
			case s.Type == SourceStdin && !slices.Contains(rawFormats, s.Format) && s.Format != FormatWAV:
				add("source.format", "unknown value %q for stdin (allowed: %s, %s; a sigmf recording is two files)", s.Format, strings.Join(rawFormats, ", "), FormatWAV)
			case s.Format == "" && format == "" && s.Path != "":
				add("source.format", "required: cannot infer the format from %q (extension is not .wav, .sigmf-meta, .sigmf-data or .sigmf; allowed: %s)",
					filepath.Base(s.Path), strings.Join(fileFormats, ", "))
			case s.Format != "":
				enum("source.format", s.Format, fileFormats, false)
			}
			raw := slices.Contains(rawFormats, format)
			switch {
			case s.SampleRate != 0 || c.idx.has("source.sample_rate"):
				positive("source.sample_rate", s.SampleRate)
			case raw:
				add("source.sample_rate", "required for raw format %s", format)
			}
			if raw {
				rate = s.SampleRate
			}
			if s.Paced {
				add("source.paced", "only synthetic sources can be paced")
			}
			c.validateFileChannels(s, format, add)
		case SourceIIO:
			c.validateIIO(s, add)
			rate = s.SampleRate
		case SourceALSA:
			c.validateALSA(s, add)
			rate = s.SampleRate
		case SourceZMQ:
			c.validateZMQSource(s, add)
			rate = s.SampleRate
		}
	}
	if s.DurationS != 0 || c.written("source.duration_s") {
		positive("source.duration_s", s.DurationS)
	}
	if s.NumSamples < 0 || (s.NumSamples == 0 && c.written("source.num_samples")) {
		add("source.num_samples", "must be > 0, got %d (omit it for an unbounded run)", s.NumSamples)
	}
	if s.DurationS != 0 && s.NumSamples != 0 {
		add("source.num_samples", "set duration_s or num_samples, not both")
	}
	if rate > 0 && s.DurationS > 0 && s.DurationS*rate >= math.MaxInt64 {
		add("source.duration_s", "%s s at %s S/s is more samples than fit in int64", num(s.DurationS), num(rate))
	}

	// Ring.
	if c.BlockSize <= 0 || c.BlockSize > MaxBlockSize {
		add("block_size", "must be in 1..%d, got %d", MaxBlockSize, c.BlockSize)
	}
	slots := c.RingSlots
	switch {
	case slots == 0 && c.LiveSource(): // sized by the pipeline: at least this
		slots = 64
	case slots == 0:
		slots = 4
	case slots < 2 || slots > MaxRingSlots || slots&(slots-1) != 0:
		add("ring_slots", "must be a power of two in 2..%d, got %d", MaxRingSlots, c.RingSlots)
		slots = 0
	}
	if c.BlockSize > 0 && c.BlockSize <= MaxBlockSize && slots > 0 {
		per := int64(4)
		if cplx, known := s.complexKnown(); cplx || !known {
			per = 8
		}
		if n := s.Channels.N(); n > 1 && s.Type != SourceIIO {
			per *= int64(n)
		} else if s.Type == SourceIIO && n > 1 {
			per = 4 * int64(n)
		}
		if bytes := int64(c.BlockSize) * int64(slots) * per; bytes > MaxRingBytes {
			p := "ring_slots"
			if !c.idx.has(p) {
				p = "block_size"
			}
			add(p, "ring needs block_size*ring_slots*%d = %d bytes, more than the %d limit", per, bytes, MaxRingBytes)
		}
	}
	enum("overrun", c.Overrun, overruns, false)

	// Filter or stages.
	c.validateStages(rate, &errs, add, enum)

	// Backend.
	enum("backend", c.Backend, backends, true)
	if c.CUDA.Device < 0 {
		add("cuda.device", "must be >= 0, got %d", c.CUDA.Device)
	}
	enum("cuda.transport", c.CUDA.Transport, transports, true)
	if c.CUDA.MaxPinnedMB < 0 {
		add("cuda.max_pinned_mb", "must be >= 0 (0: sized from the block and the host), got %d", c.CUDA.MaxPinnedMB)
	}
	if c.CUDA.PinWindowMB < 0 || c.CUDA.PinWindowMB > 1<<20 {
		add("cuda.pin_window_mb", "must be in 0..%d (0: the default), got %d", 1<<20, c.CUDA.PinWindowMB)
	}
	if c.CUDA.PinThreads < 0 || c.CUDA.PinThreads > 64 {
		add("cuda.pin_threads", "must be in 0..64 (0: the default), got %d", c.CUDA.PinThreads)
	}
	if s := c.CUDA.ReadShare; s != nil && !(*s >= 0 && *s <= 1) {
		add("cuda.read_share", "must be in 0..1, got %v", *s)
	}
	if c.CUDA.WatchdogMS <= 0 {
		add("cuda.watchdog_ms", "must be > 0, got %d", c.CUDA.WatchdogMS)
	}

	// Sink.
	if c.idx != nil && !c.idx.has("sink") && c.Sink.Type == "" {
		add("sink", "required (a mapping with at least type)")
	} else if enum("sink.type", c.Sink.Type, sinkTypes, true) {
		switch c.Sink.Type {
		case SinkFile, SinkSigMF, SinkWAV:
			if c.Sink.Path == "" {
				add("sink.path", "required for sink type %s", c.Sink.Type)
			} else if c.Sink.Path == StdoutPath && c.Sink.Type == SinkSigMF {
				add("sink.path", "\"-\" (standard output) needs sink type file or wav: sigmf writes two files")
			} else if c.Sink.Path == StdoutPath && c.Sink.Split {
				add("sink.split", "writes a file per channel: give a path, not \"-\" (standard output)")
			}
		case SinkZMQ:
			c.validateZMQSink(&c.Sink, add)
		}
	}
	if c.Sink.Type == SinkWAV {
		enum("sink.format", c.Sink.Format, wavFormats, false)
	} else if enum("sink.format", c.Sink.Format, sinkFormats, false) {
		if cplx, known := s.complexKnown(); known && isComplexFormat(c.Sink.Format) != c.OutComplex(cplx) {
			out, by := c.outComplex(cplx)
			what := realOrComplex(cplx) + " source"
			if out != cplx {
				what = "complex output (a " + by + " stage makes the real source complex)"
			}
			add("sink.format", "%s does not match the %s (use %s)", c.Sink.Format, what, Sink{}.FormatFor(out))
		}
	}

	// Log and metrics.
	enum("log.level", c.Log.Level, logLevels, true)
	enum("log.format", c.Log.Format, logFormats, true)
	if l := c.Metrics.Listen; l != "" {
		host, port, err := net.SplitHostPort(l)
		p, perr := strconv.Atoi(port)
		switch {
		case err != nil:
			add("metrics.listen", "want host:port (e.g. 127.0.0.1:9100), got %q", l)
		case perr != nil || p < 0 || p > 65535:
			add("metrics.listen", "port must be a number in 0..65535, got %q", port)
		case strings.ContainsAny(host, " /"):
			add("metrics.listen", "bad host %q", host)
		}
	}

	// Realtime.
	c.validateRealtime(add)
	c.validateControl(add)
	return errs.err()
}

// iioElement is what an IIO scan element name looks like (voltage0,
// voltage0-voltage1, accel_x).
var iioElement = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_\-]*$`)

// validateIIO checks an iio source; the device itself is checked when it is
// opened.
func (c *Config) validateIIO(s *Source, add addFunc) {
	if s.Device == "" {
		add("source.device", "required for iio sources (iio:deviceN or the device's name, e.g. ads1015)")
	} else if strings.ContainsRune(s.Device, '/') {
		add("source.device", "%q: give iio:deviceN or the device's name, not a path (use sysfs_root and dev_root for the directories)", s.Device)
	}
	switch n := len(s.Channels.Names); {
	case s.Channels.Count > 0:
		add("source.channels", "iio needs the scan elements by name ([voltage0, voltage1]), not a count")
	case n == 0:
		add("source.channels", "required for iio sources: the scan elements, one per channel ([voltage0], or [voltage0, voltage1] with complex: true for I,Q)")
	case n > capture.MaxChannels:
		add("source.channels", "%d channels given; at most %d", n, capture.MaxChannels)
	}
	for i, ch := range s.Channels.Names {
		p := fmt.Sprintf("source.channels[%d]", i)
		switch {
		case strings.HasPrefix(ch, "in_") || strings.HasSuffix(ch, "_en"):
			add(p, "%q: give the scan element name without in_ and _en (voltage0 for in_voltage0_en)", ch)
		case !iioElement.MatchString(ch):
			add(p, "%q is not a scan element name such as voltage0", ch)
		case slices.Contains(s.Channels.Names[:i], ch):
			add(p, "%q is given twice", ch)
		}
	}
	if s.SampleRate != 0 || c.idx.has("source.sample_rate") {
		if !(s.SampleRate > 0) || math.IsInf(s.SampleRate, 0) {
			add("source.sample_rate", "must be > 0, got %s (omit it to keep the device's rate)", num(s.SampleRate))
		}
	}
	if s.BufferLength < 0 || (s.BufferLength == 0 && c.idx.has("source.buffer_length")) {
		add("source.buffer_length", "must be > 0 scans, got %d (omit it to keep the device's)", s.BufferLength)
	}
	for _, d := range []struct{ key, value string }{{"sysfs_root", s.SysfsRoot}, {"dev_root", s.DevRoot}} {
		p := "source." + d.key
		if d.value == "" && c.idx.has(p) {
			add(p, "must not be empty (omit the key to get the default)")
		} else if d.value != "" && !filepath.IsAbs(d.value) {
			add(p, "must be an absolute path, got %q", d.value)
		}
	}
	if s.Paced {
		add("source.paced", "only synthetic sources can be paced; an iio device runs at its own sample rate")
	}
	if s.Complex && len(s.Channels.Names)%2 != 0 {
		add("source.complex", "pairs the channels as I,Q, so it needs an even number of them, got %d", len(s.Channels.Names))
	}
}

// validateFileChannels checks channels and complex of a file or stdin
// source in format (raw, wav or sigmf).
func (c *Config) validateFileChannels(s *Source, format string, add addFunc) {
	raw := slices.Contains(rawFormats, format)
	if len(s.Channels.Names) > 0 {
		add("source.channels", "a list of names is for iio scan elements; give a number of channels (channels: 4)")
	} else if n := s.Channels.Count; n > capture.MaxChannels || (n == 0 && c.idx.has("source.channels")) {
		add("source.channels", "must be in 1..%d, got %d", capture.MaxChannels, n)
	}
	if !c.idx.has("source.complex") && !s.Complex {
		return
	}
	switch {
	case raw && s.Complex != isComplexFormat(format):
		add("source.complex", "format %s is %s: raw formats say themselves whether they are complex (omit complex)", format, realOrComplex(isComplexFormat(format)))
	case format == FormatSigMF:
		add("source.complex", "a sigmf recording says whether it is complex (core:datatype); omit complex")
	case format == FormatWAV && s.Complex && s.Channels.Count > 0:
		// channels counts I/Q pairs: the file holds twice as many.
	}
}

// knownChannels is the number of channels in a frame when it is known
// before the source is opened (0 for wav and sigmf files: they say).
func (s *Source) knownChannels() int {
	switch s.Type {
	case SourceSynthetic:
		return 1
	case SourceZMQ:
		return max(1, s.Channels.Count)
	case SourceIIO:
		if s.Complex {
			return len(s.Channels.Names) / 2
		}
		return len(s.Channels.Names)
	case SourceALSA:
		n := s.alsaChannels()
		if s.Complex {
			return n / 2
		}
		return n
	case SourceFile, SourceStdin:
		if f := s.EffectiveFormat(); f == FormatWAV || f == FormatSigMF {
			return s.Channels.Count
		}
		return max(1, s.Channels.Count)
	}
	return 0
}

// alsaChannels is the ALSA device's channel count: channels: N or the
// older channel_count.
func (s *Source) alsaChannels() int {
	if s.Channels.Count > 0 {
		return s.Channels.Count
	}
	return s.ChannelCount
}

// alsaFormats are the ALSA sample formats (source.format for alsa).
var alsaFormats = []string{capture.ALSAFormatS16LE, capture.ALSAFormatS32LE, capture.ALSAFormatFloatLE}

// alsaDevice is hw:CARD[,DEV] or hw:CARD=id[,DEV=n]; the card itself is
// resolved when the device is opened.
var alsaDevice = regexp.MustCompile(`^hw:(?:CARD=)?[A-Za-z0-9_\-]+(?:,(?:DEV=)?[0-9]+)?$`)

// validateALSA checks an alsa source; what the card supports is checked
// when it is opened.
func (c *Config) validateALSA(s *Source, add addFunc) {
	switch {
	case s.Device == "":
		add("source.device", "required for alsa sources (hw:CARD,DEV, e.g. hw:1,0 or hw:tegrasndt19xmob,0; arecord -l lists them)")
	case strings.HasPrefix(s.Device, "plughw:"):
		add("source.device", "%q: plughw needs alsa-lib's plug layer, which sigproc does not use; give hw:%s with a format, channel count and rate the card supports", s.Device, strings.TrimPrefix(s.Device, "plughw:"))
	case !alsaDevice.MatchString(s.Device):
		add("source.device", "%q: want hw:CARD,DEV with CARD a card index or id from /proc/asound/cards (alsa-lib names such as default are not supported)", s.Device)
	}
	switch {
	case s.Format == "":
		add("source.format", "required for alsa sources: %s", strings.Join(alsaFormats, ", "))
	case !slices.Contains(alsaFormats, s.Format):
		add("source.format", "%q is not an alsa format (allowed: %s)", s.Format, strings.Join(alsaFormats, ", "))
	}
	switch {
	case len(s.Channels.Names) > 0:
		add("source.channels", "a list of names is for iio scan elements; give the device's channel count (channels: 2)")
	case c.idx.has("source.channels") && c.idx.has("source.channel_count"):
		add("source.channel_count", "give channels or channel_count, not both (channel_count is the older spelling)")
	default:
		key := "source.channels"
		if !c.idx.has(key) && (s.ChannelCount != 0 || c.idx.has("source.channel_count")) {
			key = "source.channel_count"
		}
		n := s.alsaChannels()
		switch {
		case n < 1 || n > capture.MaxALSAChannels:
			add(key, "must be in 1..%d channels, got %d", capture.MaxALSAChannels, n)
		case s.Complex && n%2 != 0:
			add("source.complex", "pairs the channels as I,Q (left I, right Q), so it needs an even channel count, got %d", n)
		case key == "source.channel_count" && n == 2 && !c.idx.has("source.complex"):
			// channel_count: 2 once meant one complex channel: say which.
			add(key, "2 channels: add complex: true for I,Q (left I, right Q, as before) or complex: false for two real channels")
		}
	}
	if !(s.SampleRate > 0) || s.SampleRate > math.MaxUint32 || s.SampleRate != math.Trunc(s.SampleRate) {
		add("source.sample_rate", "required for alsa sources: a whole number of frames per second the card supports, got %s", num(s.SampleRate))
	}
	for _, k := range []struct {
		key string
		v   int
	}{{"period_size", s.PeriodSize}, {"buffer_size", s.BufferSize}} {
		p := "source." + k.key
		if k.v < 0 || int64(k.v) > math.MaxUint32 || (k.v == 0 && c.idx.has(p)) {
			add(p, "must be > 0 frames, got %d (omit it to let the driver choose)", k.v)
		}
	}
	if s.PeriodSize > 0 && s.BufferSize > 0 && s.BufferSize < 2*s.PeriodSize {
		add("source.buffer_size", "must hold at least two periods (%d frames), got %d", 2*s.PeriodSize, s.BufferSize)
	}
	if s.Paced {
		add("source.paced", "only synthetic sources can be paced; a sound card runs at its own sample rate")
	}
}

type addFunc func(path, format string, args ...any)
type enumFunc func(path, value string, allowed []string, required bool) bool

// enumOf is the enumFunc that reports through add: a missing value when
// required, or one not among allowed; it reports whether value is usable.
func enumOf(add addFunc) enumFunc {
	return func(path, value string, allowed []string, required bool) bool {
		if value == "" {
			if required {
				add(path, "required (one of %s)", strings.Join(allowed, ", "))
			}
			return false
		}
		if !slices.Contains(allowed, value) {
			add(path, "unknown value %q (allowed: %s)", value, strings.Join(allowed, ", "))
			return false
		}
		return true
	}
}

// validateWaveform checks one synthetic signal and its components.
func (c *Config) validateWaveform(w *Waveform, path string, rate float64, cplx bool, add addFunc, enum enumFunc) {
	if !enum(join(path, "signal"), w.Signal, signals, true) {
		return
	}
	finite := func(p string, v float64) bool {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			add(p, "must be a finite number, got %s", num(v))
			return false
		}
		return true
	}
	// A level is a float32 sample's: within maxLevel, so that a sum of
	// components or a noise tail stays finite.
	level := func(p string, v float64) {
		if finite(p, v) && math.Abs(v) > maxLevel {
			add(p, "must be within ±%g (samples are float32), got %s", maxLevel, num(v))
		}
	}
	freq := func(p string, f float64) {
		if !finite(p, f) || !(rate > 0) {
			return
		}
		ny := rate / 2
		switch {
		case !cplx && f < 0:
			add(p, "must be >= 0 for a real source, got %s (negative frequencies need complex: true)", num(f))
		case math.Abs(f) > ny:
			add(p, "%s is above Nyquist (sample_rate/2 = %s)", num(f), num(ny))
		}
	}
	// A frequency left out (or null) would be 0, DC, which a tone or chirp
	// written without one hardly means: it is required, 0 written out for DC.
	required := func(p, what string, f float64) {
		if f == 0 && c.idx != nil && (!c.idx.has(p) || c.idx.isNull(p)) {
			add(p, "required for %s (write 0 for DC)", what)
		}
	}
	switch w.Signal {
	case SignalTone:
		required(join(path, "frequency_hz"), "a tone", w.FrequencyHz)
		freq(join(path, "frequency_hz"), w.FrequencyHz)
		level(join(path, "amplitude"), w.Amplitude)
		finite(join(path, "phase_rad"), w.PhaseRad)
	case SignalMultitone:
		if len(w.Tones) == 0 {
			add(join(path, "tones"), "multitone needs at least one tone")
		}
		for i, t := range w.Tones {
			p := fmt.Sprintf("%s.tones[%d]", path, i)
			required(p+".frequency_hz", "each tone", t.FrequencyHz)
			freq(p+".frequency_hz", t.FrequencyHz)
			level(p+".amplitude", t.Amplitude)
			finite(p+".phase_rad", t.PhaseRad)
		}
	case SignalChirp:
		required(join(path, "frequency_hz"), "a chirp (its start)", w.FrequencyHz)
		required(join(path, "chirp_end_hz"), "a chirp", w.ChirpEndHz)
		freq(join(path, "frequency_hz"), w.FrequencyHz)
		freq(join(path, "chirp_end_hz"), w.ChirpEndHz)
		level(join(path, "amplitude"), w.Amplitude)
		finite(join(path, "phase_rad"), w.PhaseRad)
		if p := join(path, "chirp_period_s"); !(w.ChirpPeriodS > 0) || math.IsInf(w.ChirpPeriodS, 0) {
			add(p, "must be > 0, got %s", num(w.ChirpPeriodS))
		}
	case SignalNoise:
		if p := join(path, "noise_std"); !(w.NoiseStd > 0) || math.IsInf(w.NoiseStd, 0) {
			add(p, "must be > 0, got %s", num(w.NoiseStd))
		} else {
			level(p, w.NoiseStd)
		}
	case SignalImpulse:
		level(join(path, "amplitude"), w.Amplitude)
		if w.ImpulseEvery < 0 {
			add(join(path, "impulse_every"), "must be >= 0 samples (0 = one impulse at sample 0), got %d", w.ImpulseEvery)
		}
	case SignalSum:
		if len(w.Components) == 0 {
			add(join(path, "components"), "sum needs at least one component")
		}
		for i := range w.Components {
			c.validateWaveform(&w.Components[i], fmt.Sprintf("%s.components[%d]", path, i), rate, cplx, add, enum)
		}
	}
}

// tapsGiven lists which of taps, taps_file and design the filter written
// at path has.
func (c *Config) tapsGiven(f *Filter, path string) []string {
	var given []string
	if f.Taps != nil || c.idx.has(path+".taps") {
		given = append(given, "taps")
	}
	if f.TapsFile != "" || c.idx.has(path+".taps_file") {
		given = append(given, "taps_file")
	}
	if f.Design != nil || c.idx.has(path+".design") {
		given = append(given, "design")
	}
	return given
}

// validateFilter checks that the filter f written at path (filter, or a
// stage with taps) has exactly one tap source and that it is usable.
// rate is the rate its taps run at when known before opening the source;
// method says whether its method key is used.
func (c *Config) validateFilter(f *Filter, path string, rate float64, method bool, errs *errorList, add addFunc, enum enumFunc) {
	if method {
		enum(path+".method", f.Method, methods, true)
	}
	given := c.tapsGiven(f, path)
	switch {
	case len(given) == 0:
		add(path, "required: one of taps, taps_file or design")
		return
	case len(given) > 1:
		add(path+"."+given[1], "give only one of taps, taps_file, design (found %s)", strings.Join(given, " and "))
		return
	}
	switch given[0] {
	case "taps":
		if len(f.Taps) == 0 {
			add(path+".taps", "must not be empty")
		} else if len(f.Taps) > filter.MaxTaps {
			add(path+".taps", "%d taps exceeds the limit %d", len(f.Taps), filter.MaxTaps)
		}
		for i, t := range f.Taps {
			if math.IsNaN(float64(t)) || math.IsInf(float64(t), 0) {
				add(fmt.Sprintf("%s.taps[%d]", path, i), "must be a finite float32, got %v", t)
			}
		}
	case "taps_file":
		if f.TapsFile == "" {
			add(path+".taps_file", "must not be empty")
		}
	case "design":
		d := f.Design
		dp := path + ".design"
		if d == nil {
			add(dp, "must be a mapping with type, num_taps (or transition_hz and attenuation_db) and cutoff_hz or low_hz/high_hz")
			return
		}
		before := len(*errs)
		enum(dp+".type", d.Type, designTypes, true)
		if d.bySpec() {
			if !(d.TransitionHz > 0) || math.IsInf(d.TransitionHz, 0) {
				add(dp+".transition_hz", "must be > 0 (given with attenuation_db), got %s", num(d.TransitionHz))
			}
			if !(d.AttenuationDB >= 8 && d.AttenuationDB <= filter.MaxAttenuationDB) {
				add(dp+".attenuation_db", "must be in 8..%d dB (given with transition_hz; the Kaiser formula's range), got %s", filter.MaxAttenuationDB, num(d.AttenuationDB))
			}
		} else {
			enum(dp+".window", d.Window, designWindow, true)
			if d.NumTaps <= 0 {
				add(dp+".num_taps", "must be > 0, got %d (or give transition_hz and attenuation_db)", d.NumTaps)
			}
			if d.Window == "kaiser" && !(d.KaiserBeta >= 0 && d.KaiserBeta <= filter.MaxKaiserBeta) {
				add(dp+".kaiser_beta", "must be in 0..%d, got %s", filter.MaxKaiserBeta, num(d.KaiserBeta))
			}
		}
		switch d.Type {
		case "lowpass", "highpass":
			if !(d.CutoffHz > 0) || math.IsInf(d.CutoffHz, 0) {
				add(dp+".cutoff_hz", "must be > 0, got %s", num(d.CutoffHz))
			} else if rate > 0 && d.CutoffHz >= rate/2 {
				add(dp+".cutoff_hz", "%s must be below Nyquist (sample_rate/2 = %s)", num(d.CutoffHz), num(rate/2))
			}
		case "bandpass", "bandstop":
			switch {
			case !(d.LowHz > 0) || math.IsInf(d.LowHz, 0):
				add(dp+".low_hz", "must be > 0, got %s", num(d.LowHz))
			case !(d.HighHz > d.LowHz) || math.IsInf(d.HighHz, 0):
				add(dp+".high_hz", "must be > low_hz (%s), got %s", num(d.LowHz), num(d.HighHz))
			case rate > 0 && d.HighHz >= rate/2:
				add(dp+".high_hz", "%s must be below Nyquist (sample_rate/2 = %s)", num(d.HighHz), num(rate/2))
			}
		}
		if len(*errs) == before {
			// The rest (odd length for highpass/bandstop, tap limit) is
			// filter's rule; without a known rate, use one so high that
			// no Nyquist check can fire.
			r := rate
			if !(r > 0) {
				r = math.MaxFloat64 / 4
			}
			if err := d.Spec(r).Validate(); err != nil {
				add(dp, "%s", strings.TrimPrefix(err.Error(), filter.ErrSpec.Error()+": "))
			} else if rate > 0 {
				if _, err := d.Spec(r).Resolve(); err != nil {
					add(dp, "%s", strings.TrimPrefix(err.Error(), filter.ErrSpec.Error()+": "))
				}
			}
		}
	}
}

// EffectiveFormat returns Format, or for file sources the format implied by
// the path's extension ("" when it cannot be inferred).
func (s *Source) EffectiveFormat() string {
	if s.Format != "" || s.Type != SourceFile {
		return s.Format
	}
	switch strings.ToLower(filepath.Ext(s.Path)) {
	case ".wav":
		return FormatWAV
	case ".sigmf-meta", ".sigmf-data", ".sigmf":
		return FormatSigMF
	}
	return ""
}

// complexKnown reports whether the source is complex, and whether that is
// known before opening it (not for wav and sigmf files).
func (s *Source) complexKnown() (complex, known bool) {
	switch s.Type {
	case SourceSynthetic:
		return s.Complex, true
	case SourceFile, SourceStdin:
		if f := s.EffectiveFormat(); slices.Contains(rawFormats, f) {
			return isComplexFormat(f), true
		} else if f == FormatWAV {
			return s.Complex, true
		}
	case SourceIIO, SourceALSA:
		return s.Complex, true
	case SourceZMQ:
		if slices.Contains(rawFormats, s.Format) {
			return isComplexFormat(s.Format), true
		}
	}
	return false, false
}

// SetSinkType sets the sink's type from flag (--sink-type), replacing the
// config's. A format the config gave that the new type cannot write (a
// raw format for wav, pcm16 for file) is dropped for the new type's
// default and returned, for the log; a null sink drops its path and
// format and returns "", since it writes no format.
func (c *Config) SetSinkType(typ, flag string) (dropped string) {
	c.Sink.Type = typ
	c.MarkOverride("sink.type", flag)
	formats := sinkFormats
	switch typ {
	case SinkNull:
		c.Sink.Path, c.Sink.Format = "", ""
		return ""
	case SinkWAV:
		formats = wavFormats
	}
	if f := c.Sink.Format; f != "" && !slices.Contains(formats, f) {
		c.Sink.Format = ""
		return f
	}
	return ""
}

// FormatFor returns the sink format, defaulting to rf32_le for a real stream
// and cf32_le for a complex one (float32 for a wav sink).
func (s Sink) FormatFor(complex bool) string {
	if s.Format != "" {
		return s.Format
	}
	if s.Type == SinkWAV {
		return WAVFloat32
	}
	if complex {
		return FormatCF32
	}
	return FormatRF32
}

// EffectiveOverrun returns Overrun, or when empty the default: drop for a
// live source (paced synthetic or iio: it must keep real time, and an iio
// device that is not read in time overflows its kernel buffer instead),
// block otherwise.
func (c *Config) EffectiveOverrun() string {
	if c.Overrun != "" {
		return c.Overrun
	}
	if c.LiveSource() {
		return OverrunDrop
	}
	return OverrunBlock
}

// LiveSource reports whether the source is paced by its own clock (paced
// synthetic, iio, alsa): it delivers blocks in real time whatever the
// consumer does, so its default ring is sized in seconds of slack rather
// than bytes.
func (c *Config) LiveSource() bool {
	return (c.Source.Type == SourceSynthetic && c.Source.Paced) || c.Source.Type == SourceIIO || c.Source.Type == SourceALSA
}

// MaxSamples returns the run bound in samples for a source running at
// sampleRate: num_samples, or duration_s*sampleRate rounded; 0 = unbounded.
func (c *Config) MaxSamples(sampleRate float64) (int64, error) {
	s := &c.Source
	if s.NumSamples > 0 {
		return s.NumSamples, nil
	}
	if s.DurationS <= 0 {
		return 0, nil
	}
	n := math.Round(s.DurationS * sampleRate)
	if !(n >= 1) || n >= math.MaxInt64 {
		return 0, &Error{File: c.name, Line: c.idx.lineOf("source.duration_s"), Field: "source.duration_s", Flag: c.origin["source.duration_s"],
			Msg: fmt.Sprintf("%s s at %s S/s is %s samples; need at least 1 and fewer than 2^63", num(s.DurationS), num(sampleRate), num(n))}
	}
	return int64(n), nil
}

// SinkFormat returns the sink format for a stream whose complexness is
// known (after opening the source), rejecting a format that does not match.
func (c *Config) SinkFormat(complex bool) (string, error) {
	f := c.Sink.FormatFor(complex)
	if c.Sink.Type == SinkWAV {
		return f, nil // a complex channel is two WAV channels
	}
	if isComplexFormat(f) != complex {
		return "", &Error{File: c.name, Line: c.idx.lineOf("sink.format"), Field: "sink.format", Flag: c.origin["sink.format"],
			Msg: fmt.Sprintf("%s does not match the %s source (use %s)", f, realOrComplex(complex), Sink{}.FormatFor(complex))}
	}
	return f, nil
}

func isComplexFormat(f string) bool {
	return f == FormatCF32 || f == FormatCI16 || f == FormatCU8 || f == FormatCS8
}

// written reports whether path was written in the file and not since set
// by a flag (--duration replaces num_samples, and --num-samples
// duration_s).
func (c *Config) written(path string) bool {
	_, flag := c.origin[path]
	return c.idx.has(path) && !flag
}

func realOrComplex(cplx bool) string {
	if cplx {
		return "complex"
	}
	return "real"
}

// num formats a float for messages as written by people: 1e6 -> 1000000.
func num(v float64) string {
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
