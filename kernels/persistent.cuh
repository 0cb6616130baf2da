// Shared by the persistent zero-copy kernels (fir.cu, zchain.cu): the
// control block, the tags of the words they poll and write, the parameter
// block's header, and the loads and stores of those words. Each .cu file
// is its own module, so each includes this.
#pragma once

typedef unsigned long long u64;
typedef long long i64;

// Control block in mapped host memory. Each field sits on its own 128-byte
// line so host and GPU writers never share a line. Offsets are mirrored in
// the ctrl* constants of the CUDA backend (backend/cuda/cuda.go).
struct Ctrl {
    volatile u64 stop;          // host -> GPU: non-zero asks the kernel to exit
    u64 pad0[15];
    volatile u64 heartbeat;     // GPU -> host: blocks completed
    u64 pad1[15];
    volatile u64 error;         // GPU -> host: non-zero error code
    u64 pad2[15];
    volatile u64 running;       // GPU -> host: 1 once the kernel started, 2 when it exited
    u64 pad3[15];
};

// Input tags carry the block index + 1 in their low 31 bits and the
// parameter parity in the top bit: the host flips it, from the first block
// that must use new taps on, after writing them into the parameter buffer
// of that parity (see fir_persistent_body). Output tags are the whole
// block index + 1.
#define TAG_MASK 0x7fffffffu

// Parameter block (retunes), in mapped host memory: two buffers of
// PARAM_HDR + hcap floats, buffer b for parity b; a buffer's first word
// (u32) is its tap count, its taps start at float PARAM_HDR (128 bytes in,
// so the count and the taps never share a line with the other buffer's).
// Mirrored in backend/cuda (paramHdr).
#define PARAM_HDR 32

// How many polls between reads of the stop flag. Reading it in every poll
// costs another PCIe round trip in the loop (about 4 us on an H200).
#define STOP_EVERY 1024

#ifdef KERNEL_SIM
// The host simulators (kernels/sim) run the kernels on one CPU thread.
inline void ld_v2(const u64* p, u64& a, u64& b) { a = p[0], b = p[1]; }
inline void st_v2(u64* p, u64 a, u64 b) { p[0] = a, p[1] = b; }
#else
__device__ __forceinline__ void ld_v2(const u64* p, u64& a, u64& b) {
    // volatile = relaxed at system scope on sm_70+: every poll goes to host
    // memory, never to a stale L1/L2 line.
    asm volatile("ld.volatile.global.v2.u64 {%0,%1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ void st_v2(u64* p, u64 a, u64 b) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1,%2};" :: "l"(p), "l"(a), "l"(b) : "memory");
}
#endif

__device__ __forceinline__ u64 pack(float v, unsigned tag) {
    return (u64)__float_as_uint(v) | ((u64)tag << 32);
}

// poll_pair spins until both words of the pair at w carry itag in their
// tag bits (the parity bit aside), one load in flight, and reads the stop
// flag once per STOP_EVERY polls: true with the pair in va, vb; false when
// the host asked the kernel to stop first.
__device__ __forceinline__ bool poll_pair(const u64* w, unsigned itag, const Ctrl* ctrl, u64& va, u64& vb) {
    for (int spins = 0;;) {
        ld_v2(w, va, vb);
        if (((unsigned)(va >> 32) & TAG_MASK) == itag && ((unsigned)(vb >> 32) & TAG_MASK) == itag) return true;
        if (++spins == STOP_EVERY) {
            spins = 0;
            if (ctrl->stop != 0) return false;
        }
    }
}
