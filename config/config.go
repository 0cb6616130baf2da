package config

import (
	"github.com/sigproc/sigproc/capture"
	"github.com/sigproc/sigproc/filter"
)

// Source types (source.type).
const (
	SourceSynthetic = "synthetic" // generated in-process, see Waveform
	SourceFile      = "file"      // raw, WAV or SigMF recording
	SourceStdin     = "stdin"     // raw samples piped in (rtl_sdr, arecord, sox)
	SourceIIO       = "iio"       // a Linux Industrial I/O ADC (sysfs + /dev/iio:deviceN)
	SourceALSA      = "alsa"      // an ALSA PCM capture device (hw:CARD,DEV), kernel interface
	SourceZMQ       = "zmq"       // a ZeroMQ pull or sub socket (gr-zeromq push_sink / pub_sink)
)

// ZeroMQ patterns (source.pattern, sink.pattern). Sources connect, sinks
// bind, as gr-zeromq's blocks do.
const (
	PatternPull = "pull"
	PatternSub  = "sub"
	PatternPush = "push"
	PatternPub  = "pub"
)

// Sample formats, the capture package's names. The raw formats are
// little-endian; r = real, c = complex interleaved I,Q; i16 samples are
// scaled by 1/32768.
const (
	FormatRF32  = capture.FormatRF32
	FormatRI16  = capture.FormatRI16
	FormatCF32  = capture.FormatCF32
	FormatCI16  = capture.FormatCI16
	FormatCU8   = capture.FormatCU8   // rtl_sdr: unsigned 8-bit I/Q, (v − 127.5)/127.5; source only
	FormatCS8   = capture.FormatCS8   // HackRF: signed 8-bit I/Q, v/128; also a sink format (SigMF ci8)
	FormatWAV   = capture.FormatWAV   // source only; rate and channels come from the header
	FormatSigMF = capture.FormatSigMF // source only; rate and datatype come from the .sigmf-meta
)

// Synthetic signal kinds (source.signal, components[].signal), the capture
// package's names.
const (
	SignalTone      = capture.SignalTone
	SignalMultitone = capture.SignalMultitone
	SignalChirp     = capture.SignalChirp
	SignalNoise     = capture.SignalNoise
	SignalImpulse   = capture.SignalImpulse
	SignalSum       = capture.SignalSum
)

// Overrun policies (overrun): what the capture side does when the ring is full.
const (
	OverrunBlock = "block" // wait for a free slot; nothing is lost, the source is slowed down
	OverrunDrop  = "drop"  // drop the block and count it; the source keeps real time
)

// Backends (backend).
const (
	BackendCPU  = "cpu"
	BackendCUDA = "cuda"
	BackendAuto = "auto" // CUDA when built with -tags cuda and a device is usable, else CPU
)

// CUDA host<->device transports (cuda.transport).
const (
	TransportAuto     = "auto"
	TransportZeroCopy = "zero-copy"
	TransportExplicit = "explicit"
	// TransportExplicitPageable is the explicit path from ordinary (pageable) memory, for comparison.
	TransportExplicitPageable = "explicit-pageable"
)

// Sink types (sink.type).
const (
	SinkFile  = "file"  // raw samples in sink.format
	SinkSigMF = "sigmf" // <path>.sigmf-data + <path>.sigmf-meta
	SinkWAV   = "wav"   // a WAV file in sink.format pcm16, pcm24 or float32
	SinkNull  = "null"  // discard (benchmarking)
	SinkZMQ   = "zmq"   // a ZeroMQ push or pub socket (gr-zeromq pull_source / sub_source)
)

// WAV sink formats (sink.format for sink type wav).
const (
	WAVPCM16   = "pcm16"
	WAVPCM24   = "pcm24"
	WAVFloat32 = "float32" // the default for float input: no clipping (integer input: its width, pcm16 or pcm24)
)

// StdoutPath as source.path (--input) reads standard input; as sink.path
// (file and wav sinks) it writes standard output.
const StdoutPath = "-"

// Log formats (log.format).
const (
	LogConsole = "console"
	LogJSON    = "json"
)

// Limits enforced by Validate.
const (
	// MaxBlockSize is the largest accepted block_size in samples.
	MaxBlockSize = 1 << 24
	// MaxRingSlots is the largest accepted ring_slots.
	MaxRingSlots = 1 << 16
	// maxLevel bounds a synthetic signal's amplitude and noise_std:
	// float32 samples reach 3.4e38, and a sum or a noise tail must not.
	maxLevel = 1e30
	// MaxRingBytes bounds block_size*ring_slots*4 (*2 for complex), so a
	// typo cannot ask for terabytes of ring memory.
	MaxRingBytes = 4 << 30
)

// Defaults filled in by Load and Parse (and by SetDefaults).
const (
	DefaultBlockSize   = 256
	DefaultBackend     = BackendCPU
	DefaultWindow      = filter.WindowHamming
	DefaultMethod      = "auto"
	DefaultKaiserBeta  = filter.DefaultKaiserBeta
	DefaultTransport   = TransportAuto
	DefaultMaxPinnedMB = 0 // sized from the block and the host (cuda.PinnedBudget)
	DefaultWatchdogMS  = 2000
	DefaultLogLevel    = "info"
	DefaultLogFormat   = LogConsole
	DefaultAmplitude   = 1.0
)

// Config is one sigproc run: source -> ring of blocks -> FIR backend -> sink.
type Config struct {
	// Source is where samples come from. Required.
	Source Source `yaml:"source"`
	// BlockSize is the number of samples per ring block (complex samples
	// count once). Default 256; 1..MaxBlockSize.
	BlockSize int `yaml:"block_size"`
	// RingSlots is the number of blocks in the ring between capture and
	// filter, a power of two in 2..MaxRingSlots. Omitted (0), the ring is
	// sized from a budget (pipeline.DefaultSlots): about 1 MiB of blocks
	// for a file or other unpaced source, and for a live one (LiveSource)
	// at least 64 blocks and up to a second of slack (on the CUDA
	// zero-copy transport, up to 2 MiB of mapped words: cuda's
	// LiveSlotCeiling).
	RingSlots int `yaml:"ring_slots"`
	// Overrun is block or drop. Empty means automatic: drop for live
	// sources (paced synthetic, iio, alsa), block for file, stdin and unpaced
	// synthetic sources.
	// Use EffectiveOverrun for the resolved value.
	Overrun string `yaml:"overrun"`
	// Filter is the FIR filter. Exactly one of taps, taps_file, design.
	// It is shorthand for a stages list of one fir stage; a config has
	// filter or stages, never both.
	Filter Filter `yaml:"filter"`
	// Stages is the chain run on the stream, in order: shift, fir (with
	// decimate) and resample stages. See Stage.
	Stages []Stage `yaml:"stages"`
	// Backend is cpu, cuda or auto. Default cpu.
	Backend string `yaml:"backend"`
	// CUDA holds GPU settings used by backend cuda and auto.
	CUDA CUDA `yaml:"cuda"`
	// Sink is where filtered samples go. Required.
	Sink Sink `yaml:"sink"`
	// Log configures logging.
	Log Log `yaml:"log"`
	// Metrics configures the metrics endpoint.
	Metrics Metrics `yaml:"metrics"`
	// Realtime pins the capture thread and locks the ring in memory; all
	// off by default. See Realtime.
	Realtime Realtime `yaml:"realtime"`
	// Control serves the live control page and API; off by default. See
	// Control.
	Control Control `yaml:"control"`

	// name is the file name used in error messages, dir the directory
	// relative input paths were resolved against.
	name string
	dir  string
	// idx holds key positions from the YAML; nil for configs built in Go.
	idx *index
	// origin maps a field path to the command-line flag that set it.
	origin map[string]string
	// blockDefault is set when SetDefaults filled block_size in.
	blockDefault bool
}

// Source describes the sample source. Which keys are allowed depends on Type:
//
//	synthetic: sample_rate, complex, paced, duration_s, num_samples + Waveform keys
//	file:      path, format, sample_rate, channels, complex, duration_s, num_samples
//	stdin:     format, sample_rate, channels, duration_s, num_samples
//	iio:       device, channels, complex, apply_scale, sample_rate, buffer_length, sysfs_root, dev_root, duration_s, num_samples
//	alsa:      device, format, channels (or channel_count), complex, sample_rate, period_size, buffer_size, duration_s, num_samples
//	zmq:       endpoint, pattern, format, sample_rate, pass_tags, duration_s, num_samples
type Source struct {
	// Type is synthetic, file, stdin, iio, alsa or zmq. Required.
	Type string `yaml:"type"`
	// Path is the input file (file only, required). A relative path is
	// resolved against the config file's directory.
	Path string `yaml:"path"`
	// Format is the sample format: rf32_le, ri16_le, cf32_le, ci16_le, wav or
	// sigmf. For file it may be omitted when the extension says (.wav,
	// .sigmf-meta, .sigmf-data, .sigmf); for stdin it is required and raw.
	Format string `yaml:"format"`
	// SampleRate in samples per second. Required for synthetic and raw
	// formats; wav and sigmf take it from the file (if also given here, the
	// two must agree, checked when the file is opened). For iio it is
	// optional: written to the device's sampling_frequency when given, else
	// the device's current rate is used.
	SampleRate float64 `yaml:"sample_rate"`

	// Device is the IIO device (iio only, required): its directory name
	// (iio:device0) or the content of its name file (ads1015).
	Device string `yaml:"device"`
	// Channels is the number of channels in a frame (file, stdin, alsa:
	// channels: 4; default 1, a wav or sigmf file says itself) or, for
	// iio (required), the scan elements to capture, named without in_ and
	// _en: [voltage0], or [voltage0, voltage1] for two real channels (or
	// one complex channel with complex: true, I first, then Q).
	Channels Channels `yaml:"channels"`
	// ApplyScale converts IIO values to the channel's physical unit,
	// (raw + offset) × scale from sysfs (iio only), instead of
	// normalising them to [-1, 1); either way the scales are recorded in
	// a SigMF output (sigproc:iio).
	ApplyScale bool `yaml:"apply_scale"`
	// SysfsRoot is the IIO sysfs directory (iio only). Default
	// /sys/bus/iio/devices; must be absolute.
	SysfsRoot string `yaml:"sysfs_root"`
	// DevRoot holds the IIO character devices (iio only). Default /dev;
	// must be absolute.
	DevRoot string `yaml:"dev_root"`
	// BufferLength is the kernel buffer length in scans, written to
	// buffer/length (iio only). Omitted keeps the device's.
	BufferLength int `yaml:"buffer_length"`

	// ChannelCount is the ALSA channel count (alsa only), the older
	// spelling of channels: N (1..8); each channel is real unless complex:
	// true pairs them (left I, right Q). For alsa, Device is hw:CARD,DEV
	// and Format is s16_le, s32_le or float_le; SampleRate is required and
	// must be an integer.
	ChannelCount int `yaml:"channel_count"`
	// PeriodSize and BufferSize are the ALSA period and kernel buffer in
	// frames (alsa only). Omitted lets the driver choose.
	PeriodSize int `yaml:"period_size"`
	BufferSize int `yaml:"buffer_size"`

	// Endpoint is the ZeroMQ endpoint to connect to (zmq only, required):
	// tcp://host:port or ipc://path. For zmq, Format is the item type on
	// the wire (rf32_le = GNU Radio float, cf32_le = complex) and
	// SampleRate is required.
	Endpoint string `yaml:"endpoint"`
	// Pattern is pull or sub (zmq only, required).
	Pattern string `yaml:"pattern"`
	// PassTags expects gr-zeromq's tag header in each message (zmq only;
	// the sender's pass_tags): lost samples are counted from its offsets
	// and its tags are forwarded by a zmq sink with pass_tags.
	PassTags bool `yaml:"pass_tags"`

	// Waveform is the synthetic signal (synthetic only).
	Waveform `yaml:",inline"`

	// Complex makes a synthetic source produce complex (I,Q) samples, and
	// pairs the channels of a wav file, an iio device or an alsa device as
	// I,Q (the first of each pair I, the second Q). Raw formats and sigmf
	// say themselves whether they are complex.
	Complex bool `yaml:"complex"`
	// Paced delivers synthetic samples at SampleRate in real time; false
	// (the default) generates as fast as the pipeline consumes.
	Paced bool `yaml:"paced"`
	// DurationS bounds the run to this many seconds of samples.
	DurationS float64 `yaml:"duration_s"`
	// NumSamples bounds the run to this many samples. At most one of
	// DurationS and NumSamples; neither means unbounded (until end of file
	// or Ctrl-C).
	NumSamples int64 `yaml:"num_samples"`
}

// Waveform is a synthetic signal. Which keys are allowed depends on Signal:
//
//	tone:      frequency_hz (required), amplitude, phase_rad
//	multitone: tones
//	chirp:     frequency_hz (start), chirp_end_hz (both required), chirp_period_s, amplitude, phase_rad
//	noise:     noise_std, seed
//	impulse:   impulse_every, amplitude
//	sum:       components (each a Waveform)
//
// Frequencies must lie below Nyquist (sample_rate/2); negative frequencies
// are allowed for complex sources only.
type Waveform struct {
	// Signal is tone, multitone, chirp, noise, impulse or sum. Required for
	// synthetic sources.
	Signal string `yaml:"signal"`
	// FrequencyHz is the tone frequency or the chirp start frequency.
	FrequencyHz float64 `yaml:"frequency_hz"`
	// Amplitude is the peak amplitude of tone, chirp and impulse. Default 1
	// when the key is absent.
	Amplitude float64 `yaml:"amplitude"`
	// PhaseRad is the phase at sample 0 of tone and chirp, in radians.
	PhaseRad float64 `yaml:"phase_rad"`
	// Tones are the components of a multitone signal. At least one.
	Tones []Tone `yaml:"tones"`
	// ChirpEndHz is the frequency the chirp sweeps to.
	ChirpEndHz float64 `yaml:"chirp_end_hz"`
	// ChirpPeriodS is the sweep period in seconds (> 0).
	ChirpPeriodS float64 `yaml:"chirp_period_s"`
	// NoiseStd is the standard deviation of Gaussian noise (> 0).
	NoiseStd float64 `yaml:"noise_std"`
	// Seed seeds the noise generator; the same seed gives the same samples.
	Seed int64 `yaml:"seed"`
	// ImpulseEvery is the impulse period in samples; 0 gives a single
	// impulse at sample 0 (an impulse response).
	ImpulseEvery int `yaml:"impulse_every"`
	// Components are summed for signal sum. At least one.
	Components []Waveform `yaml:"components"`
}

// Tone is one component of a multitone signal.
type Tone struct {
	// FrequencyHz of the tone; below Nyquist.
	FrequencyHz float64 `yaml:"frequency_hz"`
	// Amplitude is the peak amplitude. Default 1 when the key is absent.
	Amplitude float64 `yaml:"amplitude"`
	// PhaseRad is the initial phase in radians.
	PhaseRad float64 `yaml:"phase_rad"`
}

// Filter selects the FIR taps (exactly one of Taps, TapsFile and Design)
// and how they are applied.
type Filter struct {
	// Taps are inline coefficients. Must not be empty.
	Taps []float32 `yaml:"taps"`
	// TapsFile is a file of coefficients (see filter.LoadTaps). A relative
	// path is resolved against the config file's directory.
	TapsFile string `yaml:"taps_file"`
	// Design designs the taps with the window method.
	Design *Design `yaml:"design"`
	// Method is how the CPU backend and the CUDA backend's explicit
	// transport convolve: direct (the direct sum), fft (overlap-save fast
	// convolution; cuFFT on the GPU) or auto, which picks by tap count and
	// block size (see filter.Method and cuda.ResolveMethod). Default auto.
	Method string `yaml:"method"`
}

// FilterMethod returns filter.method as a filter.Method; call it on a
// validated Config (anything unknown reads as auto).
func (f *Filter) FilterMethod() filter.Method {
	m, _ := filter.ParseMethod(f.Method)
	return m
}

// Design is a windowed-sinc filter design. Which frequency keys are allowed
// depends on Type: lowpass/highpass use cutoff_hz, bandpass/bandstop use
// low_hz and high_hz. kaiser_beta is only allowed with window kaiser.
type Design struct {
	// Type is lowpass, highpass, bandpass or bandstop. Required.
	Type string `yaml:"type"`
	// CutoffHz is the -6 dB edge of lowpass and highpass.
	CutoffHz float64 `yaml:"cutoff_hz"`
	// LowHz is the lower band edge of bandpass and bandstop.
	LowHz float64 `yaml:"low_hz"`
	// HighHz is the upper band edge of bandpass and bandstop.
	HighHz float64 `yaml:"high_hz"`
	// NumTaps is the filter length. Required (> 0).
	NumTaps int `yaml:"num_taps"`
	// Window is the design window. Default hamming.
	Window string `yaml:"window"`
	// KaiserBeta is the Kaiser window shape. Default 8.6 when window is
	// kaiser.
	KaiserBeta float64 `yaml:"kaiser_beta"`
	// TransitionHz and AttenuationDB design by specification instead of
	// num_taps and window: a Kaiser window whose length and beta follow
	// from them as scipy's kaiserord picks them. Give both or neither.
	TransitionHz  float64 `yaml:"transition_hz"`
	AttenuationDB float64 `yaml:"attenuation_db"`
}

// CUDA holds settings for the GPU backend.
type CUDA struct {
	// Device is the CUDA device ordinal. Default 0.
	Device int `yaml:"device"`
	// Transport is auto, zero-copy, explicit or explicit-pageable. Default auto.
	Transport string `yaml:"transport"`
	// MaxPinnedMB caps pinned host memory in MiB. Default 0: a quarter of
	// the host's memory (an eighth beside an integrated GPU), at most
	// 16 GiB, checked against what the blocks need before the run starts.
	MaxPinnedMB int `yaml:"max_pinned_mb"`
	// WatchdogMS fails the run if one GPU step takes longer. Default 2000.
	WatchdogMS int `yaml:"watchdog_ms"`
	// WriteCombined maps the zero-copy input ring write-combined: the host
	// only writes it, and the GPU's reads then skip the CPU cache snoop.
	WriteCombined bool `yaml:"write_combined"`
	// PinSource takes a recording's blocks in place from the page cache,
	// pinned window by window ahead of the copies (explicit transport),
	// instead of reading them into the ring; integer samples (cs8, cu8,
	// ci16, ri16, PCM WAV) cross as stored and are converted on the GPU.
	// Default true; nil means the default (use PinSourceOn).
	PinSource *bool `yaml:"pin_source"`
	// PinWindowMB is the size of those windows in MiB and PinThreads the
	// threads that pin them. Default 0: half the bytes of the blocks in
	// flight as stored, 16 to 64 MiB (64 for cf32, 16 for cs8), and
	// cuda.DefaultPinThreads.
	PinWindowMB int `yaml:"pin_window_mb"`
	PinThreads  int `yaml:"pin_threads"`
	// ReadShare is the share of the windows of a recording taken in place
	// that the CPU's readers read into the ring instead, as stored,
	// several blocks at once, so that the CPU's copies and the pinning add
	// up: 0 pins every window, 1 reads them all. Omitted:
	// cuda.DefaultReadShare for float32 values (0.5) and
	// cuda.DefaultReadShareEncoded for stored integers (1).
	ReadShare *float64 `yaml:"read_share"`
	// PTXDir is a directory holding fir.ptx, batch.ptx and chain.ptx (as `make ptx`
	// writes them into kernels/) to load instead of the embedded kernels,
	// for a driver older than the embedded PTX. Relative to the config
	// file. Default: the embedded PTX.
	PTXDir string `yaml:"ptx_dir"`
}

// PinSourceOn is cuda.pin_source with its default (true) applied.
func (c CUDA) PinSourceOn() bool { return c.PinSource == nil || *c.PinSource }

// Sink describes where filtered samples go. Which keys are allowed
// depends on Type:
//
//	file, sigmf: path, format
//	null:        (none)
//	zmq:         endpoint, pattern, format, pass_tags
type Sink struct {
	// Type is file, sigmf, wav, null or zmq. Required.
	Type string `yaml:"type"`
	// Path is the output file (file, wav; "-" is standard output, and the
	// summary and logs then go to stderr) or base name (sigmf: writes
	// <path>.sigmf-data and <path>.sigmf-meta; a trailing .sigmf-data or
	// .sigmf-meta is accepted). Required for file and sigmf,
	// not allowed for null. A relative path is relative to the current
	// working directory, not to the config file.
	Path string `yaml:"path"`
	// Format is rf32_le, cf32_le, ri16_le, ci16_le or cs8 (file, sigmf,
	// zmq); empty means rf32_le for real sources and cf32_le for complex
	// ones. For wav: pcm16, pcm24 or float32; the default is the input's
	// PCM width when it is stored as integers (pcm16 up to 16 bits, pcm24
	// beyond) and float32 otherwise. Use FormatFor (assemble.WAVFormat
	// for the input's width).
	Format string `yaml:"format"`
	// Overwrite lets the run replace existing output files. Without it an
	// existing output is refused before anything starts. An output that is
	// one of the run's inputs is refused either way.
	Overwrite bool `yaml:"overwrite"`
	// Split writes each channel of the output's frames to a recording of
	// its own (file, sigmf): path.chK.ext, or for sigmf path.chK.sigmf-*,
	// K being the channel's number (a channelizer's k, the source's
	// channel otherwise), each SigMF recording with its channel's centre
	// as core:frequency. Not with standard output.
	Split bool `yaml:"split"`
	// Endpoint is the ZeroMQ endpoint to bind (zmq only, required):
	// tcp://host:port (host * = every interface) or ipc://path.
	Endpoint string `yaml:"endpoint"`
	// Pattern is push (lossless, back-pressured) or pub (fan-out; a slow
	// subscriber loses messages). zmq only, required.
	Pattern string `yaml:"pattern"`
	// PassTags writes gr-zeromq's tag header in front of each message
	// (zmq only; the receiver's pass_tags).
	PassTags bool `yaml:"pass_tags"`
}

// Log configures logging.
type Log struct {
	// Level is trace, debug, info, warn or error. Default info.
	Level string `yaml:"level"`
	// Format is console (human, to stderr) or json. Default console.
	Format string `yaml:"format"`
}

// Metrics configures the metrics HTTP endpoint.
type Metrics struct {
	// Listen is host:port to serve metrics on; empty disables it.
	Listen string `yaml:"listen"`
}
