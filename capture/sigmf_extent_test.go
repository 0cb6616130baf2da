package capture_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/capture"
)

// TestSigMFCaptures (issue 27 item 7): the captures after the first are
// kept, their sample_start made relative to captures[0]'s (the first
// sample read), with their frequency and datetime; captures out of order
// or without a sample_start are refused.
func TestSigMFCaptures(t *testing.T) {
	meta := `{"global":{"core:datatype":"rf32_le","core:sample_rate":1000},"captures":[
		{"core:sample_start":2,"core:frequency":100e6,"core:datetime":"2026-01-02T03:04:05Z"},
		{"core:sample_start":5,"core:frequency":101e6,"core:datetime":"2026-01-02T03:05:00.5Z"},
		{"core:sample_start":7}]}`
	src, err := capture.OpenSigMF(writeSigMF(t, meta, le32f(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got := src.SignalMeta()
	want := []capture.Capture{
		{SampleStart: 3, FrequencyHz: 101e6, HasFrequency: true, Datetime: time.Date(2026, 1, 2, 3, 5, 0, 5e8, time.UTC)},
		{SampleStart: 5},
	}
	if !reflect.DeepEqual(got.Captures, want) || got.FrequencyHz != 100e6 || !got.Datetime.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("meta %+v, want captures %+v after 100 MHz at 03:04:05", got, want)
	}
	for _, tc := range []struct{ name, captures, want string }{
		{"out of order", `[{"core:sample_start":5},{"core:sample_start":3}]`, "captures[1] core:sample_start 3 does not follow captures[0]'s 5"},
		{"a repeated start", `[{"core:sample_start":0},{"core:sample_start":4},{"core:sample_start":4}]`, "captures[2] core:sample_start 4 does not follow"},
		{"no sample_start", `[{"core:sample_start":0},{"core:frequency":1}]`, "captures[1] has no core:sample_start"},
		{"a bad datetime", `[{"core:sample_start":0},{"core:sample_start":1,"core:datetime":"noon"}]`, "captures[1] core:datetime"},
	} {
		meta := `{"global":{"core:datatype":"rf32_le","core:sample_rate":1000},"captures":` + tc.captures + `}`
		if _, err := capture.OpenSigMF(writeSigMF(t, meta, le32f(0, 1, 2, 3, 4, 5, 6, 7, 8, 9))); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestSigMFSampleCountPastData (issue 27 item 8): metadata that refers to
// samples past the end of the data — an annotation's sample_start +
// sample_count, a point annotation's start, a capture's sample_start (or
// its sample_count, which some recorders write) — is refused with the
// field that does, for a data file and an archive member alike; what ends
// exactly at the end is accepted.
func TestSigMFSampleCountPastData(t *testing.T) {
	const global = `{"global":{"core:datatype":"cf32_le","core:sample_rate":1000,"core:trailing_bytes":4}`
	data := le32f(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10) // 5 complex samples and 4 trailing bytes
	tests := []struct {
		name, rest string
		want       string // "" = accepted
	}{
		{"annotation ends at the end", `,"annotations":[{"core:sample_start":1,"core:sample_count":4}]}`, ""},
		{"annotation one past", `,"annotations":[{"core:sample_start":1,"core:sample_count":5}]}`, "annotations[0] core:sample_start + core:sample_count reaches sample 6, past the end of the data"},
		{"point annotation past", `,"annotations":[{"core:sample_start":9}]}`, "annotations[0] core:sample_start reaches sample 9"},
		{"annotation before captures[0], past", `,"captures":[{"core:sample_start":2}],"annotations":[{"core:sample_start":0,"core:sample_count":99}]}`, "reaches sample 99"},
		{"annotation count overflows", `,"annotations":[{"core:sample_start":1,"core:sample_count":18446744073709551615}]}`, "out of range"},
		{"capture starts at the end", `,"captures":[{"core:sample_start":0},{"core:sample_start":5}]}`, ""},
		{"capture starts past the end", `,"captures":[{"core:sample_start":0},{"core:sample_start":6}]}`, "captures[1] core:sample_start reaches sample 6"},
		{"capture sample_count past", `,"captures":[{"core:sample_start":1,"core:sample_count":5}]}`, "captures[0] core:sample_start + core:sample_count reaches sample 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := writeSigMF(t, global+tt.rest, data)
			archive := filepath.Join(t.TempDir(), "rec.sigmf")
			writeTar(t, archive, "rec/rec.sigmf-meta", []byte(global+tt.rest), "rec/rec.sigmf-data", data)
			for _, path := range []string{base, archive} {
				src, err := capture.OpenSigMF(path)
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("%s: %v, want it accepted", path, err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
					t.Errorf("%s: %v, want %q", path, err, tt.want)
				}
				if src != nil {
					src.Close()
				}
			}
		})
	}
}
