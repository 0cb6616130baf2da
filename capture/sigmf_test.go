package capture_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sigproc/sigproc/capture"
)

// writeSigMF writes base.sigmf-meta and base.sigmf-data in a temp dir and
// returns base.
func writeSigMF(t *testing.T, meta string, data []byte) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "rec")
	if err := os.WriteFile(base+".sigmf-meta", []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if data != nil {
		if err := os.WriteFile(base+".sigmf-data", data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

func TestSigMFMetaHonoured(t *testing.T) {
	data := le16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	tests := []struct {
		name    string
		meta    string
		data    []byte
		rate    float64
		complex bool
		want    []float32 // in units of 1/32768
	}{
		{"whole file", `{"global":{"core:datatype":"ri16_le","core:sample_rate":1000,"core:version":"1.0.0"},"captures":[{"core:sample_start":0}],"annotations":[]}`,
			data, 1000, false, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"sample_start skips samples", `{"global":{"core:datatype":"ci16_le","core:sample_rate":2e6},"captures":[{"core:sample_start":2,"core:frequency":915e6}]}`,
			data, 2e6, true, []float32{4, 5, 6, 7, 8, 9, 10, 11}},
		{"header and trailing bytes", `{"global":{"core:datatype":"ri16_le","core:sample_rate":5,"core:trailing_bytes":4},"captures":[{"core:sample_start":1,"core:header_bytes":6}]}`,
			data, 5, false, []float32{4, 5, 6, 7, 8, 9}},
		{"offset is informational", `{"global":{"core:datatype":"ri16_le","core:sample_rate":5,"core:offset":1000},"captures":[{"core:sample_start":10}]}`,
			data, 5, false, []float32{10, 11}},
		{"no captures", `{"global":{"core:datatype":"ci16_le","core:sample_rate":5,"core:num_channels":1}}`,
			data[:8], 5, true, []float32{0, 1, 2, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := writeSigMF(t, tc.meta, tc.data)
			for _, p := range []string{base + ".sigmf-meta", base + ".sigmf-data", base} {
				src, err := capture.OpenSigMF(p)
				if err != nil {
					t.Fatalf("OpenSigMF(%s): %v", p, err)
				}
				if info := src.Info(); info.SampleRate != tc.rate || info.Complex != tc.complex {
					t.Fatalf("Info %+v, want rate %g complex %v", info, tc.rate, tc.complex)
				}
				got, err := readAll(src, 3)
				for i := range got {
					got[i] *= 32768
				}
				if err != io.EOF || !equal(got, tc.want) {
					t.Fatalf("%s: got %v, %v; want %v", p, got, err, tc.want)
				}
				src.Close()
			}
		})
	}
}

func TestSigMFMetaFields(t *testing.T) {
	base := writeSigMF(t, `{"global":{"core:datatype":"cf32_le","core:sample_rate":48000,"core:version":"1.2.0",
		"core:description":"test","core:offset":7},"captures":[{"core:sample_start":1,"core:frequency":1.5e9}]}`, le32f(1, 2, 3, 4))
	src, err := capture.OpenSigMF(base)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m := src.Meta()
	want := capture.SigMFInfo{Version: "1.2.0", Datatype: "cf32_le", SampleRate: 48000, Offset: 7, SampleStart: 1, FrequencyHz: 1.5e9, Description: "test", NumChannels: 1}
	want.Meta = capture.Meta{Description: "test", FrequencyHz: 1.5e9, HasFrequency: true}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("Meta %+v, want %+v", m, want)
	}
	if got, err := readAll(src, 10); err != io.EOF || !equal(got, []float32{3, 4}) {
		t.Fatalf("got %v %v", got, err)
	}
}

func TestSigMFDataset(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rec.sigmf-meta"), []byte(`{"global":{"core:datatype":"rf32_le","core:sample_rate":1,"core:dataset":"capture.bin"}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "capture.bin"), le32f(5, 6), 0o644)
	src, err := capture.OpenSigMF(filepath.Join(dir, "rec.sigmf-meta"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if got, err := readAll(src, 10); err != io.EOF || !equal(got, []float32{5, 6}) {
		t.Fatalf("got %v %v", got, err)
	}
}

func TestSigMFErrors(t *testing.T) {
	good := le32f(1, 2, 3, 4)
	tests := []struct {
		name string
		meta string
		data []byte
		want string
		is   error
	}{
		{"cu16", `{"global":{"core:datatype":"cu16_le","core:sample_rate":1}}`, good, `unsupported core:datatype "cu16_le" (supported: ri16_le, rf32_le, ci16_le, cf32_le`, capture.ErrUnsupported},
		{"big-endian", `{"global":{"core:datatype":"cf32_be","core:sample_rate":1}}`, good, `unsupported core:datatype "cf32_be"`, capture.ErrUnsupported},
		{"ri8", `{"global":{"core:datatype":"ri8","core:sample_rate":1}}`, good, `unsupported core:datatype "ri8"`, capture.ErrUnsupported},
		{"nonsense datatype", `{"global":{"core:datatype":"float","core:sample_rate":1}}`, good, `"float"`, capture.ErrUnsupported},
		{"missing datatype", `{"global":{"core:sample_rate":1}}`, good, "core:datatype is missing", capture.ErrFormat},
		{"missing sample_rate", `{"global":{"core:datatype":"cf32_le"}}`, good, "core:sample_rate is missing", capture.ErrFormat},
		{"zero sample_rate", `{"global":{"core:datatype":"cf32_le","core:sample_rate":0}}`, good, "core:sample_rate 0", capture.ErrFormat},
		{"string sample_rate", `{"global":{"core:datatype":"cf32_le","core:sample_rate":"1e6"}}`, good, "not valid SigMF JSON", capture.ErrFormat},
		{"4097 channels", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1,"core:num_channels":4097}}`, good, "unsupported core:num_channels 4097", capture.ErrUnsupported},
		{"version 2", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1,"core:version":"2.0.0"}}`, good, `unsupported core:version "2.0.0"`, capture.ErrUnsupported},
		{"no global", `{"captures":[]}`, good, `no "global" object`, capture.ErrFormat},
		{"bad json", `{"global":`, good, "not valid SigMF JSON", capture.ErrFormat},
		{"metadata only", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1,"core:metadata_only":true}}`, good, "metadata_only", capture.ErrUnsupported},
		{"dataset path", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1,"core:dataset":"../x"}}`, good, `core:dataset "../x"`, capture.ErrFormat},
		{"negative sample_start", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1},"captures":[{"core:sample_start":-1}]}`, good, "not valid SigMF JSON", capture.ErrFormat},
		{"later header_bytes", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1},"captures":[{"core:sample_start":0},{"core:sample_start":1,"core:header_bytes":8}]}`, good, "core:header_bytes in captures[1]", capture.ErrUnsupported},
		{"sample_start past end", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1},"captures":[{"core:sample_start":3}]}`, good, "is 16 bytes, fewer than the 24 header and skipped bytes", capture.ErrFormat},
		{"missing data file", `{"global":{"core:datatype":"cf32_le","core:sample_rate":1}}`, nil, "rec.sigmf-data", fs.ErrNotExist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := writeSigMF(t, tc.meta, tc.data)
			src, err := capture.OpenSigMF(base + ".sigmf-meta")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.is) {
				t.Fatalf("error %v, want it to contain %q and match %v", err, tc.want, tc.is)
			}
			if src != nil {
				t.Fatal("non-nil source with error")
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "gone.sigmf-meta")
	if _, err := capture.OpenSigMF(missing); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing meta: %v", err)
	}
}

func TestSigMFTruncatedData(t *testing.T) {
	base := writeSigMF(t, `{"global":{"core:datatype":"ci16_le","core:sample_rate":1}}`, append(le16(1, 2), 3))
	src, err := capture.OpenSigMF(base)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := readAll(src, 8)
	if len(got) != 2 || !errors.Is(err, capture.ErrTruncated) || !strings.Contains(err.Error(), "rec.sigmf-data") {
		t.Fatalf("got %v, %v; want 2 values then ErrTruncated naming the data file", got, err)
	}
}

// writeTar writes a tar archive of the named members, in order.
func writeTar(t *testing.T, path string, members ...any) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i < len(members); i += 2 {
		body := members[i+1].([]byte)
		if err := tw.WriteHeader(&tar.Header{Name: members[i].(string), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSigMFArchive(t *testing.T) {
	meta := []byte(`{"global":{"core:datatype":"cf32_le","core:sample_rate":8},"captures":[{"core:sample_start":1}]}`)
	data := le32f(1, 2, 3, 4, 5, 6)
	for _, order := range []string{"meta first", "data first"} {
		path := filepath.Join(t.TempDir(), "rec.sigmf")
		if order == "meta first" {
			writeTar(t, path, "rec/README", []byte("x"), "rec/rec.sigmf-meta", meta, "rec/rec.sigmf-data", data)
		} else {
			writeTar(t, path, "rec/rec.sigmf-data", data, "rec/rec.sigmf-meta", meta)
		}
		src, err := capture.OpenFile(path, "", 0)
		if err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		got, err := readAll(src, 2)
		if err != io.EOF || !equal(got, []float32{3, 4, 5, 6}) || src.Info().SampleRate != 8 {
			t.Fatalf("%s: got %v, %v, %+v", order, got, err, src.Info())
		}
		src.Close()
	}
	// An archive cut inside its data member: the whole samples that are
	// there, then ErrTruncated saying how much of the data came.
	path := filepath.Join(t.TempDir(), "cut.sigmf")
	writeTar(t, path, "rec/rec.sigmf-meta", meta, "rec/rec.sigmf-data", le32f(1, 2, 3, 4, 5, 6, 7, 8, 9, 10))
	b, _ := os.ReadFile(path)
	dataAt := bytes.Index(b, le32f(1))
	os.WriteFile(path, b[:dataAt+4*7], 0o644) // 3.5 samples of cf32
	src, err := capture.OpenFile(path, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(src, 2)
	src.Close()
	if !equal(got, []float32{3, 4, 5, 6}) || !errors.Is(err, capture.ErrTruncated) || !strings.Contains(err.Error(), "declares 32 data bytes but input ends after 20") {
		t.Fatalf("cut archive: got %v, %v", got, err)
	}
	path = filepath.Join(t.TempDir(), "bad.sigmf")
	writeTar(t, path, "x/x.sigmf-meta", meta)
	if _, err := capture.OpenSigMF(path); err == nil || !strings.Contains(err.Error(), "no member x/x.sigmf-data") {
		t.Fatalf("archive without data: %v", err)
	}
}
