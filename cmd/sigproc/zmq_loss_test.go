package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigproc/sigproc/internal/sigmftest"
	"github.com/sigproc/sigproc/internal/zmq"
)

// TestZMQLostSamplesRecorded: samples a pass_tags sender numbered but that
// never arrived (a gap in the header offsets, as a pub queue overflowing
// makes) are a gap of the SigMF recording, at the sample where they are
// missing and with their count, like a ring overrun's; the data holds
// what did arrive.
func TestZMQLostSamplesRecorded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snd, err := zmq.Bind("tcp://127.0.0.1:*", zmq.Push, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer snd.Close()
	const per = 1000
	offsets := []uint64{0, 1000, 3000, 4000, 5000, 6000} // 2000..2999 lost
	go func() {
		if snd.WaitPeers(ctx, 1) != nil {
			return
		}
		for _, off := range offsets {
			msg := zmq.AppendTagHeader(make([]byte, zmq.HeadRoom), off, nil) // Send frames it in the room
			for i := range per {
				msg = binary.LittleEndian.AppendUint32(msg, math.Float32bits(float32(int(off)+i)))
			}
			if _, _, err := snd.Send(ctx, msg); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	base := filepath.Join(t.TempDir(), "rec")
	cfg := writeConfig(t, `source:
  type: zmq
  endpoint: `+snd.Endpoint()+`
  pattern: pull
  format: rf32_le
  sample_rate: 1000
  pass_tags: true
block_size: 1000
filter: {taps: [1]}
sink: {type: sigmf, path: `+base+`}
`)
	code, out, errs := runCLI(t, "", "run", "-c", cfg, "--num-samples", "6000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "lost before the source 1000") {
		t.Errorf("summary %q does not count the 1000 samples lost", out)
	}
	y := readRawF32(t, base+".sigmf-data")
	if len(y) != 6000 {
		t.Fatalf("%d samples written, want 6000", len(y))
	}
	for i, v := range y {
		want := float32(i)
		if i >= 2000 {
			want += 1000
		}
		if v != want {
			t.Fatalf("sample %d = %g, want %g", i, v, want)
		}
	}
	b, err := os.ReadFile(base + ".sigmf-meta")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Captures    []map[string]any `json:"captures"`
		Annotations []map[string]any `json:"annotations"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Captures) != 2 || m.Captures[1]["core:sample_start"] != 2000.0 {
		t.Errorf("captures %v, want a second at sample 2000", m.Captures)
	}
	if len(m.Annotations) != 1 || m.Annotations[0]["core:sample_start"] != 2000.0 || m.Annotations[0]["sigproc:dropped_samples"] != 1000.0 {
		t.Errorf("annotations %v, want 1000 samples dropped before sample 2000", m.Annotations)
	}
	sigmftest.ValidateFile(t, base+".sigmf-meta")
}
