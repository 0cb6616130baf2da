//go:build amd64 && !purego

#include "textflag.h"

// Radix-4 FFT passes on split arrays, 16 points per ZMM register. See
// dif4 and dit4 in fft.go for the arithmetic; these are the same loops
// over j, sixteen at a time, so q must be a multiple of 16, len(re) =
// len(im) a multiple of 4q, and tv the stage's twiddles in chunks of 96
// floats per 16 j's: w1r, w1i, w2r, w2i, w3r, w3i (16 each).
//
// Registers: AX/BX re/im quarter 0, R10-R12 re quarters 1-3, R13/SI/DI
// im quarters 1-3, CX the quarter length in bytes, R8 the byte offset j,
// DX the twiddle chunk, R14 the twiddle table, R9 the end of re.

// func dif4AVX512(re, im, tv []float32, q int)
TEXT ·dif4AVX512(SB), NOSPLIT, $0-80
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), R9
	MOVQ im_base+24(FP), BX
	MOVQ tv_base+48(FP), R14
	MOVQ q+72(FP), CX
	SHLQ $2, CX
	SHLQ $2, R9
	ADDQ AX, R9

dif4_block:
	LEAQ (AX)(CX*1), R10
	LEAQ (R10)(CX*1), R11
	LEAQ (R11)(CX*1), R12
	LEAQ (BX)(CX*1), R13
	LEAQ (R13)(CX*1), SI
	LEAQ (SI)(CX*1), DI
	MOVQ R14, DX
	XORQ R8, R8

dif4_inner:
	VMOVUPS (AX)(R8*1), Z0
	VMOVUPS (R10)(R8*1), Z1
	VMOVUPS (R11)(R8*1), Z2
	VMOVUPS (R12)(R8*1), Z3
	VMOVUPS (BX)(R8*1), Z4
	VMOVUPS (R13)(R8*1), Z5
	VMOVUPS (SI)(R8*1), Z6
	VMOVUPS (DI)(R8*1), Z7
	VADDPS  Z2, Z0, Z8  // t0r = a0r + a2r
	VSUBPS  Z2, Z0, Z9  // t1r = a0r - a2r
	VADDPS  Z6, Z4, Z10 // t0i
	VSUBPS  Z6, Z4, Z11 // t1i
	VADDPS  Z3, Z1, Z12 // t2r = a1r + a3r
	VADDPS  Z7, Z5, Z13 // t2i
	VSUBPS  Z7, Z5, Z14 // t3r = a1i - a3i
	VSUBPS  Z1, Z3, Z15 // t3i = a3r - a1r
	VADDPS  Z12, Z8, Z16
	VADDPS  Z13, Z10, Z17
	VMOVUPS Z16, (AX)(R8*1)
	VMOVUPS Z17, (BX)(R8*1)

	// quarter 1: (t0 - t2)·w2
	VSUBPS      Z12, Z8, Z18
	VSUBPS      Z13, Z10, Z19
	VMOVUPS     128(DX), Z20
	VMOVUPS     192(DX), Z21
	VMULPS      Z21, Z19, Z22
	VFMSUB231PS Z20, Z18, Z22
	VMULPS      Z20, Z19, Z23
	VFMADD231PS Z21, Z18, Z23
	VMOVUPS     Z22, (R10)(R8*1)
	VMOVUPS     Z23, (R13)(R8*1)

	// quarter 2: (t1 + t3)·w1
	VADDPS      Z14, Z9, Z18
	VADDPS      Z15, Z11, Z19
	VMOVUPS     (DX), Z20
	VMOVUPS     64(DX), Z21
	VMULPS      Z21, Z19, Z22
	VFMSUB231PS Z20, Z18, Z22
	VMULPS      Z20, Z19, Z23
	VFMADD231PS Z21, Z18, Z23
	VMOVUPS     Z22, (R11)(R8*1)
	VMOVUPS     Z23, (SI)(R8*1)

	// quarter 3: (t1 - t3)·w3
	VSUBPS      Z14, Z9, Z18
	VSUBPS      Z15, Z11, Z19
	VMOVUPS     256(DX), Z20
	VMOVUPS     320(DX), Z21
	VMULPS      Z21, Z19, Z22
	VFMSUB231PS Z20, Z18, Z22
	VMULPS      Z20, Z19, Z23
	VFMADD231PS Z21, Z18, Z23
	VMOVUPS     Z22, (R12)(R8*1)
	VMOVUPS     Z23, (DI)(R8*1)

	ADDQ $384, DX
	ADDQ $64, R8
	CMPQ R8, CX
	JB   dif4_inner

	LEAQ (R12)(CX*1), AX
	LEAQ (DI)(CX*1), BX
	CMPQ AX, R9
	JB   dif4_block
	VZEROUPPER
	RET

// func dit4AVX512(re, im, tv []float32, q int)
TEXT ·dit4AVX512(SB), NOSPLIT, $0-80
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), R9
	MOVQ im_base+24(FP), BX
	MOVQ tv_base+48(FP), R14
	MOVQ q+72(FP), CX
	SHLQ $2, CX
	SHLQ $2, R9
	ADDQ AX, R9

dit4_block:
	LEAQ (AX)(CX*1), R10
	LEAQ (R10)(CX*1), R11
	LEAQ (R11)(CX*1), R12
	LEAQ (BX)(CX*1), R13
	LEAQ (R13)(CX*1), SI
	LEAQ (SI)(CX*1), DI
	MOVQ R14, DX
	XORQ R8, R8

dit4_inner:
	// y1 = conj(w2)·quarter 1 -> Z0, Z1
	VMOVUPS     (R10)(R8*1), Z16
	VMOVUPS     (R13)(R8*1), Z17
	VMOVUPS     128(DX), Z20
	VMOVUPS     192(DX), Z21
	VMULPS      Z21, Z17, Z0
	VFMADD231PS Z20, Z16, Z0  // yr·wr + yi·wi
	VMULPS      Z21, Z16, Z1
	VFMSUB231PS Z20, Z17, Z1  // yi·wr - yr·wi

	// y2 = conj(w1)·quarter 2 -> Z2, Z3
	VMOVUPS     (R11)(R8*1), Z16
	VMOVUPS     (SI)(R8*1), Z17
	VMOVUPS     (DX), Z20
	VMOVUPS     64(DX), Z21
	VMULPS      Z21, Z17, Z2
	VFMADD231PS Z20, Z16, Z2
	VMULPS      Z21, Z16, Z3
	VFMSUB231PS Z20, Z17, Z3

	// y3 = conj(w3)·quarter 3 -> Z4, Z5
	VMOVUPS     (R12)(R8*1), Z16
	VMOVUPS     (DI)(R8*1), Z17
	VMOVUPS     256(DX), Z20
	VMOVUPS     320(DX), Z21
	VMULPS      Z21, Z17, Z4
	VFMADD231PS Z20, Z16, Z4
	VMULPS      Z21, Z16, Z5
	VFMSUB231PS Z20, Z17, Z5

	VMOVUPS (AX)(R8*1), Z6  // y0r
	VMOVUPS (BX)(R8*1), Z7  // y0i
	VADDPS  Z0, Z6, Z8      // T0r = y0 + y1
	VADDPS  Z1, Z7, Z9      // T0i
	VSUBPS  Z0, Z6, Z10     // T2r = y0 - y1
	VSUBPS  Z1, Z7, Z11     // T2i
	VADDPS  Z4, Z2, Z12     // T1r = y2 + y3
	VADDPS  Z5, Z3, Z13     // T1i
	VSUBPS  Z4, Z2, Z14     // T3r = y2 - y3
	VSUBPS  Z5, Z3, Z15     // T3i

	VADDPS  Z12, Z8, Z16
	VADDPS  Z13, Z9, Z17
	VMOVUPS Z16, (AX)(R8*1)
	VMOVUPS Z17, (BX)(R8*1)
	VSUBPS  Z12, Z8, Z16
	VSUBPS  Z13, Z9, Z17
	VMOVUPS Z16, (R11)(R8*1)
	VMOVUPS Z17, (SI)(R8*1)
	VSUBPS  Z15, Z10, Z16   // T2r - T3i
	VADDPS  Z14, Z11, Z17   // T2i + T3r
	VMOVUPS Z16, (R10)(R8*1)
	VMOVUPS Z17, (R13)(R8*1)
	VADDPS  Z15, Z10, Z16   // T2r + T3i
	VSUBPS  Z14, Z11, Z17   // T2i - T3r
	VMOVUPS Z16, (R12)(R8*1)
	VMOVUPS Z17, (DI)(R8*1)

	ADDQ $384, DX
	ADDQ $64, R8
	CMPQ R8, CX
	JB   dit4_inner

	LEAQ (R12)(CX*1), AX
	LEAQ (DI)(CX*1), BX
	CMPQ AX, R9
	JB   dit4_block
	VZEROUPPER
	RET

// func cmulAVX512(xr, xi, hr, hi []float32)
//
// x[i] *= h[i] for split complex arrays; len(xr) must be a multiple of
// 16 and the other slices at least as long.
TEXT ·cmulAVX512(SB), NOSPLIT, $0-96
	MOVQ xr_base+0(FP), AX
	MOVQ xr_len+8(FP), CX
	MOVQ xi_base+24(FP), BX
	MOVQ hr_base+48(FP), SI
	MOVQ hi_base+72(FP), DI
	SHLQ $2, CX
	XORQ R8, R8
	TESTQ CX, CX
	JZ   cmul_done

cmul_loop:
	VMOVUPS     (AX)(R8*1), Z0
	VMOVUPS     (BX)(R8*1), Z1
	VMOVUPS     (SI)(R8*1), Z2
	VMOVUPS     (DI)(R8*1), Z3
	VMULPS      Z3, Z1, Z4
	VFMSUB231PS Z2, Z0, Z4  // xr·hr - xi·hi
	VMULPS      Z3, Z0, Z5
	VFMADD231PS Z2, Z1, Z5  // xr·hi + xi·hr
	VMOVUPS     Z4, (AX)(R8*1)
	VMOVUPS     Z5, (BX)(R8*1)
	ADDQ        $64, R8
	CMPQ        R8, CX
	JB          cmul_loop

cmul_done:
	VZEROUPPER
	RET

// Radix-2 passes, same layout: tv holds 32 floats per 16 j's (w1r,
// w1i). AX/BX re/im half 0, R10/R13 re/im half 1.

// func dif2AVX512(re, im, tv []float32, q int)
TEXT ·dif2AVX512(SB), NOSPLIT, $0-80
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), R9
	MOVQ im_base+24(FP), BX
	MOVQ tv_base+48(FP), R14
	MOVQ q+72(FP), CX
	SHLQ $2, CX
	SHLQ $2, R9
	ADDQ AX, R9

dif2_block:
	LEAQ (AX)(CX*1), R10
	LEAQ (BX)(CX*1), R13
	MOVQ R14, DX
	XORQ R8, R8

dif2_inner:
	VMOVUPS     (AX)(R8*1), Z0
	VMOVUPS     (R10)(R8*1), Z1
	VMOVUPS     (BX)(R8*1), Z2
	VMOVUPS     (R13)(R8*1), Z3
	VADDPS      Z1, Z0, Z4
	VADDPS      Z3, Z2, Z5
	VSUBPS      Z1, Z0, Z6  // ur
	VSUBPS      Z3, Z2, Z7  // ui
	VMOVUPS     Z4, (AX)(R8*1)
	VMOVUPS     Z5, (BX)(R8*1)
	VMOVUPS     (DX), Z20
	VMOVUPS     64(DX), Z21
	VMULPS      Z21, Z7, Z8
	VFMSUB231PS Z20, Z6, Z8  // ur·wr - ui·wi
	VMULPS      Z20, Z7, Z9
	VFMADD231PS Z21, Z6, Z9  // ur·wi + ui·wr
	VMOVUPS     Z8, (R10)(R8*1)
	VMOVUPS     Z9, (R13)(R8*1)
	ADDQ        $128, DX
	ADDQ        $64, R8
	CMPQ        R8, CX
	JB          dif2_inner

	LEAQ (R10)(CX*1), AX
	LEAQ (R13)(CX*1), BX
	CMPQ AX, R9
	JB   dif2_block
	VZEROUPPER
	RET

// func dit2AVX512(re, im, tv []float32, q int)
TEXT ·dit2AVX512(SB), NOSPLIT, $0-80
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), R9
	MOVQ im_base+24(FP), BX
	MOVQ tv_base+48(FP), R14
	MOVQ q+72(FP), CX
	SHLQ $2, CX
	SHLQ $2, R9
	ADDQ AX, R9

dit2_block:
	LEAQ (AX)(CX*1), R10
	LEAQ (BX)(CX*1), R13
	MOVQ R14, DX
	XORQ R8, R8

dit2_inner:
	VMOVUPS     (R10)(R8*1), Z1
	VMOVUPS     (R13)(R8*1), Z3
	VMOVUPS     (DX), Z20
	VMOVUPS     64(DX), Z21
	VMULPS      Z21, Z3, Z6
	VFMADD231PS Z20, Z1, Z6  // y1r = yr·wr + yi·wi
	VMULPS      Z21, Z1, Z7
	VFMSUB231PS Z20, Z3, Z7  // y1i = yi·wr - yr·wi
	VMOVUPS     (AX)(R8*1), Z0
	VMOVUPS     (BX)(R8*1), Z2
	VADDPS      Z6, Z0, Z4
	VADDPS      Z7, Z2, Z5
	VSUBPS      Z6, Z0, Z8
	VSUBPS      Z7, Z2, Z9
	VMOVUPS     Z4, (AX)(R8*1)
	VMOVUPS     Z5, (BX)(R8*1)
	VMOVUPS     Z8, (R10)(R8*1)
	VMOVUPS     Z9, (R13)(R8*1)
	ADDQ        $128, DX
	ADDQ        $64, R8
	CMPQ        R8, CX
	JB          dit2_inner

	LEAQ (R10)(CX*1), AX
	LEAQ (R13)(CX*1), BX
	CMPQ AX, R9
	JB   dit2_block
	VZEROUPPER
	RET

// The tail: the last two radix-4 stages (q = 4, then q = 1) of one
// 16-point block held in one register pair (R real, I imaginary), with
// lane shuffles instead of loads and stores. Each stage is
//
//	A: U = sA·x + perm(x)   lanes (a0+a2, a1+a3, a0-a2, a1-a3)
//	   lane 3 times -i      (t0, t2, t1, t3)
//	B: W = sB·V + perm(V)   (t0+t2, t0-t2, t1+t3, t1-t3)
//
// where the lanes are 128-bit quarters for q = 4 (VSHUFF32X4) and
// elements within each quarter for q = 1 (VPERMILPS). The inverse runs
// the steps backwards (B, times +i, A). Constants (tailConst in
// fft_amd64.go): Z24/Z25 the signs of A/B for q = 4, Z26/Z27 for q = 1,
// Z28/Z29 the q = 4 twiddles, Z30 zero; K1 selects quarter 3, K2
// element 3 of every quarter.

#define TAIL_SETUP(c) \
	VMOVUPS    0(c), Z24   \
	VMOVUPS    64(c), Z25  \
	VMOVUPS    128(c), Z26 \
	VMOVUPS    192(c), Z27 \
	VMOVUPS    256(c), Z28 \
	VMOVUPS    320(c), Z29 \
	VXORPS     Z30, Z30, Z30 \
	MOVL       $0xF000, R8 \
	KMOVW      R8, K1     \
	MOVL       $0x8888, R8 \
	KMOVW      R8, K2

// FWD4: stage q = 4 with twiddles; (R, I) in and out.
#define FWD4(R, I, T1, T2, T3) \
	VSHUFF32X4  $0x4E, R, R, T1  \
	VSHUFF32X4  $0x4E, I, I, T2  \
	VFMADD213PS T1, Z24, R       \
	VFMADD213PS T2, Z24, I       \
	VBLENDMPS   I, R, K1, T1     \
	VSUBPS      R, Z30, K1, I    \
	VSHUFF32X4  $0xB1, T1, T1, T2 \
	VSHUFF32X4  $0xB1, I, I, T3  \
	VFMADD213PS T2, Z25, T1      \
	VFMADD213PS T3, Z25, I       \
	VMULPS      Z29, I, R        \
	VFMSUB231PS Z28, T1, R       \
	VMULPS      Z28, I, I        \
	VFMADD231PS Z29, T1, I

// FWD1: stage q = 1; (R, I) in, (T1, I) out.
#define FWD1(R, I, T1, T2, T3) \
	VPERMILPS   $0x4E, R, T1     \
	VPERMILPS   $0x4E, I, T2     \
	VFMADD213PS T1, Z26, R       \
	VFMADD213PS T2, Z26, I       \
	VBLENDMPS   I, R, K2, T1     \
	VSUBPS      R, Z30, K2, I    \
	VPERMILPS   $0xB1, T1, T2    \
	VPERMILPS   $0xB1, I, T3     \
	VFMADD213PS T2, Z27, T1      \
	VFMADD213PS T3, Z27, I

// INV1: inverse of FWD1; (R, I) in, (R, T1) out.
#define INV1(R, I, T1, T2, T3) \
	VPERMILPS   $0xB1, R, T1     \
	VPERMILPS   $0xB1, I, T2     \
	VFMADD213PS T1, Z27, R       \
	VFMADD213PS T2, Z27, I       \
	VBLENDMPS   R, I, K2, T1     \
	VSUBPS      I, Z30, K2, R    \
	VPERMILPS   $0x4E, R, T2     \
	VPERMILPS   $0x4E, T1, T3    \
	VFMADD213PS T2, Z26, R       \
	VFMADD213PS T3, Z26, T1

// INV4: inverse of FWD4 (conjugate twiddles first); (R, I) in, (T1, R)
// out.
#define INV4(R, I, T1, T2, T3) \
	VMULPS      Z29, I, T1       \
	VFMADD231PS Z28, R, T1       \
	VMULPS      Z29, R, T2       \
	VFMSUB231PS Z28, I, T2       \
	VSHUFF32X4  $0xB1, T1, T1, R \
	VSHUFF32X4  $0xB1, T2, T2, I \
	VFMADD213PS R, Z25, T1       \
	VFMADD213PS I, Z25, T2       \
	VBLENDMPS   T1, T2, K1, R    \
	VSUBPS      T2, Z30, K1, T1  \
	VSHUFF32X4  $0x4E, T1, T1, I \
	VSHUFF32X4  $0x4E, R, R, T3  \
	VFMADD213PS I, Z24, T1       \
	VFMADD213PS T3, Z24, R

// func tailFwdAVX512(re, im, c []float32)
// len(re) a multiple of 16, len(im) = len(re).
TEXT ·tailFwdAVX512(SB), NOSPLIT, $0-72
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), CX
	MOVQ im_base+24(FP), BX
	MOVQ c_base+48(FP), DX
	TAIL_SETUP(DX)
	SHLQ $2, CX
	ADDQ AX, CX
	CMPQ AX, CX
	JAE  tailfwd_done

tailfwd_loop:
	VMOVUPS (AX), Z0
	VMOVUPS (BX), Z1
	FWD4(Z0, Z1, Z2, Z3, Z4)
	FWD1(Z0, Z1, Z2, Z3, Z4)
	VMOVUPS Z2, (AX)
	VMOVUPS Z1, (BX)
	ADDQ    $64, AX
	ADDQ    $64, BX
	CMPQ    AX, CX
	JB      tailfwd_loop

tailfwd_done:
	VZEROUPPER
	RET

// func tailInvAVX512(re, im, c []float32)
TEXT ·tailInvAVX512(SB), NOSPLIT, $0-72
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), CX
	MOVQ im_base+24(FP), BX
	MOVQ c_base+48(FP), DX
	TAIL_SETUP(DX)
	SHLQ $2, CX
	ADDQ AX, CX
	CMPQ AX, CX
	JAE  tailinv_done

tailinv_loop:
	VMOVUPS (AX), Z0
	VMOVUPS (BX), Z1
	INV1(Z0, Z1, Z2, Z3, Z4)
	INV4(Z0, Z2, Z1, Z3, Z4)
	VMOVUPS Z1, (AX)
	VMOVUPS Z0, (BX)
	ADDQ    $64, AX
	ADDQ    $64, BX
	CMPQ    AX, CX
	JB      tailinv_loop

tailinv_done:
	VZEROUPPER
	RET

// func tailConvAVX512(re, im, hr, hi, c []float32)
// The forward tail, x *= h, the inverse tail, block by block.
TEXT ·tailConvAVX512(SB), NOSPLIT, $0-120
	MOVQ re_base+0(FP), AX
	MOVQ re_len+8(FP), CX
	MOVQ im_base+24(FP), BX
	MOVQ hr_base+48(FP), SI
	MOVQ hi_base+72(FP), DI
	MOVQ c_base+96(FP), DX
	TAIL_SETUP(DX)
	SHLQ $2, CX
	ADDQ AX, CX
	CMPQ AX, CX
	JAE  tailconv_done

tailconv_loop:
	VMOVUPS     (AX), Z0
	VMOVUPS     (BX), Z1
	FWD4(Z0, Z1, Z2, Z3, Z4)
	FWD1(Z0, Z1, Z2, Z3, Z4)
	VMOVUPS     (SI), Z3
	VMOVUPS     (DI), Z4
	VMULPS      Z4, Z1, Z0
	VFMSUB231PS Z3, Z2, Z0  // xr·hr - xi·hi
	VMULPS      Z3, Z1, Z1
	VFMADD231PS Z4, Z2, Z1  // xi·hr + xr·hi
	INV1(Z0, Z1, Z2, Z3, Z4)
	INV4(Z0, Z2, Z1, Z3, Z4)
	VMOVUPS     Z1, (AX)
	VMOVUPS     Z0, (BX)
	ADDQ        $64, AX
	ADDQ        $64, BX
	ADDQ        $64, SI
	ADDQ        $64, DI
	CMPQ        AX, CX
	JB          tailconv_loop

tailconv_done:
	VZEROUPPER
	RET
