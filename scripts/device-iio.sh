#!/usr/bin/env bash
# Fake IIO ADC (sysfs tree + a data file as /dev/iio:device0) through the
# CUDA zero-copy backend and through the CPU backend; the outputs must agree.
# Run on the GPU machine; logs to $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
R=$(mktemp -d)
python3 - "$R" <<'PY'
import os, sys, numpy as np
root = sys.argv[1]; d = os.path.join(root, "sys", "iio:device0")
files = {"name": "ads1015", "sampling_frequency": "1000000", "buffer/enable": "0", "buffer/length": "2"}
for i, ch in enumerate(["voltage0", "voltage1"]):
    files[f"scan_elements/in_{ch}_en"] = "0"; files[f"scan_elements/in_{ch}_type"] = "le:s12/16>>4"; files[f"scan_elements/in_{ch}_index"] = str(i)
for rel, v in files.items():
    p = os.path.join(d, rel); os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "w").write(v + "\n")
os.makedirs(os.path.join(root, "dev"), exist_ok=True)
rng = np.random.default_rng(1); n = 1 << 20
v = rng.integers(-2048, 2048, size=2 * n).astype(np.int16)
(v << 4).astype("<i2").tofile(os.path.join(root, "dev", "iio:device0"))
PY
for be in cpu cuda; do
cat > $R/$be.yaml <<Y
source: {type: iio, device: ads1015, channels: [voltage0, voltage1], sample_rate: 1000000, sysfs_root: $R/sys, dev_root: $R/dev}
block_size: 256
overrun: block
filter: {design: {type: lowpass, cutoff_hz: 100000, num_taps: 64, window: hamming}}
backend: $be
cuda: {transport: zero-copy}
sink: {type: sigmf, path: $R/out-$be}
Y
echo "== backend $be"; ./build/sigproc-cuda run -c $R/$be.yaml 2>&1 | grep -vE "^\s*$" | tail -4
done
python3 -c "
import numpy as np; a=np.fromfile('$R/out-cuda.sigmf-data',np.complex64); b=np.fromfile('$R/out-cpu.sigmf-data',np.complex64)
print('cuda', len(a), 'cpu', len(b), 'complex samples; max |diff|', np.abs(a-b).max(), 'rms', np.sqrt((np.abs(b)**2).mean()))"
cp $R/out-cuda.sigmf-meta $OUT/iio-cuda.sigmf-meta
