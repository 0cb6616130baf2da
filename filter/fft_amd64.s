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
