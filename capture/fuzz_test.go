package capture_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

func FuzzWAV(f *testing.F) {
	pcm := le16(1, -2, 3, -4)
	for _, s := range []wavSpec{
		{tag: 1, chans: 1, bits: 16, rate: 8000, data: pcm},
		{tag: 3, chans: 2, bits: 32, rate: 8000, data: le32f(1, 2), list: true},
		{tag: 1, chans: 2, bits: 16, rate: 96000, extensible: true, data: pcm},
		{tag: 1, chans: 1, bits: 16, rate: 8000, data: pcm, declared: 1 << 20},
		{tag: 1, chans: 1, bits: 8, rate: 8000, data: pcm},
	} {
		f.Add(buildWAV(s))
	}
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVE"))
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := capture.NewWAV(bytes.NewReader(data))
		if err != nil {
			if src != nil {
				t.Fatal("source with error")
			}
			return
		}
		got, err := readAll(src, 5)
		if err != io.EOF && !errors.Is(err, capture.ErrTruncated) {
			t.Fatalf("unexpected terminal error %v", err)
		}
		if len(got) > len(data) { // at least 1 byte per value (8-bit PCM)
			t.Fatalf("%d values from %d bytes", len(got), len(data))
		}
	})
}

func FuzzSigMFMeta(f *testing.F) {
	f.Add([]byte(`{"global":{"core:datatype":"cf32_le","core:sample_rate":1e6,"core:version":"1.0.0"},"captures":[{"core:sample_start":0,"core:frequency":1e9}],"annotations":[]}`))
	f.Add([]byte(`{"global":{"core:datatype":"ri16_le","core:sample_rate":8000,"core:offset":5,"core:num_channels":1,"core:trailing_bytes":2},"captures":[{"core:sample_start":3,"core:header_bytes":10}]}`))
	f.Add([]byte(`{"global":{"core:datatype":"cu16_le","core:sample_rate":1}}`))
	f.Add([]byte(`{"global":{"core:datatype":"ci16_le","core:dataset":"x.bin","core:sample_rate":2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := capture.ParseSigMFMeta(data)
		if err != nil {
			return
		}
		if !(info.SampleRate > 0) {
			t.Fatalf("accepted sample rate %g", info.SampleRate)
		}
		if info.NumChannels < 1 || info.NumChannels > capture.MaxChannels {
			t.Fatalf("accepted %d channels", info.NumChannels)
		}
		switch info.Datatype {
		case "ri16_le", "rf32_le", "ci16_le", "cf32_le", "cu8", "ci8":
		default:
			t.Fatalf("accepted datatype %q", info.Datatype)
		}
	})
}

func FuzzRaw(f *testing.F) {
	f.Add([]byte{}, uint8(0), uint16(1))
	f.Add(le16(1, 2, 3), uint8(1), uint16(7))
	f.Add(le32f(1, 2, 3), uint8(3), uint16(2))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7}, uint8(2), uint16(256))
	f.Fuzz(func(t *testing.T, data []byte, fi uint8, block uint16) {
		format := formats[int(fi)%len(formats)]
		complexFmt := format[0] == 'c'
		frame := 2
		if format[1:4] == "f32" {
			frame = 4
		}
		if complexFmt {
			frame *= 2
		}
		src, err := capture.NewRaw(bytes.NewReader(data), format, capture.Info{SampleRate: 1, Complex: complexFmt})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src, int(block)%1000+1)
		if errors.Is(err, capture.ErrFormat) && len(got) == 0 {
			return // a WAV header or SigMF metadata: refused as raw samples
		}
		ch := src.Info().Channels()
		if whole := len(data) / frame; len(got) != whole*ch {
			t.Fatalf("%s: %d values from %d bytes, want %d", format, len(got), len(data), whole*ch)
		}
		if left := len(data) % frame; (left == 0) != (err == io.EOF) || (left != 0 && !errors.Is(err, capture.ErrTruncated)) {
			t.Fatalf("%s: %d bytes left over, error %v", format, left, err)
		}
	})
}
