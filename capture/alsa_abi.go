package capture

import (
	"fmt"
	"strings"
	"syscall"
	"unsafe"
)

// The Linux ALSA PCM ABI (include/uapi/sound/asound.h), mirrored in Go
// types so that unsafe.Sizeof gives the C sizes on 32- and 64-bit targets.

// pcmDev is an open PCM device node: its ioctl and poll system calls. Tests
// replace it with a fake that can inject errors such as EPIPE.
type pcmDev interface {
	// ioctl runs one PCM ioctl; 0 means success.
	ioctl(req uintptr, arg unsafe.Pointer) syscall.Errno
	// poll waits up to timeoutMS for the device to be readable (or in
	// error: the next read reports it).
	poll(timeoutMS int) error
	close() error
}

// Linux errno values with no portable name in package syscall.
const (
	errnoESTRPIPE = syscall.Errno(86) // stream suspended (power management)
	errnoEBADFD   = syscall.Errno(77) // file descriptor in bad state (device unplugged)
)

// Indexes of snd_pcm_hw_params masks and intervals (SNDRV_PCM_HW_PARAM_*).
const (
	hwAccess    = 0
	hwFormat    = 1
	hwSubformat = 2

	hwFirstInterval = 8
	hwChannels      = 10
	hwRate          = 11
	hwPeriodSize    = 13
	hwBufferSize    = 17
)

const (
	accessRWInterleaved = 3 // SNDRV_PCM_ACCESS_RW_INTERLEAVED
	subformatStd        = 0 // SNDRV_PCM_SUBFORMAT_STD
)

// sndMask is struct snd_mask: a bit set of SNDRV_MASK_MAX (256) bits.
type sndMask struct{ bits [8]uint32 }

func (m *sndMask) has(v uint32) bool { return v < 256 && m.bits[v/32]&(1<<(v%32)) != 0 }

func (m *sndMask) only(v uint32) {
	*m = sndMask{}
	m.bits[v/32] = 1 << (v % 32)
}

// sndInterval is struct snd_interval; flags holds the bit fields openmin
// (bit 0), openmax (1), integer (2) and empty (3).
type sndInterval struct {
	min, max, flags uint32
}

const (
	intervalOpenMin = 1 << 0
	intervalOpenMax = 1 << 1
	intervalInteger = 1 << 2
	intervalEmpty   = 1 << 3
)

func (iv sndInterval) contains(v uint32) bool {
	if iv.flags&intervalEmpty != 0 {
		return false
	}
	lo := v > iv.min || (v == iv.min && iv.flags&intervalOpenMin == 0)
	hi := v < iv.max || (v == iv.max && iv.flags&intervalOpenMax == 0)
	return lo && hi
}

// String formats the interval for messages: "2", "1..8", "(8000..192000]".
func (iv sndInterval) String() string {
	if iv.flags&intervalEmpty != 0 {
		return "none"
	}
	if iv.min == iv.max {
		return fmt.Sprint(iv.min)
	}
	l, r := "", ""
	if iv.flags&intervalOpenMin != 0 {
		l = "("
	}
	if iv.flags&intervalOpenMax != 0 {
		r = ")"
	}
	return fmt.Sprintf("%s%d..%d%s", l, iv.min, iv.max, r)
}

// hwParams is struct snd_pcm_hw_params.
type hwParams struct {
	flags     uint32
	masks     [3]sndMask // ACCESS, FORMAT, SUBFORMAT
	mres      [5]sndMask
	intervals [12]sndInterval // SAMPLE_BITS .. TICK_TIME
	ires      [9]sndInterval
	rmask     uint32
	cmask     uint32
	info      uint32
	msbits    uint32
	rateNum   uint32
	rateDen   uint32
	fifoSize  uintptr // snd_pcm_uframes_t (unsigned long)
	reserved  [64]byte
}

// any opens every parameter fully, as alsa-lib's snd_pcm_hw_params_any
// does before refining: all mask bits set, every interval [0, UINT_MAX].
func (p *hwParams) any() {
	*p = hwParams{}
	for i := range p.masks {
		for j := range p.masks[i].bits {
			p.masks[i].bits[j] = ^uint32(0)
		}
	}
	for i := range p.intervals {
		p.intervals[i] = sndInterval{min: 0, max: ^uint32(0)}
	}
	p.rmask = ^uint32(0)
	p.info = ^uint32(0)
}

func (p *hwParams) interval(param int) sndInterval { return p.intervals[param-hwFirstInterval] }

func (p *hwParams) setInterval(param int, v uint32) {
	p.intervals[param-hwFirstInterval] = sndInterval{min: v, max: v, flags: intervalInteger}
}

// formats lists the format mask by name.
func (p *hwParams) formats() string {
	var names []string
	for v := uint32(0); v < 256; v++ {
		if p.masks[hwFormat].has(v) {
			if n, ok := alsaFormatNames[v]; ok {
				names = append(names, n)
			} else {
				names = append(names, fmt.Sprintf("format %d", v))
			}
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// sndXferi is struct snd_xferi, the argument of READI_FRAMES.
type sndXferi struct {
	result int            // snd_pcm_sframes_t (long): frames transferred
	buf    unsafe.Pointer // void __user *
	frames uintptr        // snd_pcm_uframes_t
}

// ioc builds an ioctl request number as _IOC in asm-generic/ioctl.h (the
// encoding of x86, arm and arm64; not of mips, powerpc or sparc).
func ioc(dir, nr, size uintptr) uintptr { return dir<<30 | size<<16 | 'A'<<8 | nr }

const (
	iocNone  = 0
	iocWrite = 1
	iocRead  = 2
)

// PCM ioctl requests (SNDRV_PCM_IOCTL_*).
var (
	ioctlHWRefine    = ioc(iocRead|iocWrite, 0x10, unsafe.Sizeof(hwParams{}))
	ioctlHWParams    = ioc(iocRead|iocWrite, 0x11, unsafe.Sizeof(hwParams{}))
	ioctlPrepare     = ioc(iocNone, 0x40, 0)
	ioctlStart       = ioc(iocNone, 0x42, 0)
	ioctlDrop        = ioc(iocNone, 0x43, 0)
	ioctlReadIFrames = ioc(iocRead, 0x51, unsafe.Sizeof(sndXferi{}))
)
