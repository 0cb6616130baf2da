package filter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sigproc/sigproc/internal/regfile"
)

// maxTapLine bounds one line of a taps file.
const maxTapLine = 1 << 20

// ErrTapsSyntax is wrapped by ParseTaps for malformed content.
var ErrTapsSyntax = errors.New("filter: bad taps file")

// ParseTaps reads filter taps from text: numbers separated by whitespace
// (any Unicode space, a no-break space pasted from a page too), commas or
// newlines; '#' starts a comment that runs to the end of the
// line. A UTF-8 byte order mark at the start is skipped (spreadsheets
// write one). A line may end with a comma, but a comma with no number
// before it (",,", or one starting a line) is an error rather than a tap
// silently missing. Errors name the input as name:line. At least one tap
// and at most MaxTaps are required; every value must be finite and fit a
// float32.
func ParseTaps(r io.Reader, name string) ([]float32, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxTapLine)
	var taps []float32
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		var fields []string
		pieces := strings.Split(text, ",")
		for i, piece := range pieces {
			f := strings.Fields(piece)
			if len(f) == 0 && i < len(pieces)-1 {
				return nil, fmt.Errorf("%w: %s:%d: an empty field before comma %d (a missing tap?)", ErrTapsSyntax, name, line, i+1)
			}
			fields = append(fields, f...)
		}
		for _, fld := range fields {
			v, err := strconv.ParseFloat(fld, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: %s:%d: %q is not a finite number", ErrTapsSyntax, name, line, fld)
			}
			if math.Abs(v) > math.MaxFloat32 {
				return nil, fmt.Errorf("%w: %s:%d: %q overflows float32", ErrTapsSyntax, name, line, fld)
			}
			if len(taps) == MaxTaps {
				return nil, fmt.Errorf("%w: %s:%d: more than %d taps", ErrTapsSyntax, name, line, MaxTaps)
			}
			taps = append(taps, float32(v))
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: %s:%d: line longer than %d bytes", ErrTapsSyntax, name, line+1, maxTapLine)
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(taps) == 0 {
		return nil, fmt.Errorf("%w: %s: no taps found", ErrTapsSyntax, name)
	}
	return taps, nil
}

// MaxTapsFileSize bounds the taps file LoadTaps reads: MaxTaps taps of up
// to 64 characters each, comments included.
const MaxTapsFileSize = 64 * MaxTaps

// LoadTaps reads a taps file with ParseTaps; a file larger than
// MaxTapsFileSize is an error, and so is anything but a regular file (a
// FIFO or a device would hang or never end; see regfile.Open).
func LoadTaps(path string) ([]float32, error) {
	f, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("taps file: %w", err)
	}
	defer f.Close()
	lr := &io.LimitedReader{R: f, N: MaxTapsFileSize + 1}
	taps, err := ParseTaps(lr, path)
	if lr.N <= 0 {
		return nil, fmt.Errorf("%w: %s: file larger than %d bytes", ErrTapsSyntax, path, MaxTapsFileSize)
	}
	return taps, err
}
