// zclat/variants: zero-copy protocol and kernel variants for issue #21, measured
// against a replica of ../shared/zc-floor/floor.cu in one process, alternating.
//
//   nvcc -O2 -arch=sm_90 -o /tmp/variants bench/zclat/variants.cu
//   /tmp/variants [blocks=20000] [period_ns=10000] [rounds=3] [only=all|name,name,...]
//   env ZC_WAIT_MS (host wait per block before a drop, default 50), ZC_ROTATE (first round's
//   start offset, default 0)
//
// Every row is one 256-sample real block, 64 taps, paced like floor.cu and `sigproc probe`:
// an absolute schedule (next += period), the host spinning until it is due.
//
// Latency, the same for every row (and floor.cu's): from clock_gettime(MONOTONIC) taken
// just before the first input store to clock_gettime taken just after the host has seen
// the tag of, and copied, the last output value of the block. The input values are staged
// in a small cache-resident buffer before the pacing wait (as floor.cu computes them); the
// check against the CPU reference runs after the second timestamp. Every output of every
// block is checked (floor.cu checks every 101st block) against a float64 FIR of the same
// input stream, precomputed once: |y - ref| <= 1e-4 (1 + |ref|).
//
// Protocol pieces a variant combines (see docs/data/zc-protocol-variants.md):
//   format  F8   8-byte words {float32 value, uint32 tag}, tag = block index + 1 (the
//                product's and floor.cu's words); a thread polls a 16-byte pair. Every
//                row uses it.
//   kernel  floor    floor.cu's fir_ll: poll, barrier, compute from shared memory, store,
//                    barrier, shift the history, barrier.
//           regtaps  floor with the taps in registers (a compile-time tap count).
//           warp     per warp, no block barrier: a warp publishes its 64 samples in shared
//                    memory with a per-warp flag, waits for the flag of the warp holding
//                    its 63-sample history overlap, computes and stores its 64 outputs.
//           floor+hb floor plus the product's per-block heartbeat store to mapped memory.
//           warp+reg warp with the taps in registers (regtaps' compute).
//           nbar     warp's hand-off by named barriers (bar.arrive / bar.sync between the two
//                    warps), which racecheck understands, in place of flags in shared memory.
//   writer  plain    aligned 8-byte stores in order (floor.cu);
//           demote   the same, then CLDEMOTE per 64-byte line (the product's tagged.Demote);
//   reader  scalar   word by word in order, spinning on each (floor.cu);
//           line     one 64-byte line per step, 4 SSE loads, spinning until its 8 tags match;
//           pass     repeated passes over every line not yet complete, 4 SSE loads each, a
//                    _mm_pause between passes (all misses of a pass in flight together);
//           pass0    the same without the _mm_pause (its cost is ~40 ns on recent Intel cores);
//           last     the product's tagged.Read: wait for the last word, then copy in order.
// The variants table (`variants[]`) names each row's pieces; every row but the combinations
// (x-...) differs from v0 in one piece.
//
// Host-only self-test of the host side and of every protocol (a CPU thread stands in for
// the kernels): nvcc -DZC_HOSTSIM -O2 -o /tmp/vsim bench/zclat/variants.cu &&
// ZC_WAIT_MS=5000 /tmp/vsim 200 200000 1
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#include <cpuid.h>
#include <immintrin.h>
#include <unistd.h>
#ifdef ZC_HOSTSIM
#include <atomic>
#include <functional>
#include <thread>
#endif

#define B 256          // samples per block
#define NT 64          // taps (compile time: the register variants unroll over it)
#define H (NT - 1)     // history values
#define STOP_EVERY 1023

typedef unsigned long long u64;

// ---------------------------------------------------------------------------------------
// Device helpers
// ---------------------------------------------------------------------------------------

__device__ __forceinline__ void ld4(const unsigned* p, unsigned& a, unsigned& b, unsigned& c, unsigned& d) {
  // volatile = relaxed at system scope: every poll goes to host memory.
  asm volatile("ld.volatile.global.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p));
}
__device__ __forceinline__ void st4(unsigned* p, unsigned a, unsigned b, unsigned c, unsigned d) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1,%2,%3,%4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

__global__ void k_pingpong(volatile unsigned long long* c) {
  unsigned long long last = 0;
  for (;;) {
    unsigned long long v = c[0];
    if (v == ~0ull) return;
    if (v != last) { last = v; c[16] = v; __threadfence_system(); }
  }
}

// v0: floor.cu's fir_ll, unchanged but for the name (the baseline; the harness must agree
// with floor.cu on it). 128 threads, one input slot. HB: after its output store, thread 0
// also stores a heartbeat (blocks done) to mapped memory, as the product's kernel does per
// block (ctrl->heartbeat), to isolate what that extra PCIe write costs.
template <bool HB>
__global__ void k_floor(const unsigned* in, unsigned* out, const float* taps, int ntaps, volatile const unsigned* stop,
                        volatile u64* heartbeat) {
  __shared__ float x[NT - 1 + B];
  __shared__ float h[NT];
  const int t = threadIdx.x, Hh = ntaps - 1;
  for (int i = t; i < Hh; i += blockDim.x) x[i] = 0.f;
  for (int i = t; i < ntaps; i += blockDim.x) h[i] = taps[i];
  __syncthreads();
  for (unsigned seq = 1;; seq++) {
    unsigned a, b, c, d, spins = 0;
    const unsigned* p = in + 4 * t;
    for (;;) {
      ld4(p, a, b, c, d);
      if (b == seq && d == seq) break;
      if ((++spins & 1023) == 0 && *stop) return;
    }
    x[Hh + 2 * t] = __uint_as_float(a);
    x[Hh + 2 * t + 1] = __uint_as_float(c);
    __syncthreads();
    float y0 = 0.f, y1 = 0.f;
    for (int k = 0; k < ntaps; k++) { y0 += h[k] * x[Hh + 2 * t - k]; y1 += h[k] * x[Hh + 2 * t + 1 - k]; }
    st4(out + 4 * t, __float_as_uint(y0), seq, __float_as_uint(y1), seq);
    if (HB && t == 0) *heartbeat = seq;
    __syncthreads();
    for (int i = t; i < Hh; i += blockDim.x) x[i] = x[B + i];
    __syncthreads();
  }
}

// (e) alone: floor's kernel with the taps in registers (the loop fully unrolled over the
// compile-time tap count, so each tap is an immediate register operand and each history
// load a constant offset). History stays in shared memory: it crosses warps.
__global__ void k_regtaps(const unsigned* in, unsigned* out, const float* taps, volatile const unsigned* stop) {
  __shared__ float x[H + B];
  float h[NT];
#pragma unroll
  for (int k = 0; k < NT; k++) h[k] = taps[k];
  const int t = threadIdx.x;
  for (int i = t; i < H; i += blockDim.x) x[i] = 0.f;
  __syncthreads();
  for (unsigned seq = 1;; seq++) {
    unsigned a, b, c, d, spins = 0;
    const unsigned* p = in + 4 * t;
    for (;;) {
      ld4(p, a, b, c, d);
      if (b == seq && d == seq) break;
      if ((++spins & STOP_EVERY) == 0 && *stop) return;
    }
    x[H + 2 * t] = __uint_as_float(a);
    x[H + 2 * t + 1] = __uint_as_float(c);
    __syncthreads();
    float y0 = 0.f, y1 = 0.f;
    const float* xp = x + H + 2 * t;
#pragma unroll
    for (int k = 0; k < NT; k++) { y0 = fmaf(h[k], xp[-k], y0); y1 = fmaf(h[k], xp[1 - k], y1); }
    st4(out + 4 * t, __float_as_uint(y0), seq, __float_as_uint(y1), seq);
    __syncthreads();
    for (int i = t; i < H; i += blockDim.x) x[i] = x[B + i];
    __syncthreads();
  }
}

// (n) bar.arrive / bar.sync on named barrier id, 64 threads: one warp each side.
__device__ __forceinline__ void bar_arrive(int id) { asm volatile("bar.arrive %0, 64;" ::"r"(id) : "memory"); }
__device__ __forceinline__ void bar_sync(int id) { asm volatile("bar.sync %0, 64;" ::"r"(id) : "memory"); }

// (a) per warp, no block barrier. Warp w owns samples [64w, 64w+64) (lane l: 2 samples in
// one 16-byte pair, as floor). Two shared buffers [history | block] by block parity. A
// warp stores its samples into the buffer of this block, warp 3 also into the history part
// of the next block's buffer, then releases flag[w] = seq. Before computing, warp w
// acquires the flag of the warp that holds its 63-sample overlap: warp w-1 in this block,
// or warp 3 of the previous block for warp 0 (its samples are already in this buffer's
// history part). A buffer is rewritten two blocks later, after the host has seen every
// output of the block that read it, so no warp still reads it. Taps in shared memory, as
// floor, so that only the barrier changes.
// REG: the taps in registers, the loop unrolled over them (e-regtaps' compute in a-warp's
// protocol, k_warp<true, false>).
// NBAR (n): the hand-off by named barriers instead of the flags, which compute-sanitizer's
// racecheck can follow (it reports a flag hand-off as hazards), and gpu-check runs racecheck
// on every product kernel. Warp w-1 hands this block's samples to warp w on barrier w (ids
// 1..3, 0 being __syncthreads'); warp 3 hands its samples, the next block's history, to warp
// 0 on barrier 4, and warp 0 takes that arrival in the same block, after its compute and
// before its output store. Each arrival is thus taken before anything the host waits for to
// publish the next block (every output of this one), so no warp arrives twice on a barrier
// before its consumer has synced once, which would complete the barrier without the
// consumer: the hazard of named barriers with more than one block in flight, which the
// product's kernel allows. Barrier 5 runs the other way: warp 0 arrives once it has read
// a buffer, warp 3 syncs before it writes the next block's history there (the one reuse
// racecheck reported); a port to a host that runs ahead needs the same on barriers 1-3.
template <bool REG, bool NBAR>
__global__ void k_warp(const unsigned* in, unsigned* out, const float* taps, volatile const unsigned* stop) {
  __shared__ float xb[2][H + B];
  __shared__ float h[NT];
  float hr[NT];
#pragma unroll
  for (int k = 0; k < NT; k++) hr[k] = REG ? taps[k] : 0.f;
  __shared__ volatile unsigned flag[4];
  const int t = threadIdx.x, w = t >> 5;
  for (int i = t; i < 2 * (H + B); i += blockDim.x) (&xb[0][0])[i] = 0.f;
  for (int i = t; i < NT; i += blockDim.x) h[i] = taps[i];
  if (t < 4) flag[t] = 0;
  __syncthreads();
  for (unsigned seq = 1;; seq++) {
    float* x = xb[seq & 1];
    float* nx = xb[(seq + 1) & 1];
    unsigned a, b, c, d, spins = 0;
    const unsigned* p = in + 4 * t;
    for (;;) {
      ld4(p, a, b, c, d);
      if (b == seq && d == seq) break;
      if ((++spins & STOP_EVERY) == 0 && *stop) return;
    }
    const int q = H + 2 * t;
    // Back-pressure: nx was last read by warp 0's compute of block seq-1,
    // which it announces on barrier 5 (not needed for the first block), so
    // this reuse is ordered by a barrier racecheck sees (its two hazards)
    // rather than through the host. The other hand-offs (barriers 1-3, the
    // buffers warps 0-2 refill, the one input slot) still rely on the host
    // publishing block seq+1 only after every output of block seq.
    if (NBAR && w == 3 && seq > 1) bar_sync(5);
    x[q] = __uint_as_float(a);
    x[q + 1] = __uint_as_float(c);
    if (q >= B) nx[q - B] = __uint_as_float(a);
    if (q + 1 >= B) nx[q + 1 - B] = __uint_as_float(c);
    if (NBAR) {
      bar_arrive(w + 1);       // to warp w+1 (warp 3: to warp 0, for the next block)
      if (w > 0) bar_sync(w);  // from warp w-1: this block's overlap
    } else {
      __syncwarp();
      __threadfence_block();
      if ((t & 31) == 0) flag[w] = seq;
      // Acquire the overlap's owner: warp w-1 at seq, or warp 3 at seq-1 (or later).
      const int o = w == 0 ? 3 : w - 1;
      const unsigned want = w == 0 ? seq - 1 : seq;
      spins = 0;
      while ((int)(flag[o] - want) < 0) {
        if ((++spins & STOP_EVERY) == 0 && *stop) return;
      }
      __threadfence_block();
    }
    float y0 = 0.f, y1 = 0.f;
    if (REG) {
#pragma unroll
      for (int k = 0; k < NT; k++) { y0 = fmaf(hr[k], x[q - k], y0); y1 = fmaf(hr[k], x[q + 1 - k], y1); }
    } else {
      for (int k = 0; k < NT; k++) { y0 += h[k] * x[q - k]; y1 += h[k] * x[q + 1 - k]; }
    }
    if (NBAR && w == 0) {
      bar_sync(4);    // warp 3's samples of this block: the next one's history
      bar_arrive(5);  // done reading x: warp 3 may refill it for block seq+2. After the
                      // sync, so that warp 0 never arrives twice before warp 3 has synced
    }
    st4(out + 4 * t, __float_as_uint(y0), seq, __float_as_uint(y1), seq);
  }
}

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

enum Kern { K_FLOOR, K_REGTAPS, K_WARP, K_FLOOR_HB, K_WARP_REGTAPS, K_NBAR, K_NBAR_REGTAPS };
enum Reader { R_SCALAR, R_LINE, R_PASS, R_PASS0, R_LAST };
enum Writer { W_PLAIN, W_DEMOTE };
static const char* kern_name[] = {"floor", "regtaps", "warp", "floor+hb", "warp+reg", "nbar", "nbar+reg"};
static const char* reader_name[] = {"scalar", "line", "pass", "pass0", "last"};
static const char* writer_name[] = {"plain", "demote"};

struct Variant {
  const char* name;
  Kern kern;
  Reader reader;
  Writer writer;
  const char* what;
};

// The variants, each differing from v0 in one piece unless it is a combination (x-...).
static const Variant variants[] = {
    {"v0", K_FLOOR, R_SCALAR, W_PLAIN, "floor.cu's kernel and host, replicated"},
    {"e-regtaps", K_REGTAPS, R_SCALAR, W_PLAIN, "(e) taps in registers"},
    {"a-warp", K_WARP, R_SCALAR, W_PLAIN, "(a) per-warp, smem flags, no block barrier"},
    {"n-nbar", K_NBAR, R_SCALAR, W_PLAIN, "(n) per-warp, named barriers, no block barrier"},
    {"b-line", K_FLOOR, R_LINE, W_PLAIN, "(b) host consumes one 64-B line per step in order"},
    {"d-pass", K_FLOOR, R_PASS, W_PLAIN, "(d) passes over all lines, _mm_pause between"},
    {"d-pass0", K_FLOOR, R_PASS0, W_PLAIN, "(d) d-pass without the _mm_pause"},
    {"h-heartbeat", K_FLOOR_HB, R_SCALAR, W_PLAIN, "floor + the product's per-block heartbeat store"},
    {"p-last", K_FLOOR, R_LAST, W_PLAIN, "product's reader: last word first, then in order"},
    {"w-demote", K_FLOOR, R_SCALAR, W_DEMOTE, "product's writer: CLDEMOTE input lines"},
    {"x-prodhost", K_FLOOR, R_LAST, W_DEMOTE, "floor kernel + the product's host (demote + last)"},
    {"x-warp-pass", K_WARP, R_PASS, W_DEMOTE, "a + d-pass + demote"},
    {"x-warpe-pass", K_WARP_REGTAPS, R_PASS, W_DEMOTE, "a + e + d-pass + demote"},
    {"x-nbar-pass", K_NBAR, R_PASS, W_DEMOTE, "n + d-pass + demote"},
    {"x-nbare-pass", K_NBAR_REGTAPS, R_PASS, W_DEMOTE, "n + e + d-pass + demote"},
};
static const int NVAR = sizeof(variants) / sizeof(variants[0]);

static inline long long now() { timespec s; clock_gettime(CLOCK_MONOTONIC, &s); return s.tv_sec * 1000000000ll + s.tv_nsec; }
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

// Compiler barrier: forces the next load of mapped memory to be issued again.
static inline void cbar() { asm volatile("" ::: "memory"); }
// CLDEMOTE [p] (0F 1C /0); a NOP on CPUs without it.
static inline void cldemote(const void* p) { asm volatile(".byte 0x0f, 0x1c, 0x07" ::"D"(p) : "memory"); }
static bool has_cldemote() {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c >> 25 & 1);
}

// The input stream: a hash of (block, sample) in [-1, 1), so a stale or misplaced word
// never passes the check by accident.
static float sample(unsigned blk, unsigned j) {
  unsigned x = blk * 2654435761u ^ (j + 0x9e3779b9u) * 40503u;
  x ^= x >> 15; x *= 2246822519u; x ^= x >> 13; x *= 3266489917u; x ^= x >> 16;
  return (float)(x >> 8) / 8388608.f - 1.f;
}

struct Stats { double p50, p90, p99, p999, max; long over100; };
static Stats stats(std::vector<double> v) {
  Stats s{};
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double p) { return v[(size_t)(p * (v.size() - 1))]; };
  s.p50 = q(.5); s.p90 = q(.9); s.p99 = q(.99); s.p999 = q(.999); s.max = v.back();
  for (double x : v) s.over100 += x > 100.0;
  return s;
}

struct Result { std::vector<double> lat; long verified = 0, bad = 0, drops = 0, late = 0; int firstbad = -1; };

// Mapped host memory shared by every run (zeroed before each).
struct Bufs {
  unsigned *in, *out, *stop; unsigned *din, *dout, *dstop; float* dtaps;
  unsigned long long *pp, *dpp;
};

// readers: wait until the whole output block of tag seq is seen, copy it into y. Return
// false on a timeout (deadline in ns).
static bool read_f8(Reader r, volatile u64* o, unsigned seq, float* y, long long deadline) {
  unsigned spins = 0;
  auto late = [&]() { return (++spins & 4095) == 0 && now() > deadline; };
  auto word = [&](int j) -> bool {
    u64 w;
    while (((w = o[j]) >> 32) != seq) if (late()) return false;
    unsigned u = (unsigned)w; memcpy(&y[j], &u, 4);
    return true;
  };
  const __m128i tagv = _mm_set1_epi32((int)seq);
  // One 64-byte line (8 words): true when all 8 tags match, values copied.
  auto line = [&](int L) -> bool {
    const __m128i* p = (const __m128i*)(o + 8 * L);
    cbar();
    __m128i v0 = _mm_load_si128(p), v1 = _mm_load_si128(p + 1), v2 = _mm_load_si128(p + 2), v3 = _mm_load_si128(p + 3);
    int m = _mm_movemask_epi8(_mm_cmpeq_epi32(v0, tagv)) & _mm_movemask_epi8(_mm_cmpeq_epi32(v1, tagv)) &
            _mm_movemask_epi8(_mm_cmpeq_epi32(v2, tagv)) & _mm_movemask_epi8(_mm_cmpeq_epi32(v3, tagv));
    if ((m & 0xF0F0) != 0xF0F0) return false;
    // values are 32-bit lanes 0 and 2 of each vector
    __m128 a = _mm_shuffle_ps(_mm_castsi128_ps(v0), _mm_castsi128_ps(v1), _MM_SHUFFLE(2, 0, 2, 0));
    __m128 b = _mm_shuffle_ps(_mm_castsi128_ps(v2), _mm_castsi128_ps(v3), _MM_SHUFFLE(2, 0, 2, 0));
    _mm_storeu_ps(y + 8 * L, a); _mm_storeu_ps(y + 8 * L + 4, b);
    return true;
  };
  switch (r) {
    case R_SCALAR:
      for (int j = 0; j < B; j++) if (!word(j)) return false;
      return true;
    case R_LAST:
      while ((o[B - 1] >> 32) != seq) if (late()) return false;
      for (int j = 0; j < B; j++) if (!word(j)) return false;
      return true;
    case R_LINE:
      for (int L = 0; L < B / 8; L++) while (!line(L)) if (late()) return false;
      return true;
    case R_PASS:
    case R_PASS0: {
      unsigned done = 0;  // bit L: line L copied
      for (;;) {
        for (int L = 0; L < B / 8; L++)
          if (!(done >> L & 1) && line(L)) done |= 1u << L;
        if (done == 0xffffffffu) return true;
        if (r == R_PASS) _mm_pause();
        if (late()) return false;
      }
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------
// The device layer: mapped allocations and kernel launches. With -DZC_HOSTSIM (a host-only
// self-test of the harness: nvcc -DZC_HOSTSIM -O2 -o /tmp/vsim bench/zclat/variants.cu) a
// CPU thread stands in for the kernel: it speaks each variant's protocol (slots, tags) and
// writes the output words in reverse order to exercise the readers; its timing means nothing.
// ---------------------------------------------------------------------------------------
#ifndef ZC_HOSTSIM
static cudaStream_t stream;
static std::string device_init() {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceMapHost));
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return prop.name;
}
static void* mapped(size_t n, void** dev) {
  void* p;
  CK(cudaHostAlloc(&p, n, cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(dev, p, 0));
  return p;
}
static float* device_taps(const std::vector<float>& taps) {
  float* d;
  CK(cudaMalloc((void**)&d, taps.size() * 4));
  CK(cudaMemcpy(d, taps.data(), taps.size() * 4, cudaMemcpyHostToDevice));
  return d;
}
static void start_pingpong(const Bufs& bf) {
  k_pingpong<<<1, 1, 0, stream>>>(bf.dpp);
  CK(cudaGetLastError());
}
static void start_kernel(const Variant& v, const Bufs& bf) {
  switch (v.kern) {
    case K_FLOOR: k_floor<false><<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, NT, bf.dstop, nullptr); break;
    case K_FLOOR_HB:  // the heartbeat on its own 128-byte line of the stop page
      k_floor<true><<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, NT, bf.dstop, (volatile u64*)(bf.dstop + 32)); break;
    case K_REGTAPS: k_regtaps<<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, bf.dstop); break;
    case K_WARP: k_warp<false, false><<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, bf.dstop); break;
    case K_WARP_REGTAPS: k_warp<true, false><<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, bf.dstop); break;
    case K_NBAR: k_warp<false, true><<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, bf.dstop); break;
    case K_NBAR_REGTAPS: k_warp<true, true><<<1, 128, 0, stream>>>(bf.din, bf.dout, bf.dtaps, bf.dstop); break;
  }
  CK(cudaGetLastError());
}
static bool kernel_done() {
  cudaError_t e = cudaStreamQuery(stream);
  if (e == cudaErrorNotReady) return false;
  CK(e);
  return true;
}
#else
static std::thread sim;
static std::atomic<bool> sim_done{true};
static std::string device_init() { return "host simulation (ZC_HOSTSIM)"; }
static void* mapped(size_t n, void** dev) {
  void* p = aligned_alloc(4096, (n + 4095) & ~(size_t)4095);
  memset(p, 0, n);
  *dev = p;
  return p;
}
static float* device_taps(const std::vector<float>& taps) { return (float*)taps.data(); }
static void sim_start(std::function<void()> f) {
  if (sim.joinable()) sim.join();
  sim_done = false;
  sim = std::thread([f] { f(); sim_done = true; });
}
static void start_pingpong(const Bufs& bf) {
  volatile unsigned long long* c = bf.dpp;
  sim_start([c] {
    unsigned long long last = 0;
    for (;;) {
      unsigned long long v = c[0];
      if (v == ~0ull) return;
      if (v != last) { last = v; c[16] = v; }
    }
  });
}
static void start_kernel(const Variant& v, const Bufs& bf) {
  sim_start([v, bf] {
    std::vector<float> x(H + B, 0.f), y(B);
    volatile unsigned* stop = bf.dstop;
    for (unsigned seq = 1;; seq++) {
      volatile u64* in = (volatile u64*)bf.din;
      for (int j = 0; j < B; j++) {
        u64 w;
        while (((w = in[j]) >> 32) != seq) if (*stop) return;
        unsigned u = (unsigned)w; memcpy(&x[H + j], &u, 4);
      }
      for (int j = 0; j < B; j++) {
        float r = 0.f;
        for (int k = 0; k < NT; k++) r += bf.dtaps[k] * x[H + j - k];
        y[j] = r;
      }
      volatile u64* out = (volatile u64*)bf.dout;
      for (int j = B - 1; j >= 0; j--) { unsigned u; memcpy(&u, &y[j], 4); out[j] = (u64)seq << 32 | u; }
      for (int i = 0; i < H; i++) x[i] = x[B + i];
    }
  });
}
static bool kernel_done() {
  if (!sim_done) return false;
  if (sim.joinable()) sim.join();
  return true;
}
#endif

struct Harness {
  int n, warm; long long period; long long wait_ns;
  std::vector<float> taps, X, Y;  // X, Y: (n + warm) blocks of inputs and reference outputs
  Bufs bf;

  void setup() {
    const int tot = n + warm;
    taps.resize(NT);
    srand(1); for (auto& v : taps) v = (rand() / (float)RAND_MAX - 0.5f);
    X.resize((size_t)tot * B); Y.resize((size_t)tot * B);
    std::vector<double> hist(H + B, 0.0);
    for (int i = 0; i < tot; i++) {
      for (int j = 0; j < B; j++) hist[H + j] = X[(size_t)i * B + j] = sample(i + 1, j);
      for (int j = 0; j < B; j++) {
        double r = 0; for (int k = 0; k < NT; k++) r += (double)taps[k] * hist[H + j - k];
        Y[(size_t)i * B + j] = (float)r;
      }
      std::copy(hist.begin() + B, hist.end(), hist.begin());
    }
    bf.in = (unsigned*)mapped(B * 8, (void**)&bf.din);  // one slot of F8 words
    bf.out = (unsigned*)mapped(2 * B * 8, (void**)&bf.dout);
    bf.stop = (unsigned*)mapped(4096, (void**)&bf.dstop);
    bf.pp = (unsigned long long*)mapped(4096, (void**)&bf.dpp);
    bf.dtaps = device_taps(taps);
  }

  // Waits for the kernel to exit after stop, up to 3 s; a hang ends the process (the GPU
  // state is unknown), after the rows printed so far.
  void join(const char* name) {
    long long t = now();
    while (!kernel_done()) {
      if (now() - t > 3000000000ll) { printf("FATAL %s: kernel did not exit 3 s after stop\n", name); fflush(stdout); _exit(3); }
    }
  }

  Result pingpong() {
    Result r; r.lat.reserve(n);
    bf.pp[0] = 0; bf.pp[16] = 0;
    start_pingpong(bf);
    volatile unsigned long long* vc = bf.pp;
    long long next = now() + 1000000;
    for (int i = 1; i <= n + warm; i++) {
      if (now() > next + 1000) r.late++;
      while (now() < next) {}
      next += period;
      long long t0 = now(); vc[0] = i;
      long long dl = t0 + wait_ns; unsigned spins = 0; bool ok = true;
      while (vc[16] != (unsigned long long)i) if ((++spins & 4095) == 0 && now() > dl) { ok = false; break; }
      long long t1 = now();
      if (!ok) { r.drops++; break; }
      if (i > warm) { r.lat.push_back((t1 - t0) / 1e3); r.verified++; }
    }
    vc[0] = ~0ull;
    join("pp");
    return r;
  }

  Result run(const Variant& v) {
    Result r; r.lat.reserve(n);
    memset(bf.in, 0, B * 8); memset(bf.out, 0, 2 * B * 8); *(volatile unsigned*)bf.stop = 0;
    start_kernel(v, bf);
    volatile u64* vin = (volatile u64*)bf.in;
    volatile u64* vout = (volatile u64*)bf.out;
    float xs[B] __attribute__((aligned(16))), y[B] __attribute__((aligned(16)));
    unsigned bits[B];
    long long next = now() + 1000000;
    for (int i = 1; i <= n + warm; i++) {
      const float* xi = &X[(size_t)(i - 1) * B];
      memcpy(xs, xi, sizeof xs); memcpy(bits, xs, sizeof bits);
      if (now() > next + 1000) r.late++;
      while (now() < next) {}
      next += period;
      long long t0 = now();
      // --- write the input block ---
      volatile u64* d = vin;
      for (int j = 0; j < B; j++) d[j] = (u64)i << 32 | bits[j];
      if (v.writer == W_DEMOTE) for (int L = 0; L < B / 8; L++) cldemote((const void*)(d + 8 * L));
      // --- wait for and copy the output block ---
      const long long dl = t0 + wait_ns;
      const bool ok = read_f8(v.reader, vout, (unsigned)i, y, dl);
      long long t1 = now();
      if (!ok) { r.drops++; break; }
      // --- check every output (untimed) ---
      const float* ref = &Y[(size_t)(i - 1) * B];
      bool good = true;
      for (int j = 0; j < B; j++)
        if (!(fabsf(y[j] - ref[j]) <= 1e-4f * (1.f + fabsf(ref[j])))) {
          if (good && r.bad < 3) printf("  %s block %d: first mismatch at %d: got %g want %g\n", v.name, i, j, y[j], ref[j]);
          good = false;
        }
      if (!good) { r.bad++; if (r.firstbad < 0) r.firstbad = i; }
      if (i > warm) { r.lat.push_back((t1 - t0) / 1e3); if (good) r.verified++; }
    }
    *(volatile unsigned*)bf.stop = 1;
    join(v.name);
    return r;
  }
};

struct Row { std::string name; std::vector<double> all; std::vector<double> p50s, p99s; long verified = 0, bad = 0, drops = 0, late = 0, blocks = 0; };

static void print_row(const char* tag, const char* name, const Stats& s, long blocks, long ver, long bad, long drops, long late) {
  printf("%-6s %-15s %7ld  p50 %6.2f  p90 %6.2f  p99 %6.2f  p99.9 %7.2f  max %8.1f  >100us %4ld  verified %7ld  bad %ld  drops %ld  late %ld\n",
         tag, name, blocks, s.p50, s.p90, s.p99, s.p999, s.max, s.over100, ver, bad, drops, late);
  fflush(stdout);
}

int main(int argc, char** argv) {
  Harness hs;
  hs.n = argc > 1 ? atoi(argv[1]) : 20000;
  hs.period = argc > 2 ? atoll(argv[2]) : 10000;
  const int rounds = argc > 3 ? atoi(argv[3]) : 3;
  const std::string only = argc > 4 ? argv[4] : "all";
  hs.warm = std::min(1000, hs.n / 10 + 10);
  hs.wait_ns = (getenv("ZC_WAIT_MS") ? atoll(getenv("ZC_WAIT_MS")) : 50) * 1000000ll;
  const int rot0 = getenv("ZC_ROTATE") ? atoi(getenv("ZC_ROTATE")) : 0;
  if (hs.n < 1 || hs.period < 0 || rounds < 1) { printf("usage: variants [blocks] [period_ns] [rounds] [only]\n"); return 2; }

  std::vector<int> sel;  // -1: ping-pong
  auto want = [&](const char* nm) { return only == "all" || ("," + only + ",").find(std::string(",") + nm + ",") != std::string::npos; };
  if (want("pp")) sel.push_back(-1);
  for (int k = 0; k < NVAR; k++) if (want(variants[k].name)) sel.push_back(k);
  if (sel.empty()) { printf("no variant matches %s\n", only.c_str()); return 2; }

  const std::string gpu = device_init();
  printf("zclat variants: %s, %d blocks per row (+%d warm-up), one every %lld ns, %d samples, %d taps, %d rounds, cldemote %s\n",
         gpu.c_str(), hs.n, hs.warm, hs.period, B, NT, rounds, has_cldemote() ? "yes" : "no (NOP)");
  printf("latency: first input store -> last output value seen and copied; every output checked\n");
  for (int k = 0; k < NVAR; k++)
    printf("  %-15s kernel %-8s words F8  reader %-8s writer %-6s %s\n", variants[k].name, kern_name[variants[k].kern],
           reader_name[variants[k].reader], writer_name[variants[k].writer], variants[k].what);
  hs.setup();

  std::vector<Row> rows(sel.size());
  for (size_t k = 0; k < sel.size(); k++) rows[k].name = sel[k] < 0 ? "pp" : variants[sel[k]].name;
  int fails = 0;
  for (int rd = 0; rd < rounds; rd++) {
    // Each round starts at a different variant, so no variant always follows the same one.
    const size_t off = (size_t)(rot0 + rd * 5) % sel.size();
    for (size_t m = 0; m < sel.size(); m++) {
      const size_t k = (off + m) % sel.size();
      Result r = sel[k] < 0 ? hs.pingpong() : hs.run(variants[sel[k]]);
      Stats st = stats(r.lat);
      char tag[16]; snprintf(tag, sizeof tag, "r%d", rd + 1);
      print_row(tag, rows[k].name.c_str(), st, (long)r.lat.size(), r.verified, r.bad, r.drops, r.late);
      Row& w = rows[k];
      w.all.insert(w.all.end(), r.lat.begin(), r.lat.end());
      w.p50s.push_back(st.p50); w.p99s.push_back(st.p99);
      w.verified += r.verified; w.bad += r.bad; w.drops += r.drops; w.late += r.late; w.blocks += (long)r.lat.size();
      if (r.bad || r.drops) fails++;
    }
  }
  printf("\nAll rounds pooled (p50/p99 ranges are the per-round extremes):\n\n");
  printf("| variant | blocks | p50 µs | p50 range | p99 µs | p99 range | p99.9 µs | max µs | >100 µs | verified | bad | drops | late |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (auto& w : rows) {
    Stats s = stats(w.all);
    auto mn = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
    auto mx = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
    printf("| %s | %ld | %.2f | %.2f–%.2f | %.2f | %.2f–%.2f | %.2f | %.1f | %ld | %ld | %ld | %ld | %ld |\n", w.name.c_str(), w.blocks,
           s.p50, mn(w.p50s), mx(w.p50s), s.p99, mn(w.p99s), mx(w.p99s), s.p999, s.max, s.over100, w.verified, w.bad, w.drops, w.late);
  }
  printf("\nRESULT %s (%d rows with mismatches or drops)\n", fails ? "FAIL" : "ok", fails);
  return fails ? 1 : 0;
}
