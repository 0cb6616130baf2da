package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeIIODevice builds a sysfs tree and dev directory for iio:device0
// ("ads1015", two 12-bit channels and an enabled timestamp) whose character
// device is a regular file holding data. It returns the two roots.
func fakeIIODevice(t *testing.T, data []byte) (sysfs, dev string) {
	t.Helper()
	root := t.TempDir()
	sysfs, dev = filepath.Join(root, "sys"), filepath.Join(root, "dev")
	dir := filepath.Join(sysfs, "iio:device0")
	files := map[string]string{
		"name":               "ads1015",
		"sampling_frequency": "1600",
		"buffer/enable":      "1",
		"buffer/length":      "2",
	}
	for i, e := range []struct{ name, typ string }{{"voltage0", "le:s12/16>>4"}, {"voltage1", "le:s12/16>>4"}, {"timestamp", "le:s64/64>>0"}} {
		files["scan_elements/in_"+e.name+"_en"] = "1"
		files["scan_elements/in_"+e.name+"_type"] = e.typ
		files["scan_elements/in_"+e.name+"_index"] = fmt.Sprint(i)
	}
	for rel, v := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dev, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dev, "iio:device0"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return sysfs, dev
}

func sysfsAttr(t *testing.T, sysfs, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sysfs, "iio:device0", rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// iioScans encodes n scans of (I, Q) 12-bit values, left-justified in
// little-endian 16-bit words with noise in the unused low nibble, and
// returns the values sigproc must produce for them.
func iioScans(n int) ([]byte, []float32) {
	var data []byte
	var want []float32
	for i := range n {
		iv, qv := i%4096-2048, 2047-(3*i)%4096
		iw, qw := uint16(int16(iv)<<4)|uint16(i%16), uint16(int16(qv)<<4)
		data = append(data, byte(iw), byte(iw>>8), byte(qw), byte(qw>>8))
		want = append(want, float32(iv)/2048, float32(qv)/2048)
	}
	return data, want
}

// TestRunIIOToSigMF: fake IIO device -> sigproc run (CPU, identity filter)
// -> SigMF, bit-exact.
func TestRunIIOToSigMF(t *testing.T) {
	data, want := iioScans(5000)
	sysfs, dev := fakeIIODevice(t, data)
	base := filepath.Join(t.TempDir(), "iq")
	cfg := writeConfig(t, fmt.Sprintf(`
source:
  type: iio
  device: ads1015
  channels: [voltage0, voltage1]
  complex: true
  sample_rate: 3300
  buffer_length: 1024
  sysfs_root: %s
  dev_root: %s
  num_samples: 4000
block_size: 64
filter: {taps: [1]}
backend: cpu
sink: {type: sigmf, path: %s}
`, sysfs, dev, base))
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--log-level", "warn")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "samples in 4000  out 4000  blocks 63  drops 0") {
		t.Errorf("summary = %q", stdout)
	}
	got := readF32(t, base+".sigmf-data")
	if len(got) != 2*4000 {
		t.Fatalf("%d values, want %d", len(got), 2*4000)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("value %d = %v, want %v", i, got[i], want[i])
		}
	}
	var m struct {
		Global map[string]any `json:"global"`
	}
	meta, err := os.ReadFile(base + ".sigmf-meta")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		t.Fatal(err)
	}
	if m.Global["core:datatype"] != "cf32_le" || m.Global["core:sample_rate"] != 3300.0 {
		t.Errorf("meta global = %v", m.Global)
	}
	// The device's scales are recorded, and the first sample's time.
	iio, _ := m.Global["sigproc:iio"].(map[string]any)
	if iio == nil || iio["device"] != "iio:device0" || len(iio["channels"].([]any)) != 2 {
		t.Errorf("sigproc:iio = %v", m.Global["sigproc:iio"])
	}
	var caps struct {
		Captures []map[string]any `json:"captures"`
	}
	json.Unmarshal(meta, &caps)
	if dt, _ := caps.Captures[0]["core:datetime"].(string); !strings.Contains(dt, "T") {
		t.Errorf("captures[0] = %v, want a core:datetime", caps.Captures[0])
	}
	for rel, want := range map[string]string{
		"buffer/enable":                 "0", // disabled again when the run ended
		"buffer/length":                 "1024",
		"sampling_frequency":            "3300",
		"scan_elements/in_timestamp_en": "0",
	} {
		if got := sysfsAttr(t, sysfs, rel); got != want {
			t.Errorf("%s = %q after the run, want %q", rel, got, want)
		}
	}
}

// TestRunIIODeviceVanishes: an unbounded run whose device goes away inside a
// scan fails with a clear error, and every whole sample before it is in the
// output.
func TestRunIIODeviceVanishes(t *testing.T) {
	data, want := iioScans(1000)
	sysfs, dev := fakeIIODevice(t, append(data, 0x10))
	base := filepath.Join(t.TempDir(), "iq")
	cfg := writeConfig(t, fmt.Sprintf(`
source: {type: iio, device: iio:device0, channels: [voltage0, voltage1], sysfs_root: %s, dev_root: %s}
block_size: 256
overrun: block
filter: {taps: [1]}
sink: {type: sigmf, path: %s}
`, sysfs, dev, base))
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", cfg, "--log-level", "error")
	if err == nil {
		t.Fatalf("run succeeded; want the device error\n%s", stdout)
	}
	for _, s := range []string{"iio: iio:device0 disappeared after 1000 scans", "truncated input: the last 1 byte(s) are not a whole 4-byte scan"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q\n%s", err, s, stderr)
		}
	}
	if !strings.HasPrefix(stdout, "samples in 1000  out 1000 ") {
		t.Errorf("summary = %q", stdout)
	}
	got := readF32(t, base+".sigmf-data")
	if len(got) != len(want) {
		t.Fatalf("%d values in the output, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("value %d = %v, want %v", i, got[i], want[i])
		}
	}
	if got := sysfsAttr(t, sysfs, "buffer/enable"); got != "0" {
		t.Errorf("buffer/enable = %q after the run, want 0", got)
	}
}

// TestShippedIIOConfigOnFakeDevice runs configs/jetson-iio.yaml as shipped,
// with only its (commented) sysfs_root and dev_root pointed at a fake device.
func TestShippedIIOConfigOnFakeDevice(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join("..", "..", "configs", "jetson-iio.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := iioScans(1000)
	sysfs, dev := fakeIIODevice(t, data)
	y := string(shipped)
	for old, repl := range map[string]string{
		"  # sysfs_root: /sys/bus/iio/devices": "  sysfs_root: " + sysfs,
		"  # dev_root: /dev":                   "  dev_root: " + dev,
	} {
		if !strings.Contains(y, old) {
			t.Fatalf("jetson-iio.yaml no longer has %q", old)
		}
		y = strings.Replace(y, old, repl, 1)
	}
	base := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := execute(t, nil, nil, "run", "-c", writeConfig(t, y), "--num-samples", "990", "--sink-path", base, "--log-level", "warn")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if !strings.HasPrefix(stdout, "samples in 990  out 990  blocks 3  drops 0") {
		t.Errorf("summary = %q", stdout)
	}
	if got := readF32(t, base+".sigmf-data"); len(got) != 990 {
		t.Errorf("%d samples, want 990", len(got))
	}
	if got := sysfsAttr(t, sysfs, "scan_elements/in_voltage1_en"); got != "0" {
		t.Errorf("voltage1 still enabled for a one-channel config")
	}
}
