#!/usr/bin/env python3
"""Print the cuFFT libraries a GPU machine has, best first: the one CuPy
itself loads, then pip's (nvidia.cu13, nvidia.cufft, nvidia.cu12), then the
CUDA toolkit's. The device scripts set SIGPROC_CUFFT to the first line.
Lines starting with # say what could not be looked at."""
import glob
import importlib
import os

c = []
try:
    import cupy
    import cupy.fft
    cupy.fft.fft(cupy.zeros(8, dtype=cupy.complex64))
    c += [l.split()[-1] for l in open("/proc/self/maps") if "libcufft.so" in l]
except Exception as e:
    print("# cupy:", e)
for mod in ("nvidia.cu13", "nvidia.cufft", "nvidia.cu12"):
    try:
        for p in importlib.import_module(mod).__path__:
            c += sorted(glob.glob(os.path.join(p, "lib", "libcufft.so*")))
    except Exception as e:
        print("#", mod, e)
for g in ("/usr/local/cuda*/lib64/libcufft.so*", "/usr/local/cuda*/targets/*/lib/libcufft.so*",
          "/usr/lib/x86_64-linux-gnu/libcufft.so*"):
    c += sorted(glob.glob(g))
for p in dict.fromkeys(p for p in c if os.path.exists(p)):
    print(p)
