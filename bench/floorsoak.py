#!/usr/bin/env python3
"""floorsoak: patch ../shared/zc-floor/floor.cu into a soak of its minimal
kernel, the reference beside a zero-copy soak (issue 31).

    python3 bench/floorsoak.py .device/floor.cu /tmp/floorsoak.cu
    nvcc -O2 -arch=sm_90 -o /tmp/floorsoak /tmp/floorsoak.cu
    FLOOR_NO_PP=1 /tmp/floorsoak 15000000 20000 64   # 5 minutes at one block per 20 us

Each edit must apply exactly once (else it exits 1, naming the one that
did not): with FLOOR_NO_PP set the ping-pong row is skipped
(floor.cu runs its rows one after the other, so a 5-minute row each would
not fit in one 10-minute device call), each row's report also counts
its blocks of 100 us or more, as `sigproc probe`'s soak does, and the
input's block index is widened so that runs past 16 M blocks stay defined.
Everything else is floor.cu's: the pacing, the kernel, the check of every
101st block.
scripts/gpu-bench.sh's soakfloor phase runs it.
"""
import sys

EDITS = [
    ("static void report(const char* name, std::vector<double>& v) {\n  std::sort(v.begin(), v.end());",
     "static void report(const char* name, std::vector<double>& v) {\n  if (v.empty()) return;\n  std::sort(v.begin(), v.end());\n"
     "  { size_t o = 0; for (double x : v) o += x >= 100; printf(\"%-10s over 100 us: %zu\\n\", name, o); }"),
    ("  pingpong<<<1, 1, 0, s1>>>(dc);",
     "  const bool skip_pp = getenv(\"FLOOR_NO_PP\") != nullptr;\n  pingpong<<<1, 1, 0, s1>>>(dc);"),
    ("for (int i = 1; i <= n + 1000; i++) {\n    while (now() < next) {}\n    next += period;\n    long long t0 = now(); vc[0] = i;",
     "for (int i = 1; i <= (skip_pp ? 0 : n + 1000); i++) {\n    while (now() < next) {}\n    next += period;\n    long long t0 = now(); vc[0] = i;"),
    # i * 131 overflows an int past 16.39 M blocks (5.5 minutes at 20 us).
    ("blk[j] = (float)((i * 131 + j * 71) % 1000)", "blk[j] = (float)(((long long)i * 131 + j * 71) % 1000)"),
]


def patch(src: str) -> str:
    for old, new in EDITS:
        if src.count(old) != 1:
            raise SystemExit("floorsoak: floor.cu changed, cannot apply the edit at %r" % old[:48])
        src = src.replace(old, new)
    return src


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        out = patch(f.read())
    with open(sys.argv[2], "w") as f:
        f.write(out)


if __name__ == "__main__":
    main()
