// sigproc conversion kernel: stored integer samples to float32 on the GPU
// (the explicit transport, a recording taken in place), so that an 8-bit
// complex file crosses PCIe at 2 bytes a sample instead of 8. Each result
// is the CPU decoder's (capture's decodeLE) bit for bit:
//
//   enc 1  int8            v / 2^7
//   enc 2  uint8 (rtl_sdr) (v − 127.5) / 127.5, in float64, rounded once
//   enc 3  uint8 (WAV)     (v − 128) / 2^7
//   enc 4  int16 LE        v / 2^15
//   enc 5  int24 LE        v / 2^23
//   enc 6  int32 LE        v / 2^31, in float64, rounded once
//
// Scaling by a power of two is exact, so only enc 2 and 6 round, once, as
// the CPU does. Kernel parameters are all 8 bytes wide because
// gorgonia.org/cu copies every launch argument as 8 bytes. Only PTX ISA
// 7.0 / sm_75 features.

typedef long long i64;

extern "C" __global__ void convert(const unsigned char* __restrict__ src, float* __restrict__ dst, i64 n, i64 enc) {
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v;
        switch (enc) {
        case 1:
            v = __fmul_rn((float)(signed char)src[i], 1.0f / 128);
            break;
        case 2:
            v = __double2float_rn(__ddiv_rn(__dsub_rn((double)src[i], 127.5), 127.5));
            break;
        case 3:
            v = __fmul_rn((float)((int)src[i] - 128), 1.0f / 128);
            break;
        case 4:
            v = __fmul_rn((float)(short)(src[2 * i] | src[2 * i + 1] << 8), 1.0f / 32768);
            break;
        case 5: {
            int x = (int)((unsigned)src[3 * i] << 8 | (unsigned)src[3 * i + 1] << 16 | (unsigned)src[3 * i + 2] << 24) >> 8;
            v = __fmul_rn((float)x, 1.0f / 8388608);
            break;
        }
        default: {
            int x = (int)((unsigned)src[4 * i] | (unsigned)src[4 * i + 1] << 8 | (unsigned)src[4 * i + 2] << 16 | (unsigned)src[4 * i + 3] << 24);
            v = __double2float_rn(__dmul_rn((double)x, 1.0 / 2147483648.0));
            break;
        }
        }
        dst[i] = v;
    }
}
