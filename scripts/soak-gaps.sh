#!/usr/bin/env bash
# The data-safety soak: a paced source faster than the filter (overrun: drop)
# runs for DURATION into a SigMF recording, while RSS and goroutines are
# sampled from /metrics every 10 s. At the end the recording's capture
# segments and sigproc:dropped_samples annotations are checked against the
# summary: every dropped sample must be accounted for.
#
#   scripts/soak-gaps.sh [DURATION] [OUTDIR]     # default 10m, /tmp/sigproc-soak
#
# Writes OUTDIR/samples.csv (t_s, rss_bytes, goroutines, samples_in, dropped),
# OUTDIR/summary.txt, OUTDIR/check.txt; the data file is removed at the end
# unless KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-10m}
OUT=${2:-/tmp/sigproc-soak}
ADDR=${ADDR:-127.0.0.1:19150}
RATE=${RATE:-4e6}
TAPS=${TAPS:-16385}
BLOCK=${BLOCK:-16384}
mkdir -p "$OUT"
rm -f "$OUT"/rec.sigmf-* "$OUT"/samples.csv
CGO_ENABLED=0 go build -o "$OUT/sigproc" ./cmd/sigproc
cat > "$OUT/soak.yaml" <<YAML
# A source faster than the filter: the ring overruns and blocks are dropped.
source: {type: synthetic, sample_rate: $RATE, signal: noise, noise_std: 0.3, seed: 1, paced: true}
block_size: $BLOCK
ring_slots: 16
overrun: drop
filter:
  method: direct # slow on purpose: the filter must fall behind
  design: {type: lowpass, cutoff_hz: 1e5, num_taps: $TAPS}
sink: {type: sigmf, path: $OUT/rec, format: ri16_le}
metrics: {listen: "$ADDR"}
YAML
"$OUT/sigproc" version > "$OUT/version.txt"
"$OUT/sigproc" run -c "$OUT/soak.yaml" --duration "$DURATION" --log-level warn \
  > "$OUT/summary.txt" 2> "$OUT/stderr.txt" &
pid=$!
echo "t_s,rss_bytes,goroutines,samples_in,dropped_samples" > "$OUT/samples.csv"
start=$(date +%s)
scrape() {
  curl -s --max-time 5 "http://$ADDR/metrics" | awk -v t="$1" '
    /^process_resident_memory_bytes /{rss=$2} /^go_goroutines /{g=$2}
    /^sigproc_samples_in_total /{i=$2} /^sigproc_dropped_capture_samples_total /{d=$2}
    END{ if (rss != "") printf "%s,%.0f,%d,%.0f,%.0f\n", t, rss, g, i, d }'
}
sleep 2
while kill -0 "$pid" 2>/dev/null; do
  scrape $(( $(date +%s) - start )) >> "$OUT/samples.csv" || true
  for _ in $(seq 10); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
done
wait "$pid"; rc=$?
echo "exit $rc" >> "$OUT/summary.txt"
/usr/bin/python3 - "$OUT" > "$OUT/check.txt" <<'PY'
import json, os, re, sys
out = sys.argv[1]
line = open(os.path.join(out, "summary.txt")).readline()
m = re.search(r"samples in (\d+)  out (\d+)  blocks (\d+)  drops (\d+) \((\d+) samples\)", line)
sin, sout, blocks, dropb, drops = map(int, m.groups())
fm = re.search(r"filter drops (\d+) \((\d+) samples\)", line)
fdrops = int(fm.group(2))
meta = json.load(open(os.path.join(out, "rec.sigmf-meta")))
caps, notes = meta["captures"], meta["annotations"]
annotated = sum(a["sigproc:dropped_samples"] for a in notes)
size = os.path.getsize(os.path.join(out, "rec.sigmf-data"))
ok = True
def check(cond, what):
    global ok
    ok &= cond
    print(("ok   " if cond else "FAIL ") + what)
check({"name": "sigproc", "version": "1.0.0", "optional": True} in meta["global"]["core:extensions"], "core:extensions declares sigproc")
check(annotated == drops + fdrops, f"annotated dropped samples {annotated} == summary drops {drops} + filter drops {fdrops}")
check(sin == sout + annotated, f"samples in {sin} == out {sout} + annotated {annotated}")
check(size == 2 * sout, f"data file {size} bytes == out {sout} x 2 (ri16_le)")
starts = [c["core:sample_start"] for c in caps]
check(starts == sorted(starts) and starts[0] == 0, "capture segments start at 0, in order")
inner = [a for a in notes if "end of the run" not in a["core:comment"]]
check([c["core:sample_start"] for c in caps[1:]] == [a["core:sample_start"] for a in inner], "one capture segment per gap, at the annotation's index")
check(all("core:datetime" in c for c in caps), "every capture segment has core:datetime")
# The datetime of each segment is the start time plus its input index over the rate.
from datetime import datetime
def ts(s):
    s = s.rstrip("Z"); frac = s.split(".")[1] if "." in s else "0"
    return datetime.fromisoformat(s.split(".")[0]).timestamp() + float("0." + frac)
rate = meta["global"]["core:sample_rate"]
t0 = ts(caps[0]["core:datetime"]); dropped_before = 0; worst = 0.0
for c, a in zip(caps[1:], inner):
    dropped_before += a["sigproc:dropped_samples"]
    want = t0 + (c["core:sample_start"] + dropped_before) / rate
    worst = max(worst, abs(ts(c["core:datetime"]) - want))
check(worst < 1e-6, f"segment datetimes = start + input index / rate (worst error {worst:.2e} s)")
print(f"captures {len(caps)}  annotations {len(notes)}  annotated {annotated}  drop blocks {dropb}  meta bytes {os.path.getsize(os.path.join(out, 'rec.sigmf-meta'))}")
print("PASS" if ok else "FAIL")
PY
cat "$OUT/summary.txt" "$OUT/check.txt"
[ "${KEEP:-0}" = 1 ] || rm -f "$OUT/rec.sigmf-data"
