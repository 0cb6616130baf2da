package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Defaults of IIOConfig.
const (
	DefaultIIOSysfsRoot = "/sys/bus/iio/devices"
	DefaultIIODevRoot   = "/dev"
)

// iioBufSize is the target size of the byte buffer each IIO allocates once
// (rounded down to whole scans).
const iioBufSize = 64 << 10

// ErrDeviceGone means a live capture device stopped delivering: it was
// unplugged or unbound (ENODEV), or its character device reported end of
// file. The samples decoded before it are returned first.
var ErrDeviceGone = errors.New("capture: device disappeared")

// IIOConfig selects and configures a Linux Industrial I/O (IIO) ADC.
type IIOConfig struct {
	// SysfsRoot is the IIO sysfs directory. Default DefaultIIOSysfsRoot.
	SysfsRoot string
	// DevRoot is where the character devices are. Default DefaultIIODevRoot.
	DevRoot string
	// Device is the directory name ("iio:device0") or the content of the
	// device's name file ("ads1015"); a name must match exactly one device.
	Device string
	// Channels are scan element names without the in_ prefix and _en
	// suffix ("voltage0"), 1..MaxChannels of them: each a real channel of
	// the stream, in this order, unless Complex pairs them.
	Channels []string
	// Complex pairs the channels as I,Q: the first and second are the
	// first complex channel's I and Q, and so on (an even count).
	Complex bool
	// ApplyScale converts every value to the channel's physical unit,
	// (raw + offset) × scale from the in_<name>_scale and _offset
	// attributes (millivolts for a voltage), instead of normalising it
	// to [-1, 1). Either way the scales are recorded in Meta.
	ApplyScale bool
	// SampleRate is written to the device's sampling_frequency attribute
	// when > 0; 0 keeps the device's current rate. The rate read back
	// (drivers round) is the stream's rate. For a device without the
	// attribute (clocked by a trigger) SampleRate is required and taken as
	// given: set the trigger's rate yourself.
	SampleRate float64
	// BufferLength is written to buffer/length (in scans) when > 0.
	BufferLength int
}

// IIO reads samples from an IIO device's buffered character device. It is
// not safe for concurrent use.
type IIO struct {
	name    string // directory name, e.g. iio:device0
	sysDir  string
	bufDir  string
	devPath string
	f       *os.File
	info    Info
	chans   []iioChan // in IIOConfig.Channels order
	scan    int       // bytes per scan
	frameBuf
	firstStamp
	meta   Meta
	scans  int64 // whole scans read so far
	err    error // sticky terminal error
	closed bool
	trace  func(string) // see openIIO
	rw     readWatch    // a cancelled Read's context wakes its blocked read
}

// iioChan is one enabled scan element and its place in a scan.
type iioChan struct {
	name   string
	typ    ChannelType
	index  int
	offset int
	// Each value is raw×mul + add: the normalisation (Normalize's
	// arithmetic, the factor precomputed) or, with ApplyScale, the
	// physical unit.
	mul, add float64
}

// OpenIIO configures the device and starts capture. The order follows the
// IIO ABI: the buffer is disabled first; then the scan elements are set
// (the named ones enabled, every other one disabled), buffer/length and
// sampling_frequency are written; the buffer is enabled last and then the
// character device DevRoot/<device> is opened.
func OpenIIO(cfg IIOConfig) (*IIO, error) { return openIIO(cfg, nil) }

// openIIO is OpenIIO; trace, when not nil, is told every sysfs write
// ("write buffer/enable 1", paths relative to the device directory), the
// character device open and close, so tests can check the order.
func openIIO(cfg IIOConfig, trace func(string)) (*IIO, error) {
	if cfg.SysfsRoot == "" {
		cfg.SysfsRoot = DefaultIIOSysfsRoot
	}
	if cfg.DevRoot == "" {
		cfg.DevRoot = DefaultIIODevRoot
	}
	if err := checkIIOConfig(&cfg); err != nil {
		return nil, err
	}
	sysDir, err := findIIODevice(cfg.SysfsRoot, cfg.Device)
	if err != nil {
		return nil, err
	}
	d := &IIO{name: filepath.Base(sysDir), sysDir: sysDir, trace: trace}
	d.devPath = filepath.Join(cfg.DevRoot, d.name)
	scanDir := ""
	for _, sub := range []string{"buffer", "buffer0"} {
		if isDir(filepath.Join(sysDir, sub)) {
			d.bufDir = filepath.Join(sysDir, sub)
			break
		}
	}
	for _, sub := range []string{"scan_elements", "buffer0"} {
		if isDir(filepath.Join(sysDir, sub)) {
			scanDir = filepath.Join(sysDir, sub)
			break
		}
	}
	if d.bufDir == "" || scanDir == "" {
		return nil, inputErr(ErrUnsupported, "capture: iio: %s (%s) has no buffer or scan_elements directory: it does not support buffered capture", d.name, sysDir)
	}

	// 1. Disable the buffer: scan elements and length can only change then.
	if err := d.write(filepath.Join(d.bufDir, "enable"), "0"); err != nil {
		return nil, fmt.Errorf("capture: iio: %s: disable buffer: %w", d.name, err)
	}
	// 2. Scan elements.
	if err := d.setupChannels(scanDir, cfg.Channels); err != nil {
		return nil, err
	}
	// 3. Buffer length and sample rate.
	if cfg.BufferLength > 0 {
		if err := d.write(filepath.Join(d.bufDir, "length"), strconv.Itoa(cfg.BufferLength)); err != nil {
			return nil, fmt.Errorf("capture: iio: %s: set buffer length: %w", d.name, err)
		}
	}
	rate, err := d.setupRate(cfg.SampleRate)
	if err != nil {
		return nil, err
	}
	if err := d.setupScales(cfg.ApplyScale); err != nil {
		return nil, err
	}
	d.info = Info{SampleRate: rate, Complex: cfg.Complex, NumChannels: len(d.chans)}
	if cfg.Complex {
		d.info.NumChannels /= 2
	}
	// 4. Enable the buffer, then open the character device.
	if err := d.write(filepath.Join(d.bufDir, "enable"), "1"); err != nil {
		return nil, fmt.Errorf("capture: iio: %s: enable buffer: %w", d.name, err)
	}
	d.tracef("open " + d.devPath)
	f, err := os.Open(d.devPath)
	if err != nil {
		_ = d.write(filepath.Join(d.bufDir, "enable"), "0")
		return nil, fmt.Errorf("capture: iio: %s: open character device: %w", d.name, err)
	}
	d.f = f
	d.buf = make([]byte, max(1, iioBufSize/d.scan)*d.scan)
	return d, nil
}

// elementName is what a scan element name may look like ("voltage0",
// "voltage0-voltage1", "accel_x").
var elementName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_\-]*$`)

func checkIIOConfig(cfg *IIOConfig) error {
	if cfg.Device == "" {
		return errors.New("capture: iio: no device given (iio:deviceN or the device's name)")
	}
	if strings.ContainsRune(cfg.Device, '/') {
		return fmt.Errorf("capture: iio: device %q: give iio:deviceN or the device's name, not a path (set the sysfs root instead)", cfg.Device)
	}
	if n := len(cfg.Channels); n < 1 || n > MaxChannels {
		return fmt.Errorf("capture: iio: %d channels given; want 1..%d scan elements", n, MaxChannels)
	}
	if cfg.Complex && len(cfg.Channels)%2 != 0 {
		return fmt.Errorf("capture: iio: %d channels cannot be paired as I,Q (complex needs an even count)", len(cfg.Channels))
	}
	for i, c := range cfg.Channels {
		if !elementName.MatchString(c) {
			return fmt.Errorf("capture: iio: channel %q is not a scan element name such as voltage0", c)
		}
		if strings.HasPrefix(c, "in_") || strings.HasSuffix(c, "_en") {
			return fmt.Errorf("capture: iio: channel %q: give the element name without in_ and _en (voltage0 for in_voltage0_en)", c)
		}
		if slices.Contains(cfg.Channels[:i], c) {
			return fmt.Errorf("capture: iio: channel %q given twice", c)
		}
	}
	if cfg.SampleRate < 0 || math.IsNaN(cfg.SampleRate) || math.IsInf(cfg.SampleRate, 0) {
		return fmt.Errorf("capture: iio: sample rate %g must be a positive finite number (or 0 for the device's current rate)", cfg.SampleRate)
	}
	if cfg.BufferLength < 0 {
		return fmt.Errorf("capture: iio: buffer length %d must be >= 0 (0 keeps the device's)", cfg.BufferLength)
	}
	return nil
}

var iioDirName = regexp.MustCompile(`^iio:device[0-9]+$`)

// findIIODevice resolves a directory name or a device name to its sysfs dir.
func findIIODevice(root, dev string) (string, error) {
	if iioDirName.MatchString(dev) {
		p := filepath.Join(root, dev)
		if isDir(p) {
			return p, nil
		}
	}
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("capture: iio: no device %q: %w (is an IIO driver loaded?)", dev, err)
	}
	if err != nil {
		return "", fmt.Errorf("capture: iio: list devices: %w", err)
	}
	var found, avail []string
	for _, e := range ents {
		if !iioDirName.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(root, e.Name())
		name, err := readAttr(filepath.Join(p, "name"))
		if err != nil {
			avail = append(avail, e.Name())
			continue
		}
		avail = append(avail, fmt.Sprintf("%s (%s)", e.Name(), name))
		if name == dev {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		list := "none"
		if len(avail) > 0 {
			list = strings.Join(avail, ", ")
		}
		return "", fmt.Errorf("capture: iio: no device %q in %s (available: %s)", dev, root, list)
	}
	return "", fmt.Errorf("capture: iio: %d devices are named %q in %s; give the iio:deviceN directory name instead", len(found), dev, root)
}

// setupChannels enables the wanted scan elements, disables all others, and
// computes the scan layout.
func (d *IIO) setupChannels(scanDir string, want []string) error {
	ents, err := os.ReadDir(scanDir)
	if err != nil {
		return fmt.Errorf("capture: iio: %s: list scan elements: %w", d.name, err)
	}
	var all []string
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "in_"); ok {
			if n, ok = strings.CutSuffix(n, "_en"); ok {
				all = append(all, n)
			}
		}
	}
	for _, w := range want {
		if !slices.Contains(all, w) {
			return fmt.Errorf("capture: iio: %s has no scan element %q (available: %s)", d.name, w, strings.Join(all, ", "))
		}
	}
	for _, n := range all {
		if !slices.Contains(want, n) {
			if err := d.write(filepath.Join(scanDir, "in_"+n+"_en"), "0"); err != nil {
				return fmt.Errorf("capture: iio: %s: disable %s: %w", d.name, n, err)
			}
		}
	}
	for _, n := range want {
		if err := d.write(filepath.Join(scanDir, "in_"+n+"_en"), "1"); err != nil {
			return fmt.Errorf("capture: iio: %s: enable %s: %w", d.name, n, err)
		}
		c := iioChan{name: n}
		s, err := readAttr(filepath.Join(scanDir, "in_"+n+"_type"))
		if err != nil {
			return fmt.Errorf("capture: iio: %s: %s: %w", d.name, n, err)
		}
		if c.typ, err = ParseIIOType(s); err != nil {
			return fmt.Errorf("capture: iio: %s: %s: %w", d.name, n, err)
		}
		c.mul = c.typ.factor()
		if !c.typ.Signed {
			c.add = -1
		}
		if c.typ.Repeat > 1 {
			return inputErr(ErrUnsupported, "capture: iio: %s: %s has type %s; repeated elements are not supported", d.name, n, c.typ)
		}
		s, err = readAttr(filepath.Join(scanDir, "in_"+n+"_index"))
		if err != nil {
			return fmt.Errorf("capture: iio: %s: %s: %w", d.name, n, err)
		}
		if c.index, err = strconv.Atoi(s); err != nil || c.index < 0 {
			return inputErr(ErrFormat, "capture: iio: %s: %s: bad scan index %q", d.name, n, s)
		}
		d.chans = append(d.chans, c)
	}
	var err2 error
	d.scan, err2 = layoutScan(d.chans)
	if err2 != nil {
		return fmt.Errorf("capture: iio: %s: %w", d.name, err2)
	}
	return nil
}

// layoutScan sets each channel's byte offset with the kernel's rule: the
// enabled elements in index order, each aligned to its own storage size, the
// scan padded to a multiple of the largest. It returns the scan size.
func layoutScan(chans []iioChan) (int, error) {
	order := make([]*iioChan, len(chans))
	for i := range chans {
		order[i] = &chans[i]
	}
	sort.Slice(order, func(i, j int) bool { return order[i].index < order[j].index })
	bytes, largest := 0, 1
	for i, c := range order {
		if i > 0 && order[i-1].index == c.index {
			return 0, inputErr(ErrFormat, "scan elements %s and %s share index %d", order[i-1].name, c.name, c.index)
		}
		size := c.typ.StorageBytes()
		bytes = (bytes + size - 1) / size * size
		c.offset = bytes
		bytes += size
		largest = max(largest, size)
	}
	return (bytes + largest - 1) / largest * largest, nil
}

// setupRate writes (when rate > 0) and reads back the sampling frequency.
func (d *IIO) setupRate(rate float64) (float64, error) {
	var path string
	for _, p := range d.rateAttrs() {
		if _, err := os.Stat(p); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if rate > 0 {
			return rate, nil
		}
		return 0, fmt.Errorf("capture: iio: %s has no sampling_frequency attribute; give the sample rate (the trigger's rate) explicitly", d.name)
	}
	if rate > 0 {
		if err := d.write(path, strconv.FormatFloat(rate, 'f', -1, 64)); err != nil {
			return 0, fmt.Errorf("capture: iio: %s: set sample rate %g: %w", d.name, rate, err)
		}
	}
	s, err := readAttr(path)
	if err != nil {
		return 0, fmt.Errorf("capture: iio: %s: %w", d.name, err)
	}
	got, err := strconv.ParseFloat(s, 64)
	if err != nil || !(got > 0) || math.IsInf(got, 0) {
		return 0, inputErr(ErrFormat, "capture: iio: %s: %s reads %q, not a positive sample rate", d.name, path, s)
	}
	return got, nil
}

// rateAttrs lists where drivers put the sampling frequency, most general
// first: the device, the channel type (in_voltage_), the first channel.
func (d *IIO) rateAttrs() []string {
	ch := d.chans[0].name
	typ := strings.TrimRight(ch, "0123456789")
	return []string{
		filepath.Join(d.sysDir, "sampling_frequency"),
		filepath.Join(d.sysDir, "in_"+typ+"_sampling_frequency"),
		filepath.Join(d.sysDir, "in_"+ch+"_sampling_frequency"),
	}
}

// Info describes the stream.
func (d *IIO) Info() Info { return d.info }

// SignalMeta returns the device's scales (global "sigproc:iio"); the first
// sample's capture time is FirstSampleTime.
func (d *IIO) SignalMeta() *Meta { return &d.meta }

// iioScale is one channel's entry in the "sigproc:iio" metadata: the
// physical value of a stored value v is v×Gain + Bias (in Unit).
type iioScale struct {
	Name    string   `json:"name"`
	Scale   *float64 `json:"scale,omitempty"` // in_<name>_scale as read
	Offset  float64  `json:"offset"`          // in_<name>_offset as read, 0 if absent
	Applied bool     `json:"applied"`         // apply_scale: values are physical already
	Gain    *float64 `json:"gain,omitempty"`  // physical = value × gain + bias
	Bias    *float64 `json:"bias,omitempty"`
	Unit    string   `json:"unit,omitempty"` // the IIO ABI's unit for the channel type
	Type    string   `json:"type"`           // the scan element type, e.g. le:s16/16>>0
}

// iioUnits are the IIO ABI's units of processed values (after scale).
var iioUnits = map[string]string{
	"voltage": "mV", "current": "mA", "power": "mW", "temp": "m°C",
	"accel": "m/s^2", "anglvel": "rad/s", "pressure": "kPa", "humidityrelative": "m%",
	"magn": "Gauss", "illuminance": "lux",
}

// setupScales reads each channel's scale and offset, sets its arithmetic
// and records them; apply makes the values physical, which needs a scale.
func (d *IIO) setupScales(apply bool) error {
	var list []iioScale
	for i := range d.chans {
		c := &d.chans[i]
		typ := strings.TrimRight(strings.SplitN(c.name, "-", 2)[0], "0123456789")
		e := iioScale{Name: c.name, Applied: apply, Unit: iioUnits[typ], Type: c.typ.String()}
		scale, okS, err := d.readNumber(c.name, typ, "scale")
		if err != nil {
			return err
		}
		offset, _, err := d.readNumber(c.name, typ, "offset")
		if err != nil {
			return err
		}
		e.Offset = offset
		if okS {
			e.Scale = &scale
			gain, bias := 1.0, 0.0 // applied: the values are physical
			if apply {
				c.mul, c.add = scale, offset*scale
			} else {
				// value = raw×factor (− 1 unsigned): raw = (value − add)/factor.
				gain = scale / c.typ.factor()
				bias = (offset - c.add/c.typ.factor()) * scale
			}
			e.Gain, e.Bias = &gain, &bias
		} else if apply {
			return inputErr(ErrUnsupported, "capture: iio: %s: %s has no in_%s_scale or in_%s_scale attribute; apply_scale needs one", d.name, c.name, c.name, typ)
		}
		list = append(list, e)
	}
	d.meta.Global = map[string]any{"sigproc:iio": map[string]any{"device": d.name, "channels": list}}
	return nil
}

// readNumber reads in_<name>_<attr>, else the shared in_<typ>_<attr>; ok
// is false when neither exists.
func (d *IIO) readNumber(name, typ, attr string) (float64, bool, error) {
	for _, p := range []string{"in_" + name + "_" + attr, "in_" + typ + "_" + attr} {
		s, err := readAttr(filepath.Join(d.sysDir, p))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("capture: iio: %s: %w", d.name, err)
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false, inputErr(ErrFormat, "capture: iio: %s: %s reads %q, not a number", d.name, p, s)
		}
		return v, true, nil
	}
	return 0, false, nil
}

// Device returns the device directory name, e.g. "iio:device0".
func (d *IIO) Device() string { return d.name }

// ScanBytes returns the size in bytes of one scan (one sample of every
// enabled channel, padded as the kernel lays it out).
func (d *IIO) ScanBytes() int { return d.scan }

// Read implements [Source]: whole scans from the character device, each
// channel decoded exactly and normalised to [-1, 1) (see
// [ChannelType.Normalize]). If the device goes away (ENODEV, or end of file
// on the character device) Read returns the samples decoded before it and an
// error wrapping [ErrDeviceGone], and also [ErrTruncated] when it stopped
// inside a scan. The device never ends normally, so Read never returns io.EOF.
func (d *IIO) Read(ctx context.Context, dst []float32) (int, error) {
	if d.closed {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ch := len(d.chans)
	if err := checkDst(dst, ch); err != nil {
		return 0, err
	}
	d.rw.watch(ctx, d.f)
	n, stalls := 0, 0
	for n < len(dst) {
		if k := min((d.hi-d.lo)/d.scan, (len(dst)-n)/ch); k > 0 {
			d.decode(dst[n:n+k*ch], k)
			n += k * ch
			continue
		}
		if d.err != nil {
			return n, d.err
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := d.refill(d.f)
		switch {
		case err == io.EOF:
			d.err = d.goneErr(nil)
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil:
			return n, ctx.Err()
		case errors.Is(err, syscall.ENODEV):
			d.err = d.goneErr(err)
		case err != nil:
			d.err = fmt.Errorf("capture: iio: %s: read %s: %w", d.name, d.devPath, err)
		case m == 0:
			if stalls++; stalls >= maxNoProgress {
				d.err = fmt.Errorf("capture: iio: %s: read %s: %w", d.name, d.devPath, io.ErrNoProgress)
			}
		default:
			stalls = 0
		}
	}
	return n, nil
}

// decode converts k whole scans from buf[lo:] into dst.
func (d *IIO) decode(dst []float32, k int) {
	ch := len(d.chans)
	b := d.buf[d.lo : d.lo+k*d.scan]
	for s := 0; s < k; s++ {
		scan := b[s*d.scan : (s+1)*d.scan]
		for c := range d.chans {
			t := &d.chans[c]
			v := t.typ.decode(scan[t.offset:])
			if t.typ.Signed {
				dst[s*ch+c] = float32(float64(v)*t.mul + t.add)
			} else {
				dst[s*ch+c] = float32(float64(uint64(v))*t.mul + t.add)
			}
		}
	}
	d.lo += k * d.scan
	d.scans += int64(k)
	d.note(k, d.info.SampleRate)
}

// goneErr builds the error for a device that went away; cause is nil for end
// of file. The scans still buffered count as read.
func (d *IIO) goneErr(cause error) error {
	left := d.hi - d.lo
	scans := d.scans + int64(left/d.scan)
	partial := left % d.scan
	what := "end of file on " + d.devPath
	kinds := []error{ErrDeviceGone}
	if cause != nil {
		what = cause.Error()
		kinds = append(kinds, cause)
	}
	msg := fmt.Sprintf("capture: iio: %s disappeared after %d scans: %s", d.name, scans, what)
	if partial > 0 {
		msg += fmt.Sprintf("; truncated input: the last %d byte(s) are not a whole %d-byte scan", partial, d.scan)
		kinds = append(kinds, ErrTruncated)
	}
	return &multiError{msg: msg, kinds: kinds}
}

// Close disables the device's buffer and closes the character device.
// Closing twice is a no-op.
func (d *IIO) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	d.rw.unwatch()
	var errs []error
	if err := d.write(filepath.Join(d.bufDir, "enable"), "0"); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("capture: iio: %s: disable buffer: %w", d.name, err))
	}
	d.tracef("close " + d.devPath)
	if err := d.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("capture: iio: close %s: %w", d.devPath, err))
	}
	return errors.Join(errs...)
}

// write writes a sysfs attribute of the device.
func (d *IIO) write(path, value string) error {
	if rel, err := filepath.Rel(d.sysDir, path); err == nil {
		d.tracef("write " + rel + " " + value)
	}
	return writeAttr(path, value)
}

func (d *IIO) tracef(event string) {
	if d.trace != nil {
		d.trace(event)
	}
}

// multiError carries a complete message and unwraps to several errors.
type multiError struct {
	msg   string
	kinds []error
}

func (e *multiError) Error() string   { return e.msg }
func (e *multiError) Unwrap() []error { return e.kinds }

// writeAttr writes a sysfs attribute in one write. It never creates the
// file: a missing attribute is an error, as on a real sysfs.
func writeAttr(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", value, path, err)
	}
	return f.Close()
}

// readAttr reads a sysfs attribute without its trailing newline.
func readAttr(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
