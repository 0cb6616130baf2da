//go:build amd64 && !purego

#include "textflag.h"

// AVX2 versions of the FFT kernels in fft_amd64.s, 8 points per YMM
// register. The twiddle tables are the same (chunks of 16 j's), so each
// inner step does 16 j's as two halves: data and twiddles at byte
// offset 0, then 32. Same register roles as the AVX-512 passes.

#define DIF4_HALF(OFF) \
	VMOVUPS     OFF(AX)(R8*1), Y0    \
	VMOVUPS     OFF(R10)(R8*1), Y1   \
	VMOVUPS     OFF(R11)(R8*1), Y2   \
	VMOVUPS     OFF(R12)(R8*1), Y3   \
	VMOVUPS     OFF(BX)(R8*1), Y4    \
	VMOVUPS     OFF(R13)(R8*1), Y5   \
	VMOVUPS     OFF(SI)(R8*1), Y6    \
	VMOVUPS     OFF(DI)(R8*1), Y7    \
	VADDPS      Y2, Y0, Y8           \
	VSUBPS      Y2, Y0, Y0           \
	VADDPS      Y6, Y4, Y9           \
	VSUBPS      Y6, Y4, Y4           \
	VADDPS      Y3, Y1, Y10          \
	VADDPS      Y7, Y5, Y11          \
	VSUBPS      Y7, Y5, Y5           \
	VSUBPS      Y1, Y3, Y3           \
	VADDPS      Y10, Y8, Y12         \
	VADDPS      Y11, Y9, Y13         \
	VMOVUPS     Y12, OFF(AX)(R8*1)   \
	VMOVUPS     Y13, OFF(BX)(R8*1)   \
	VSUBPS      Y10, Y8, Y12         \
	VSUBPS      Y11, Y9, Y13         \
	VMOVUPS     128+OFF(DX), Y14     \
	VMOVUPS     192+OFF(DX), Y15     \
	VMULPS      Y15, Y13, Y1         \
	VFMSUB231PS Y14, Y12, Y1         \
	VMULPS      Y14, Y13, Y2         \
	VFMADD231PS Y15, Y12, Y2         \
	VMOVUPS     Y1, OFF(R10)(R8*1)   \
	VMOVUPS     Y2, OFF(R13)(R8*1)   \
	VADDPS      Y5, Y0, Y12          \
	VADDPS      Y3, Y4, Y13          \
	VMOVUPS     OFF(DX), Y14         \
	VMOVUPS     64+OFF(DX), Y15      \
	VMULPS      Y15, Y13, Y1         \
	VFMSUB231PS Y14, Y12, Y1         \
	VMULPS      Y14, Y13, Y2         \
	VFMADD231PS Y15, Y12, Y2         \
	VMOVUPS     Y1, OFF(R11)(R8*1)   \
	VMOVUPS     Y2, OFF(SI)(R8*1)    \
	VSUBPS      Y5, Y0, Y12          \
	VSUBPS      Y3, Y4, Y13          \
	VMOVUPS     256+OFF(DX), Y14     \
	VMOVUPS     320+OFF(DX), Y15     \
	VMULPS      Y15, Y13, Y1         \
	VFMSUB231PS Y14, Y12, Y1         \
	VMULPS      Y14, Y13, Y2         \
	VFMADD231PS Y15, Y12, Y2         \
	VMOVUPS     Y1, OFF(R12)(R8*1)   \
	VMOVUPS     Y2, OFF(DI)(R8*1)

// CONJ_MUL(R, I, WOFF, OR, OI): (OR, OI) = conj(w)·(R, I), w at WOFF(DX).
#define CONJ_MUL(R, I, WOFF, OR, OI) \
	VMOVUPS     WOFF(DX), Y14        \
	VMOVUPS     64+WOFF(DX), Y15     \
	VMULPS      Y15, I, OR           \
	VFMADD231PS Y14, R, OR           \
	VMULPS      Y15, R, OI           \
	VFMSUB231PS Y14, I, OI

#define DIT4_HALF(OFF) \
	VMOVUPS     OFF(R10)(R8*1), Y8   \
	VMOVUPS     OFF(R13)(R8*1), Y9   \
	CONJ_MUL(Y8, Y9, 128+OFF, Y0, Y1) \
	VMOVUPS     OFF(R11)(R8*1), Y8   \
	VMOVUPS     OFF(SI)(R8*1), Y9    \
	CONJ_MUL(Y8, Y9, OFF, Y2, Y3)    \
	VMOVUPS     OFF(R12)(R8*1), Y8   \
	VMOVUPS     OFF(DI)(R8*1), Y9    \
	CONJ_MUL(Y8, Y9, 256+OFF, Y4, Y5) \
	VMOVUPS     OFF(AX)(R8*1), Y6    \
	VMOVUPS     OFF(BX)(R8*1), Y7    \
	VADDPS      Y0, Y6, Y8           \
	VADDPS      Y1, Y7, Y9           \
	VSUBPS      Y0, Y6, Y10          \
	VSUBPS      Y1, Y7, Y11          \
	VADDPS      Y4, Y2, Y12          \
	VADDPS      Y5, Y3, Y13          \
	VSUBPS      Y4, Y2, Y14          \
	VSUBPS      Y5, Y3, Y15          \
	VADDPS      Y12, Y8, Y0          \
	VADDPS      Y13, Y9, Y1          \
	VMOVUPS     Y0, OFF(AX)(R8*1)    \
	VMOVUPS     Y1, OFF(BX)(R8*1)    \
	VSUBPS      Y12, Y8, Y0          \
	VSUBPS      Y13, Y9, Y1          \
	VMOVUPS     Y0, OFF(R11)(R8*1)   \
	VMOVUPS     Y1, OFF(SI)(R8*1)    \
	VSUBPS      Y15, Y10, Y0         \
	VADDPS      Y14, Y11, Y1         \
	VMOVUPS     Y0, OFF(R10)(R8*1)   \
	VMOVUPS     Y1, OFF(R13)(R8*1)   \
	VADDPS      Y15, Y10, Y0         \
	VSUBPS      Y14, Y11, Y1         \
	VMOVUPS     Y0, OFF(R12)(R8*1)   \
	VMOVUPS     Y1, OFF(DI)(R8*1)

#define PASS4_SETUP \
	MOVQ re_base+0(FP), AX \
	MOVQ re_len+8(FP), R9  \
	MOVQ im_base+24(FP), BX \
	MOVQ tv_base+48(FP), R14 \
	MOVQ q+72(FP), CX      \
	SHLQ $2, CX            \
	SHLQ $2, R9            \
	ADDQ AX, R9

#define PASS4_BLOCK \
	LEAQ (AX)(CX*1), R10   \
	LEAQ (R10)(CX*1), R11  \
	LEAQ (R11)(CX*1), R12  \
	LEAQ (BX)(CX*1), R13   \
	LEAQ (R13)(CX*1), SI   \
	LEAQ (SI)(CX*1), DI    \
	MOVQ R14, DX           \
	XORQ R8, R8

// func dif4AVX2(re, im, tv []float32, q int)
TEXT ·dif4AVX2(SB), NOSPLIT, $0-80
	PASS4_SETUP

dif4avx2_block:
	PASS4_BLOCK

dif4avx2_inner:
	DIF4_HALF(0)
	DIF4_HALF(32)
	ADDQ $384, DX
	ADDQ $64, R8
	CMPQ R8, CX
	JB   dif4avx2_inner

	LEAQ (R12)(CX*1), AX
	LEAQ (DI)(CX*1), BX
	CMPQ AX, R9
	JB   dif4avx2_block
	VZEROUPPER
	RET

// func dit4AVX2(re, im, tv []float32, q int)
TEXT ·dit4AVX2(SB), NOSPLIT, $0-80
	PASS4_SETUP

dit4avx2_block:
	PASS4_BLOCK

dit4avx2_inner:
	DIT4_HALF(0)
	DIT4_HALF(32)
	ADDQ $384, DX
	ADDQ $64, R8
	CMPQ R8, CX
	JB   dit4avx2_inner

	LEAQ (R12)(CX*1), AX
	LEAQ (DI)(CX*1), BX
	CMPQ AX, R9
	JB   dit4avx2_block
	VZEROUPPER
	RET

#define DIF2_HALF(OFF) \
	VMOVUPS     OFF(AX)(R8*1), Y0    \
	VMOVUPS     OFF(R10)(R8*1), Y1   \
	VMOVUPS     OFF(BX)(R8*1), Y2    \
	VMOVUPS     OFF(R13)(R8*1), Y3   \
	VADDPS      Y1, Y0, Y4           \
	VADDPS      Y3, Y2, Y5           \
	VSUBPS      Y1, Y0, Y6           \
	VSUBPS      Y3, Y2, Y7           \
	VMOVUPS     Y4, OFF(AX)(R8*1)    \
	VMOVUPS     Y5, OFF(BX)(R8*1)    \
	VMOVUPS     OFF(DX), Y14         \
	VMOVUPS     64+OFF(DX), Y15      \
	VMULPS      Y15, Y7, Y8          \
	VFMSUB231PS Y14, Y6, Y8          \
	VMULPS      Y14, Y7, Y9          \
	VFMADD231PS Y15, Y6, Y9          \
	VMOVUPS     Y8, OFF(R10)(R8*1)   \
	VMOVUPS     Y9, OFF(R13)(R8*1)

#define DIT2_HALF(OFF) \
	VMOVUPS     OFF(R10)(R8*1), Y1   \
	VMOVUPS     OFF(R13)(R8*1), Y3   \
	CONJ_MUL(Y1, Y3, OFF, Y6, Y7)    \
	VMOVUPS     OFF(AX)(R8*1), Y0    \
	VMOVUPS     OFF(BX)(R8*1), Y2    \
	VADDPS      Y6, Y0, Y4           \
	VADDPS      Y7, Y2, Y5           \
	VSUBPS      Y6, Y0, Y8           \
	VSUBPS      Y7, Y2, Y9           \
	VMOVUPS     Y4, OFF(AX)(R8*1)    \
	VMOVUPS     Y5, OFF(BX)(R8*1)    \
	VMOVUPS     Y8, OFF(R10)(R8*1)   \
	VMOVUPS     Y9, OFF(R13)(R8*1)

// func dif2AVX2(re, im, tv []float32, q int)
TEXT ·dif2AVX2(SB), NOSPLIT, $0-80
	PASS4_SETUP

dif2avx2_block:
	LEAQ (AX)(CX*1), R10
	LEAQ (BX)(CX*1), R13
	MOVQ R14, DX
	XORQ R8, R8

dif2avx2_inner:
	DIF2_HALF(0)
	DIF2_HALF(32)
	ADDQ $128, DX
	ADDQ $64, R8
	CMPQ R8, CX
	JB   dif2avx2_inner

	LEAQ (R10)(CX*1), AX
	LEAQ (R13)(CX*1), BX
	CMPQ AX, R9
	JB   dif2avx2_block
	VZEROUPPER
	RET

// func dit2AVX2(re, im, tv []float32, q int)
TEXT ·dit2AVX2(SB), NOSPLIT, $0-80
	PASS4_SETUP

dit2avx2_block:
	LEAQ (AX)(CX*1), R10
	LEAQ (BX)(CX*1), R13
	MOVQ R14, DX
	XORQ R8, R8

dit2avx2_inner:
	DIT2_HALF(0)
	DIT2_HALF(32)
	ADDQ $128, DX
	ADDQ $64, R8
	CMPQ R8, CX
	JB   dit2avx2_inner

	LEAQ (R10)(CX*1), AX
	LEAQ (R13)(CX*1), BX
	CMPQ AX, R9
	JB   dit2avx2_block
	VZEROUPPER
	RET

// The AVX2 tail: one 16-point block in four registers, real and
// imaginary parts of points 0-7 (quarters 0, 1) and 8-15 (quarters 2,
// 3), so the q = 4 stage's first step is a plain add and subtract of
// the two halves, and its second swaps 128-bit halves (VPERM2F128). The
// q = 1 stage works within 128-bit lanes as on AVX-512, with blends for
// the masks. Constants (tailConst2) at DX: 0 the q = 4 second-step
// signs, 32 and 64 the q = 1 signs, 96/128 the twiddles (re, im) of
// points 0-7, 160/192 of points 8-15; Y15 is zero.

// FWD4_2: (Y0, Y1, Y2, Y3) = re 0-7, re 8-15, im 0-7, im 8-15 in;
// (Y4, Y1, Y2, Y3) out.
#define FWD4_2 \
	VADDPS      Y1, Y0, Y4           \
	VSUBPS      Y1, Y0, Y5           \
	VADDPS      Y3, Y2, Y6           \
	VSUBPS      Y3, Y2, Y7           \
	VBLENDPS    $0xF0, Y7, Y5, Y1    \
	VSUBPS      Y5, Y15, Y3          \
	VBLENDPS    $0xF0, Y3, Y7, Y3    \
	VPERM2F128  $0x01, Y4, Y4, Y0    \
	VFMADD231PS 0(DX), Y4, Y0        \
	VPERM2F128  $0x01, Y1, Y1, Y5    \
	VFMADD231PS 0(DX), Y1, Y5        \
	VPERM2F128  $0x01, Y6, Y6, Y2    \
	VFMADD231PS 0(DX), Y6, Y2        \
	VPERM2F128  $0x01, Y3, Y3, Y7    \
	VFMADD231PS 0(DX), Y3, Y7        \
	VMULPS      128(DX), Y2, Y4      \
	VFMSUB231PS 96(DX), Y0, Y4       \
	VMULPS      96(DX), Y2, Y2       \
	VFMADD231PS 128(DX), Y0, Y2      \
	VMULPS      192(DX), Y7, Y1      \
	VFMSUB231PS 160(DX), Y5, Y1      \
	VMULPS      160(DX), Y7, Y3      \
	VFMADD231PS 192(DX), Y5, Y3

// FWD1_2: stage q = 1 on 8 points; (R, I) in, (T1, T2) out.
#define FWD1_2(R, I, T1, T2) \
	VPERMILPS   $0x4E, R, T1         \
	VFMADD231PS 32(DX), R, T1        \
	VPERMILPS   $0x4E, I, T2         \
	VFMADD231PS 32(DX), I, T2        \
	VBLENDPS    $0x88, T2, T1, R     \
	VSUBPS      T1, Y15, I           \
	VBLENDPS    $0x88, I, T2, I      \
	VPERMILPS   $0xB1, R, T1         \
	VFMADD231PS 64(DX), R, T1        \
	VPERMILPS   $0xB1, I, T2         \
	VFMADD231PS 64(DX), I, T2

// INV1_2: inverse of FWD1_2; (R, I) in, (T1, T2) out.
#define INV1_2(R, I, T1, T2) \
	VPERMILPS   $0xB1, R, T1         \
	VFMADD231PS 64(DX), R, T1        \
	VPERMILPS   $0xB1, I, T2         \
	VFMADD231PS 64(DX), I, T2        \
	VBLENDPS    $0x88, T1, T2, I     \
	VSUBPS      T2, Y15, R           \
	VBLENDPS    $0x88, R, T1, R      \
	VPERMILPS   $0x4E, R, T1         \
	VFMADD231PS 32(DX), R, T1        \
	VPERMILPS   $0x4E, I, T2         \
	VFMADD231PS 32(DX), I, T2

// INV4_2: inverse of FWD4_2; (Y0, Y1, Y2, Y3) in, (Y6, Y7, Y8, Y9)
// out.
#define INV4_2 \
	VMULPS      128(DX), Y2, Y4      \
	VFMADD231PS 96(DX), Y0, Y4       \
	VMULPS      128(DX), Y0, Y5      \
	VFMSUB231PS 96(DX), Y2, Y5       \
	VMULPS      192(DX), Y3, Y6      \
	VFMADD231PS 160(DX), Y1, Y6      \
	VMULPS      192(DX), Y1, Y7      \
	VFMSUB231PS 160(DX), Y3, Y7      \
	VPERM2F128  $0x01, Y4, Y4, Y0    \
	VFMADD231PS 0(DX), Y4, Y0        \
	VPERM2F128  $0x01, Y6, Y6, Y1    \
	VFMADD231PS 0(DX), Y6, Y1        \
	VPERM2F128  $0x01, Y5, Y5, Y2    \
	VFMADD231PS 0(DX), Y5, Y2        \
	VPERM2F128  $0x01, Y7, Y7, Y3    \
	VFMADD231PS 0(DX), Y7, Y3        \
	VSUBPS      Y3, Y15, Y4          \
	VBLENDPS    $0xF0, Y4, Y1, Y4    \
	VBLENDPS    $0xF0, Y1, Y3, Y5    \
	VADDPS      Y4, Y0, Y6           \
	VSUBPS      Y4, Y0, Y7           \
	VADDPS      Y5, Y2, Y8           \
	VSUBPS      Y5, Y2, Y9

#define TAIL2_SETUP \
	MOVQ re_base+0(FP), AX \
	MOVQ re_len+8(FP), CX  \
	MOVQ im_base+24(FP), BX \
	VXORPS Y15, Y15, Y15   \
	SHLQ $2, CX            \
	ADDQ AX, CX

// func tailFwdAVX2(re, im, c []float32)
TEXT ·tailFwdAVX2(SB), NOSPLIT, $0-72
	TAIL2_SETUP
	MOVQ c_base+48(FP), DX
	CMPQ AX, CX
	JAE  tailfwd2_done

tailfwd2_loop:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS (BX), Y2
	VMOVUPS 32(BX), Y3
	FWD4_2
	FWD1_2(Y4, Y2, Y5, Y6)
	FWD1_2(Y1, Y3, Y7, Y8)
	VMOVUPS Y5, (AX)
	VMOVUPS Y7, 32(AX)
	VMOVUPS Y6, (BX)
	VMOVUPS Y8, 32(BX)
	ADDQ    $64, AX
	ADDQ    $64, BX
	CMPQ    AX, CX
	JB      tailfwd2_loop

tailfwd2_done:
	VZEROUPPER
	RET

// func tailInvAVX2(re, im, c []float32)
TEXT ·tailInvAVX2(SB), NOSPLIT, $0-72
	TAIL2_SETUP
	MOVQ c_base+48(FP), DX
	CMPQ AX, CX
	JAE  tailinv2_done

tailinv2_loop:
	VMOVUPS (AX), Y4
	VMOVUPS (BX), Y9
	VMOVUPS 32(AX), Y10
	VMOVUPS 32(BX), Y11
	INV1_2(Y4, Y9, Y0, Y2)
	INV1_2(Y10, Y11, Y1, Y3)
	INV4_2
	VMOVUPS Y6, (AX)
	VMOVUPS Y7, 32(AX)
	VMOVUPS Y8, (BX)
	VMOVUPS Y9, 32(BX)
	ADDQ    $64, AX
	ADDQ    $64, BX
	CMPQ    AX, CX
	JB      tailinv2_loop

tailinv2_done:
	VZEROUPPER
	RET

// func tailConvAVX2(re, im, hr, hi, c []float32)
TEXT ·tailConvAVX2(SB), NOSPLIT, $0-120
	TAIL2_SETUP
	MOVQ hr_base+48(FP), SI
	MOVQ hi_base+72(FP), DI
	MOVQ c_base+96(FP), DX
	CMPQ AX, CX
	JAE  tailconv2_done

tailconv2_loop:
	VMOVUPS     (AX), Y0
	VMOVUPS     32(AX), Y1
	VMOVUPS     (BX), Y2
	VMOVUPS     32(BX), Y3
	FWD4_2
	FWD1_2(Y4, Y2, Y5, Y6)
	FWD1_2(Y1, Y3, Y7, Y8)
	VMULPS      (DI), Y6, Y4      // points 0-7 times h
	VFMSUB231PS (SI), Y5, Y4      // xr·hr - xi·hi
	VMULPS      (SI), Y6, Y9
	VFMADD231PS (DI), Y5, Y9      // xi·hr + xr·hi
	VMULPS      32(DI), Y8, Y10   // points 8-15
	VFMSUB231PS 32(SI), Y7, Y10
	VMULPS      32(SI), Y8, Y11
	VFMADD231PS 32(DI), Y7, Y11
	INV1_2(Y4, Y9, Y0, Y2)
	INV1_2(Y10, Y11, Y1, Y3)
	INV4_2
	VMOVUPS     Y6, (AX)
	VMOVUPS     Y7, 32(AX)
	VMOVUPS     Y8, (BX)
	VMOVUPS     Y9, 32(BX)
	ADDQ        $64, AX
	ADDQ        $64, BX
	ADDQ        $64, SI
	ADDQ        $64, DI
	CMPQ        AX, CX
	JB          tailconv2_loop

tailconv2_done:
	VZEROUPPER
	RET

// func deinterleaveAVX2(re, im, src []float32)
// re[i], im[i] = src[2i], src[2i+1], 8 at a time; len(re) a multiple of
// 8, len(im) = len(re), len(src) = 2·len(re).
TEXT ·deinterleaveAVX2(SB), NOSPLIT, $0-72
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), CX
	MOVQ im_base+24(FP), BX
	MOVQ src_base+48(FP), SI
	SHLQ $2, CX
	ADDQ AX, CX
	CMPQ AX, CX
	JAE  deint_done

deint_loop:
	VMOVUPS  (SI), Y0               // r0 i0 r1 i1 r2 i2 r3 i3
	VMOVUPS  32(SI), Y1             // r4 i4 … r7 i7
	VSHUFPS  $0x88, Y1, Y0, Y2      // r0 r1 r4 r5 r2 r3 r6 r7
	VSHUFPS  $0xDD, Y1, Y0, Y3      // the same for i
	VPERMPD  $0xD8, Y2, Y2
	VPERMPD  $0xD8, Y3, Y3
	VMOVUPS  Y2, (AX)
	VMOVUPS  Y3, (BX)
	ADDQ     $32, AX
	ADDQ     $32, BX
	ADDQ     $64, SI
	CMPQ     AX, CX
	JB       deint_loop

deint_done:
	VZEROUPPER
	RET

// func interleaveAVX2(dst, re, im []float32)
// dst[2i], dst[2i+1] = re[i], im[i], 8 at a time; len(re) a multiple of
// 8, len(im) = len(re), len(dst) = 2·len(re).
TEXT ·interleaveAVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ re_base+24(FP), AX
	MOVQ re_len+32(FP), CX
	MOVQ im_base+48(FP), BX
	SHLQ $2, CX
	ADDQ AX, CX
	CMPQ AX, CX
	JAE  inter_done

inter_loop:
	VMOVUPS    (AX), Y0
	VMOVUPS    (BX), Y1
	VUNPCKLPS  Y1, Y0, Y2           // r0 i0 r1 i1 | r4 i4 r5 i5
	VUNPCKHPS  Y1, Y0, Y3           // r2 i2 r3 i3 | r6 i6 r7 i7
	VPERM2F128 $0x20, Y3, Y2, Y4
	VPERM2F128 $0x31, Y3, Y2, Y5
	VMOVUPS    Y4, (DI)
	VMOVUPS    Y5, 32(DI)
	ADDQ       $32, AX
	ADDQ       $32, BX
	ADDQ       $64, DI
	CMPQ       AX, CX
	JB         inter_loop

inter_done:
	VZEROUPPER
	RET
