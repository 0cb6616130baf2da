package capture_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
)

func TestSDRFormats(t *testing.T) {
	tests := []struct {
		format string
		in     []byte
		want   []float32
	}{
		// rtl_sdr: (v − 127.5)/127.5, so 0 and 255 are ±1 and 127/128 ±1/255.
		{capture.FormatCU8, []byte{0, 255, 127, 128}, []float32{-1, 1, float32(-0.5 / 127.5), float32(0.5 / 127.5)}},
		// HackRF: v/128.
		{capture.FormatCS8, []byte{0x80, 0x7f, 0, 0xc0}, []float32{-1, 127.0 / 128, 0, -0.5}},
		{"ci8", []byte{0x40, 0xff}, []float32{0.5, -1.0 / 128}},
	}
	for _, tc := range tests {
		src, err := capture.NewRaw(bytes.NewReader(tc.in), tc.format, capture.Info{SampleRate: 2.4e6, Complex: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readAll(src, 2)
		if err != io.EOF || !equal(got, tc.want) {
			t.Errorf("%s: got %v %v, want %v", tc.format, got, err, tc.want)
		}
	}
	if _, err := capture.NewRaw(bytes.NewReader(nil), capture.FormatCU8, capture.Info{SampleRate: 1}); err == nil {
		t.Error("cu8 as a real stream accepted")
	}
}

// TestRawChannels reads a 4-channel complex file frame by frame; a
// partial frame at the end is reported as such.
func TestRawChannels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cf32")
	var vals []float32
	for i := range 3 * 8 { // 3 frames of 4 channels × (I, Q)
		vals = append(vals, float32(i))
	}
	os.WriteFile(path, append(le32f(vals...), 1, 2, 3, 4), 0o644)
	src, err := capture.Open(context.Background(), path, capture.FileOptions{Format: capture.FormatCF32, SampleRate: 1e6, Channels: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if info := src.Info(); info.ChannelCount() != 4 || info.Channels() != 8 || !info.Complex {
		t.Fatalf("info %+v", info)
	}
	if n, ok := src.(interface{ Len() (int64, bool) }).Len(); !ok || n != 3 {
		t.Errorf("Len %d %v, want 3 frames", n, ok)
	}
	got, err := readAll(src, 8)
	if !equal(got, vals) || !errors.Is(err, capture.ErrTruncated) || !strings.Contains(err.Error(), "not a whole 32-byte 4-channel cf32_le frame") {
		t.Errorf("got %d values, %v", len(got), err)
	}
	if _, err := capture.Open(context.Background(), path, capture.FileOptions{Format: capture.FormatCF32, SampleRate: 1, Channels: 4097}); err == nil {
		t.Error("4097 channels accepted")
	}
}

// TestRawRefusesContainers: a raw format on a WAV file or on SigMF
// metadata is refused, from a file and from a stream.
func TestRawRefusesContainers(t *testing.T) {
	dir := t.TempDir()
	wav := buildWAV(wavSpec{tag: 1, chans: 1, bits: 16, rate: 8000, data: le16(1, 2)})
	meta := []byte("\n  {\"global\": {\"core:datatype\": \"cf32_le\"}}")
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"wav", wav, "is a WAV file"},
		{"sigmf-meta", meta, "is SigMF metadata"},
	} {
		path := filepath.Join(dir, tc.name+".bin")
		os.WriteFile(path, tc.data, 0o644)
		if _, err := capture.OpenFile(path, capture.FormatRI16, 8000); err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, capture.ErrFormat) {
			t.Errorf("%s file: %v", tc.name, err)
		}
		src, err := capture.NewRaw(bytes.NewReader(tc.data), capture.FormatRI16, capture.Info{SampleRate: 8000})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readAll(src, 16); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s stream: %v", tc.name, err)
		}
	}
	// Raw samples that merely start with "{" or "RIFF" are fine.
	src, _ := capture.NewRaw(bytes.NewReader([]byte("RIFF1234")), capture.FormatRI16, capture.Info{SampleRate: 1})
	if got, err := readAll(src, 4); err != io.EOF || len(got) != 4 {
		t.Errorf("RIFF without WAVE: %v %v", got, err)
	}
}

// TestSigMFChannelsAndMeta: a 3-channel recording read from its
// captures[0] sample_start, its descriptive fields and annotations kept,
// the annotations counted from the first sample read.
func TestSigMFChannelsAndMeta(t *testing.T) {
	base := writeSigMF(t, `{"global":{"core:datatype":"ri16_le","core:sample_rate":48000,"core:version":"1.0.0","core:num_channels":3,
		"core:author":"me","core:hw":"adc board","core:description":"three mics",
		"core:extensions":[{"name":"antenna","version":"1.0.0","optional":true}]},
		"captures":[{"core:sample_start":1,"core:frequency":0,"core:datetime":"2026-03-04T05:06:07.25Z"}],
		"annotations":[{"core:sample_start":0,"core:sample_count":1,"core:label":"gone"},
			{"core:sample_start":0,"core:sample_count":3,"core:label":"cut"},
			{"core:sample_start":2,"core:label":"here","antenna:gain":3}]}`,
		le16(1, 2, 3, 4, 5, 6, 7, 8, 9))
	src, err := capture.OpenSigMF(base)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if info := src.Info(); info.ChannelCount() != 3 || info.Complex {
		t.Fatalf("info %+v", info)
	}
	got, err := readAll(src, 3)
	for i := range got {
		got[i] *= 32768
	}
	if err != io.EOF || !equal(got, []float32{4, 5, 6, 7, 8, 9}) {
		t.Fatalf("got %v %v", got, err)
	}
	m := src.SignalMeta()
	if m.Author != "me" || m.HW != "adc board" || m.Description != "three mics" || !m.HasFrequency || m.FrequencyHz != 0 ||
		!m.Datetime.Equal(time.Date(2026, 3, 4, 5, 6, 7, 250000000, time.UTC)) || len(m.Extensions) != 1 {
		t.Errorf("meta %+v", m)
	}
	if len(m.Annotations) != 2 {
		t.Fatalf("annotations %+v", m.Annotations)
	}
	a, b := m.Annotations[0], m.Annotations[1]
	if a.SampleStart != 0 || a.SampleCount != 2 || string(a.Fields["core:label"]) != `"cut"` {
		t.Errorf("cut annotation %+v", a)
	}
	if b.SampleStart != 1 || b.HasCount || string(b.Fields["antenna:gain"]) != "3" {
		t.Errorf("point annotation %+v", b)
	}
	var ms capture.MetaSource = src
	_ = ms
}

// TestIIOScales: each channel's scale and offset (its own or its type's)
// are recorded so that value × gain + bias is (raw + offset) × scale; with
// ApplyScale the values are physical already.
func TestIIOScales(t *testing.T) {
	elems := []elem{{name: "voltage0", typ: "le:s16/16>>0", index: 0}, {name: "voltage1", typ: "le:u12/16>>0", index: 1}}
	raw0, raw1 := int16(-1000), uint16(3000)
	data := []byte{byte(raw0), byte(uint16(raw0) >> 8), byte(raw1), byte(raw1 >> 8)}
	for _, apply := range []bool{false, true} {
		f := newFakeIIO(t, t.TempDir(), 0, "ads1115", elems)
		f.set(t, "in_voltage0_scale", "0.125")
		f.set(t, "in_voltage_scale", "2")
		f.set(t, "in_voltage1_offset", "-5")
		f.data(t, data)
		cfg := f.config("voltage0", "voltage1")
		cfg.ApplyScale = apply
		d, err := capture.OpenIIO(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if d.Info().ChannelCount() != 2 || d.Info().Complex {
			t.Fatalf("info %+v", d.Info())
		}
		got := make([]float32, 2)
		d.Read(context.Background(), got)
		phys := []float64{float64(raw0) * 0.125, (float64(raw1) - 5) * 2}
		b, _ := json.Marshal(d.SignalMeta().Global["sigproc:iio"])
		var rec struct {
			Channels []struct {
				Name       string
				Scale      float64
				Offset     float64
				Applied    bool
				Gain, Bias float64
				Unit       string
			}
		}
		json.Unmarshal(b, &rec)
		for c, p := range phys {
			e := rec.Channels[c]
			if e.Applied != apply || e.Unit != "mV" || (c == 1 && (e.Scale != 2 || e.Offset != -5)) {
				t.Errorf("apply %v: channel %d record %+v", apply, c, e)
			}
			if v := float64(got[c])*e.Gain + e.Bias; math.Abs(v-p) > 1e-3 {
				t.Errorf("apply %v: channel %d: value %v × gain + bias = %v, want %v", apply, c, got[c], v, p)
			}
			if apply && math.Abs(float64(got[c])-p) > 1e-3 {
				t.Errorf("apply_scale: channel %d = %v, want %v", c, got[c], p)
			}
		}
		if first := d.FirstSampleTime(); first.IsZero() || time.Since(first) > time.Minute {
			t.Errorf("first sample time %v", first)
		}
		d.Close()
	}
	// apply_scale without a scale attribute is refused.
	f := newFakeIIO(t, t.TempDir(), 0, "adc", elems)
	f.data(t, nil)
	cfg := f.config("voltage1")
	cfg.ApplyScale = true
	if _, err := capture.OpenIIO(cfg); err == nil || !strings.Contains(err.Error(), "apply_scale needs one") {
		t.Errorf("no scale: %v", err)
	}
}
