package capture

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// Defaults of ALSAConfig.
const (
	DefaultALSADevRoot  = "/dev/snd"
	DefaultALSAProcRoot = "/proc/asound"
)

// ALSA sample formats accepted by ALSAConfig.Format.
const (
	ALSAFormatS16LE   = "s16_le"   // int16, scaled by 1/32768
	ALSAFormatS32LE   = "s32_le"   // int32, scaled by 1/2147483648
	ALSAFormatFloatLE = "float_le" // float32, passed through
)

// MaxALSAChannels bounds ALSAConfig.Channels.
const MaxALSAChannels = 8

// alsaPollMS bounds one poll of the PCM, so a cancelled context is noticed
// within this many milliseconds without a watcher goroutine.
const alsaPollMS = 50

// ALSAConfig selects and configures an ALSA PCM capture device. The kernel
// interface is used directly (no alsa-lib), so the device must support the
// format, channel count and rate as asked: there is no plug layer converting
// them.
type ALSAConfig struct {
	// Device is hw:CARD,DEV (hw:1,0, hw:tegrahda,3 or hw:CARD=PCH,DEV=0);
	// CARD is the card index or its id as listed in /proc/asound/cards; DEV
	// defaults to 0.
	Device string
	// Format is s16_le, s32_le or float_le.
	Format string
	// Channels is the device's channel count, 1..MaxALSAChannels: each a
	// real channel of the stream, unless Complex pairs them.
	Channels int
	// Complex pairs the channels as I,Q (left I, right Q; then the next
	// pair): an even Channels gives Channels/2 complex channels.
	Complex bool
	// SampleRate in frames per second; required, the device must support it
	// exactly.
	SampleRate int
	// PeriodSize and BufferSize are in frames; 0 lets the driver choose.
	PeriodSize int
	BufferSize int
	// DevRoot holds the PCM device nodes. Default DefaultALSADevRoot.
	DevRoot string
	// ProcRoot holds the cards file used to resolve card ids. Default
	// DefaultALSAProcRoot.
	ProcRoot string
	// OnOverrun, when not nil, is called from Read after each overrun (the
	// kernel buffer filled because the device was not read in time; the
	// samples in between are lost) with the total so far, before capture
	// restarts. Use it to log a warning.
	OnOverrun func(total uint64)
}

// ALSA reads samples from an ALSA PCM capture device through the kernel's
// ioctl interface (SNDRV_PCM_IOCTL_READI_FRAMES, interleaved frames). It is
// not safe for concurrent use, except Overruns.
type ALSA struct {
	name      string // hw:C,D
	path      string
	dev       pcmDev
	fmt       alsaFormat
	ch        int
	info      Info
	period    int // frames, as chosen by the driver
	bufFrames int // kernel buffer in frames, as chosen by the driver
	buf       []byte
	xfer      sndXferi
	overruns  atomic.Uint64
	onOverrun func(uint64)
	firstStamp
	err    error // sticky terminal error
	closed bool
}

// alsaFormat is one supported PCM sample format.
type alsaFormat struct {
	name  string
	code  uint32 // SNDRV_PCM_FORMAT_*
	bytes int
}

var alsaFormats = []alsaFormat{
	{ALSAFormatS16LE, 2, 2},
	{ALSAFormatS32LE, 10, 4},
	{ALSAFormatFloatLE, 14, 4},
}

// alsaFormatNames names the PCM format codes for messages.
var alsaFormatNames = map[uint32]string{
	0: "S8", 1: "U8", 2: "S16_LE", 3: "S16_BE", 4: "U16_LE", 5: "U16_BE",
	6: "S24_LE", 7: "S24_BE", 8: "U24_LE", 9: "U24_BE", 10: "S32_LE", 11: "S32_BE",
	12: "U32_LE", 13: "U32_BE", 14: "FLOAT_LE", 15: "FLOAT_BE", 16: "FLOAT64_LE",
	17: "FLOAT64_BE", 32: "S24_3LE", 33: "S24_3BE",
}

// OpenALSA opens the capture device, sets its hardware parameters
// (interleaved read access, the format, channels and rate; period and buffer
// size when given), prepares and starts it.
func OpenALSA(cfg ALSAConfig) (*ALSA, error) { return openALSA(cfg, openPCM) }

// openALSA is OpenALSA with the device opener injectable for tests.
func openALSA(cfg ALSAConfig, open func(path string) (pcmDev, error)) (*ALSA, error) {
	if cfg.DevRoot == "" {
		cfg.DevRoot = DefaultALSADevRoot
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = DefaultALSAProcRoot
	}
	f, err := checkALSAConfig(&cfg)
	if err != nil {
		return nil, err
	}
	cardID, devNum, err := ParseALSADevice(cfg.Device)
	if err != nil {
		return nil, err
	}
	card, err := resolveALSACard(cfg.ProcRoot, cardID)
	if err != nil {
		return nil, fmt.Errorf("capture: alsa: %s: %w", cfg.Device, err)
	}
	d := &ALSA{
		name:      fmt.Sprintf("hw:%d,%d", card, devNum),
		path:      filepath.Join(cfg.DevRoot, fmt.Sprintf("pcmC%dD%dc", card, devNum)),
		fmt:       f,
		ch:        cfg.Channels,
		onOverrun: cfg.OnOverrun,
	}
	d.dev, err = open(d.path)
	if err != nil {
		return nil, d.openErr(err)
	}
	if err := d.setup(&cfg); err != nil {
		d.dev.close()
		return nil, err
	}
	return d, nil
}

func checkALSAConfig(cfg *ALSAConfig) (alsaFormat, error) {
	i := slices.IndexFunc(alsaFormats, func(f alsaFormat) bool { return f.name == cfg.Format })
	if i < 0 {
		return alsaFormat{}, fmt.Errorf("capture: alsa: format %q: want %s, %s or %s", cfg.Format, ALSAFormatS16LE, ALSAFormatS32LE, ALSAFormatFloatLE)
	}
	if cfg.Channels < 1 || cfg.Channels > MaxALSAChannels {
		return alsaFormat{}, fmt.Errorf("capture: alsa: %d channels: want 1..%d", cfg.Channels, MaxALSAChannels)
	}
	if cfg.Complex && cfg.Channels%2 != 0 {
		return alsaFormat{}, fmt.Errorf("capture: alsa: %d channels cannot be paired as I,Q (complex needs an even count)", cfg.Channels)
	}
	if cfg.SampleRate <= 0 || int64(cfg.SampleRate) > math.MaxUint32 {
		return alsaFormat{}, fmt.Errorf("capture: alsa: sample rate %d must be a positive frame rate", cfg.SampleRate)
	}
	if cfg.PeriodSize < 0 || cfg.BufferSize < 0 || int64(cfg.PeriodSize) > math.MaxUint32 || int64(cfg.BufferSize) > math.MaxUint32 {
		return alsaFormat{}, fmt.Errorf("capture: alsa: period size %d and buffer size %d must be >= 0 frames (0 lets the driver choose)", cfg.PeriodSize, cfg.BufferSize)
	}
	if cfg.PeriodSize > 0 && cfg.BufferSize > 0 && cfg.BufferSize < 2*cfg.PeriodSize {
		return alsaFormat{}, fmt.Errorf("capture: alsa: buffer size %d must hold at least two periods of %d frames", cfg.BufferSize, cfg.PeriodSize)
	}
	return alsaFormats[i], nil
}

var (
	alsaPlainDev = regexp.MustCompile(`^hw:([^,=]+)(?:,([0-9]+))?$`)
	alsaKeyDev   = regexp.MustCompile(`^hw:CARD=([^,=]+)(?:,DEV=([0-9]+))?$`)
	alsaCardID   = regexp.MustCompile(`^[A-Za-z0-9_\-]+$`)
)

// ParseALSADevice splits an ALSA device name of the form hw:CARD,DEV (or
// hw:CARD, hw:CARD=id,DEV=n) into the card (an index or an id) and the
// device number. plughw and the other alsa-lib plugin names are rejected:
// their conversions live in alsa-lib, which this package does not use.
func ParseALSADevice(s string) (card string, dev int, err error) {
	if strings.HasPrefix(s, "plughw:") || s == "plughw" {
		return "", 0, inputErr(ErrUnsupported, "capture: alsa: device %q: plughw needs alsa-lib's plug layer, which sigproc does not use; give hw:%s with a format, channel count and rate the card supports (see /proc/asound/card*/pcm*c/sub0/hw_params while another program records, or arecord --dump-hw-params -D hw:...)", s, strings.TrimPrefix(s, "plughw:"))
	}
	m := alsaKeyDev.FindStringSubmatch(s)
	if m == nil {
		m = alsaPlainDev.FindStringSubmatch(s)
	}
	if m == nil || !alsaCardID.MatchString(m[1]) {
		return "", 0, fmt.Errorf("capture: alsa: device %q: want hw:CARD,DEV with CARD a card index or id from /proc/asound/cards (e.g. hw:0,0 or hw:PCH,0); alsa-lib names such as default or sysdefault are not supported", s)
	}
	if m[2] != "" {
		dev, err = strconv.Atoi(m[2])
		if err != nil || dev > 1<<20 {
			return "", 0, fmt.Errorf("capture: alsa: device %q: bad device number %q", s, m[2])
		}
	}
	if isDigits(m[1]) {
		if n, err := strconv.Atoi(m[1]); err != nil || n > 1<<20 {
			return "", 0, fmt.Errorf("capture: alsa: device %q: bad card index %q", s, m[1])
		}
	}
	return m[1], dev, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// alsaCard is one line of /proc/asound/cards.
type alsaCard struct {
	index int
	id    string
	name  string
}

var alsaCardLine = regexp.MustCompile(`^\s*([0-9]+)\s+\[([^\]]*)\]\s*:\s*(.*)$`)

// parseALSACards parses /proc/asound/cards: " 0 [PCH   ]: HDA-Intel - HDA
// Intel PCH" lines, each followed by a description line that is skipped.
func parseALSACards(data string) []alsaCard {
	var cards []alsaCard
	for _, line := range strings.Split(data, "\n") {
		m := alsaCardLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		cards = append(cards, alsaCard{index: n, id: strings.TrimSpace(m[2]), name: strings.TrimSpace(m[3])})
	}
	return cards
}

// resolveALSACard turns a card index or id into the index.
func resolveALSACard(procRoot, card string) (int, error) {
	if isDigits(card) {
		return strconv.Atoi(card)
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "cards"))
	if err != nil {
		return 0, fmt.Errorf("resolve card id %q: %w (give the card index instead)", card, err)
	}
	cards := parseALSACards(string(b))
	var avail []string
	for _, c := range cards {
		if c.id == card {
			return c.index, nil
		}
		avail = append(avail, fmt.Sprintf("%d [%s] %s", c.index, c.id, c.name))
	}
	list := "none"
	if len(avail) > 0 {
		list = strings.Join(avail, "; ")
	}
	return 0, fmt.Errorf("no sound card with id %q in %s (cards: %s)", card, filepath.Join(procRoot, "cards"), list)
}

// openErr explains a failed open.
func (d *ALSA) openErr(err error) error {
	switch {
	case errors.Is(err, os.ErrNotExist):
		avail, _ := filepath.Glob(filepath.Join(filepath.Dir(d.path), "pcmC*D*c"))
		for i := range avail {
			avail[i] = filepath.Base(avail[i])
		}
		list := "none"
		if len(avail) > 0 {
			list = strings.Join(avail, ", ")
		}
		return fmt.Errorf("capture: alsa: %s: no capture device %s: %w (capture devices there: %s; arecord -l lists them)", d.name, d.path, err, list)
	case errors.Is(err, syscall.EBUSY):
		return fmt.Errorf("capture: alsa: %s: open %s: %w (another program holds it: stop it, or a sound server such as PulseAudio or PipeWire)", d.name, d.path, err)
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("capture: alsa: %s: open %s: %w (join the audio group or run as root)", d.name, d.path, err)
	}
	return fmt.Errorf("capture: alsa: %s: open %s: %w", d.name, d.path, err)
}

// setup negotiates the hardware parameters, then prepares and starts the PCM.
func (d *ALSA) setup(cfg *ALSAConfig) error {
	// What the device can do at all, for precise errors.
	var caps hwParams
	caps.any()
	if e := d.dev.ioctl(ioctlHWRefine, unsafe.Pointer(&caps)); e != 0 {
		return fmt.Errorf("capture: alsa: %s: %s is not a usable PCM capture device: query hardware parameters: %w", d.name, d.path, e)
	}
	if !caps.masks[hwAccess].has(accessRWInterleaved) {
		return inputErr(ErrUnsupported, "capture: alsa: %s does not support interleaved read access", d.name)
	}
	if !caps.masks[hwFormat].has(d.fmt.code) {
		return inputErr(ErrUnsupported, "capture: alsa: %s does not support format %s (supported: %s)", d.name, strings.ToUpper(d.fmt.name), caps.formats())
	}
	if c := caps.interval(hwChannels); !c.contains(uint32(d.ch)) {
		return inputErr(ErrUnsupported, "capture: alsa: %s does not support %d channel(s) (supported: %s)", d.name, d.ch, c)
	}
	if r := caps.interval(hwRate); !r.contains(uint32(cfg.SampleRate)) {
		return inputErr(ErrUnsupported, "capture: alsa: %s does not support %d Hz (supported: %s Hz)", d.name, cfg.SampleRate, r)
	}

	var p hwParams
	p.any()
	p.masks[hwAccess].only(accessRWInterleaved)
	p.masks[hwFormat].only(d.fmt.code)
	p.masks[hwSubformat].only(subformatStd)
	p.setInterval(hwChannels, uint32(d.ch))
	p.setInterval(hwRate, uint32(cfg.SampleRate))
	if cfg.PeriodSize > 0 {
		p.setInterval(hwPeriodSize, uint32(cfg.PeriodSize))
	}
	if cfg.BufferSize > 0 {
		p.setInterval(hwBufferSize, uint32(cfg.BufferSize))
	}
	if e := d.dev.ioctl(ioctlHWParams, unsafe.Pointer(&p)); e != 0 {
		return fmt.Errorf("capture: alsa: %s: set hardware parameters (%s, %d channel(s), %d Hz, period %s, buffer %s frames): %w (the device supports period sizes %s and buffer sizes %s frames)",
			d.name, strings.ToUpper(d.fmt.name), d.ch, cfg.SampleRate, sizeOrAuto(cfg.PeriodSize), sizeOrAuto(cfg.BufferSize), e,
			caps.interval(hwPeriodSize), caps.interval(hwBufferSize))
	}
	// The kernel chose every parameter; read back what it set.
	rate := float64(p.interval(hwRate).min)
	if p.rateNum != 0 && p.rateDen != 0 {
		rate = float64(p.rateNum) / float64(p.rateDen)
	}
	if got := p.interval(hwRate).min; got != uint32(cfg.SampleRate) {
		return fmt.Errorf("capture: alsa: %s: asked for %d Hz, the driver set %d Hz", d.name, cfg.SampleRate, got)
	}
	d.period = int(p.interval(hwPeriodSize).min)
	d.bufFrames = int(p.interval(hwBufferSize).min)
	if d.period <= 0 {
		return fmt.Errorf("capture: alsa: %s: the driver set a period of %d frames", d.name, d.period)
	}
	d.info = Info{SampleRate: rate, Complex: cfg.Complex, NumChannels: d.ch}
	if cfg.Complex {
		d.info.NumChannels /= 2
	}
	d.buf = make([]byte, d.period*d.frameBytes())

	if e := d.dev.ioctl(ioctlPrepare, nil); e != 0 {
		return fmt.Errorf("capture: alsa: %s: prepare: %w", d.name, e)
	}
	if e := d.dev.ioctl(ioctlStart, nil); e != 0 {
		return fmt.Errorf("capture: alsa: %s: start: %w", d.name, e)
	}
	return nil
}

func sizeOrAuto(n int) string {
	if n == 0 {
		return "auto"
	}
	return strconv.Itoa(n)
}

func (d *ALSA) frameBytes() int { return d.fmt.bytes * d.ch }

// Info describes the stream.
func (d *ALSA) Info() Info { return d.info }

// PCMBits implements [PCMSource].
func (d *ALSA) PCMBits() int {
	if d.fmt.name == ALSAFormatFloatLE {
		return 0
	}
	return 8 * d.fmt.bytes
}

// Device returns the resolved device name, e.g. "hw:1,0".
func (d *ALSA) Device() string { return d.name }

// PeriodSize returns the period in frames the driver chose.
func (d *ALSA) PeriodSize() int { return d.period }

// BufferSize returns the kernel buffer size in frames the driver chose.
func (d *ALSA) BufferSize() int { return d.bufFrames }

// SetOverrunHandler replaces ALSAConfig.OnOverrun (for callers that open
// the device before their logger is ready); nil removes it.
func (d *ALSA) SetOverrunHandler(f func(total uint64)) { d.onOverrun = f }

// Overruns returns how many times the kernel buffer overflowed (samples were
// lost) since the device was opened. It is safe to call from any goroutine.
func (d *ALSA) Overruns() uint64 { return d.overruns.Load() }

// Read implements [Source]: it fills dst with whole frames. After an
// overrun (the kernel reports EPIPE: the buffer filled and samples were
// lost) it counts it (see [ALSA.Overruns] and ALSAConfig.OnOverrun),
// re-prepares and restarts the device and goes on, so the stream has a gap
// there. A suspended device is restarted the same way. A device that goes
// away gives an error wrapping [ErrDeviceGone]. Read never returns io.EOF.
func (d *ALSA) Read(ctx context.Context, dst []float32) (int, error) {
	if d.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkDst(dst, d.ch); err != nil {
		return 0, err
	}
	if d.err != nil {
		return 0, d.err
	}
	n := 0
	fb := d.frameBytes()
	for n < len(dst) {
		want := min((len(dst)-n)/d.ch, d.period)
		d.xfer = sndXferi{buf: unsafe.Pointer(&d.buf[0]), frames: uintptr(want)}
		e := d.dev.ioctl(ioctlReadIFrames, unsafe.Pointer(&d.xfer))
		if e == 0 {
			got := int(d.xfer.result)
			if got < 0 || got > want {
				d.err = fmt.Errorf("capture: alsa: %s: read returned %d frames for %d asked", d.name, got, want)
				return n, d.err
			}
			d.decode(dst[n:n+got*d.ch], d.buf[:got*fb])
			n += got * d.ch
			d.note(got, d.info.SampleRate)
			continue
		}
		switch e {
		case syscall.EAGAIN:
			if err := ctx.Err(); err != nil {
				return n, err
			}
			if err := d.dev.poll(alsaPollMS); err != nil && !errors.Is(err, syscall.EINTR) {
				d.err = fmt.Errorf("capture: alsa: %s: poll: %w", d.name, err)
				return n, d.err
			}
		case syscall.EINTR:
		case syscall.EPIPE, errnoESTRPIPE:
			if e == syscall.EPIPE {
				total := d.overruns.Add(1)
				if d.onOverrun != nil {
					d.onOverrun(total)
				}
			}
			if err := d.restart(); err != nil {
				d.err = err
				return n, err
			}
		case syscall.ENODEV, errnoEBADFD:
			d.err = &multiError{msg: fmt.Sprintf("capture: alsa: %s disappeared: %v", d.name, e), kinds: []error{ErrDeviceGone, e}}
			return n, d.err
		default:
			d.err = fmt.Errorf("capture: alsa: %s: read: %w", d.name, e)
			return n, d.err
		}
	}
	return n, nil
}

// restart recovers from an overrun or a suspend: PREPARE resets the
// pointers (what was buffered is lost), START runs the device again.
func (d *ALSA) restart() error {
	if e := d.dev.ioctl(ioctlPrepare, nil); e != 0 {
		return fmt.Errorf("capture: alsa: %s: prepare after overrun %d: %w", d.name, d.overruns.Load(), e)
	}
	if e := d.dev.ioctl(ioctlStart, nil); e != 0 {
		return fmt.Errorf("capture: alsa: %s: start after overrun %d: %w", d.name, d.overruns.Load(), e)
	}
	return nil
}

// decode converts interleaved frames in b to float32 values in dst.
func (d *ALSA) decode(dst []float32, b []byte) {
	switch d.fmt.code {
	case 2:
		decodeS16LE(dst, b)
	case 10:
		decodeS32LE(dst, b)
	default:
		decodeFloatLE(dst, b)
	}
}

// decodeS16LE scales int16 by 1/32768 (exact in float32).
func decodeS16LE(dst []float32, b []byte) {
	b = b[:2*len(dst)]
	for i := range dst {
		dst[i] = float32(int16(binary.LittleEndian.Uint16(b[2*i:]))) / 32768
	}
}

// decodeS32LE scales int32 by 1/2^31, computed in float64 so the result is
// rounded once. float32 has 24 bits, so values near full scale round to 1.
func decodeS32LE(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = float32(float64(int32(binary.LittleEndian.Uint32(b[4*i:]))) / 2147483648)
	}
}

func decodeFloatLE(dst []float32, b []byte) {
	b = b[:4*len(dst)]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

// Close stops the device (DROP) and closes it. Closing twice is a no-op.
func (d *ALSA) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	d.dev.ioctl(ioctlDrop, nil) // a device that went away cannot be stopped; closing is what matters
	if err := d.dev.close(); err != nil {
		return fmt.Errorf("capture: alsa: close %s: %w", d.path, err)
	}
	return nil
}
