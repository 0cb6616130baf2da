// Package capture provides sample sources for the sigproc pipeline: a
// synthetic signal generator, raw little-endian sample files or streams
// (stdin), WAV files, SigMF recordings, and live ADCs through the Linux IIO
// buffer interface (sysfs configuration plus the /dev/iio:deviceN character
// device; see [OpenIIO]).
//
// Every source implements [Source]. Samples are float32: a real stream has one
// value per sample, a complex stream interleaves I and Q (two values per
// sample). Integer inputs are scaled by 1/32768 to [-1, 1); float inputs are
// passed through as stored.
//
// Read works like io.Reader with a context: it fills the caller's buffer, so
// the hot path allocates nothing. Input whose byte count is not a whole
// number of samples is never silently shortened: the whole samples are
// returned, then an error wrapping [ErrTruncated].
package capture
