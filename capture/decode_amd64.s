//go:build amd64 && !purego

#include "textflag.h"

// Widening decodes of stored integers to float32: each value is extended
// to int32 and converted (exactly: |v| < 2^24); the first three scale it
// by a power of two (exactly), decodeU8SDRAVX2 as its table does (below),
// so the results are the pure-Go loops' bit for bit. len(dst)
// is a multiple of 8, and src holds that many values.

// CVT4 converts Y0-Y3 to float32 and scales them by Y7; STORE4 stores
// them at DI; CVT1 converts and scales Y0 alone.
#define CVT4 \
	VCVTDQ2PS Y0, Y0; \
	VCVTDQ2PS Y1, Y1; \
	VCVTDQ2PS Y2, Y2; \
	VCVTDQ2PS Y3, Y3; \
	VMULPS    Y7, Y0, Y0; \
	VMULPS    Y7, Y1, Y1; \
	VMULPS    Y7, Y2, Y2; \
	VMULPS    Y7, Y3, Y3

#define STORE4 \
	VMOVUPS Y0, (DI); \
	VMOVUPS Y1, 32(DI); \
	VMOVUPS Y2, 64(DI); \
	VMOVUPS Y3, 96(DI)

#define CVT1 \
	VCVTDQ2PS Y0, Y0; \
	VMULPS    Y7, Y0, Y0

DATA decScale8<>+0(SB)/4, $0x3c000000 // 1/128
GLOBL decScale8<>(SB), RODATA|NOPTR, $4
DATA decScale16<>+0(SB)/4, $0x38000000 // 1/32768
GLOBL decScale16<>(SB), RODATA|NOPTR, $4
DATA decHalf<>+0(SB)/4, $128
GLOBL decHalf<>(SB), RODATA|NOPTR, $4

// func decodeI8AVX2(dst []float32, src []byte)
TEXT ·decodeI8AVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	VBROADCASTSS decScale8<>(SB), Y7

i8loop32:
	CMPQ CX, $32
	JB   i8loop8
	VPMOVSXBD (SI), Y0
	VPMOVSXBD 8(SI), Y1
	VPMOVSXBD 16(SI), Y2
	VPMOVSXBD 24(SI), Y3
	CVT4
	STORE4
	ADDQ      $32, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       i8loop32

i8loop8:
	CMPQ CX, $8
	JB   i8done
	VPMOVSXBD (SI), Y0
	CVT1
	VMOVUPS Y0, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       i8loop8

i8done:
	VZEROUPPER
	RET

// func decodeU8HalfAVX2(dst []float32, src []byte)
TEXT ·decodeU8HalfAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	VBROADCASTSS decScale8<>(SB), Y7
	VPBROADCASTD decHalf<>(SB), Y6

u8loop32:
	CMPQ CX, $32
	JB   u8loop8
	VPMOVZXBD (SI), Y0
	VPMOVZXBD 8(SI), Y1
	VPMOVZXBD 16(SI), Y2
	VPMOVZXBD 24(SI), Y3
	VPSUBD    Y6, Y0, Y0
	VPSUBD    Y6, Y1, Y1
	VPSUBD    Y6, Y2, Y2
	VPSUBD    Y6, Y3, Y3
	CVT4
	STORE4
	ADDQ      $32, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       u8loop32

u8loop8:
	CMPQ CX, $8
	JB   u8done
	VPMOVZXBD (SI), Y0
	VPSUBD    Y6, Y0, Y0
	CVT1
	VMOVUPS Y0, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       u8loop8

u8done:
	VZEROUPPER
	RET

// func decodeI16AVX2(dst []float32, src []byte)
TEXT ·decodeI16AVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	VBROADCASTSS decScale16<>(SB), Y7

i16loop32:
	CMPQ CX, $32
	JB   i16loop8
	VPMOVSXWD (SI), Y0
	VPMOVSXWD 16(SI), Y1
	VPMOVSXWD 32(SI), Y2
	VPMOVSXWD 48(SI), Y3
	CVT4
	STORE4
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       i16loop32

i16loop8:
	CMPQ CX, $8
	JB   i16done
	VPMOVSXWD (SI), Y0
	CVT1
	VMOVUPS Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       i16loop8

i16done:
	VZEROUPPER
	RET

DATA decMid<>+0(SB)/4, $0x42ff0000 // 127.5
GLOBL decMid<>(SB), RODATA|NOPTR, $4

// func decodeU8SDRAVX2(dst []float32, src []byte)
// (v − 127.5)/127.5 in float32: the subtraction is exact, and the one
// rounded division gives the table's float64-then-float32 value for
// every byte (TestDecodeMatchesGo checks all 256).
TEXT ·decodeU8SDRAVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	VBROADCASTSS decMid<>(SB), Y7

sdrloop16:
	CMPQ CX, $16
	JB   sdrloop8
	VPMOVZXBD (SI), Y0
	VPMOVZXBD 8(SI), Y1
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VSUBPS    Y7, Y0, Y0
	VSUBPS    Y7, Y1, Y1
	VDIVPS    Y7, Y0, Y0
	VDIVPS    Y7, Y1, Y1
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	ADDQ      $16, SI
	ADDQ      $64, DI
	SUBQ      $16, CX
	JMP       sdrloop16

sdrloop8:
	CMPQ CX, $8
	JB   sdrdone
	VPMOVZXBD (SI), Y0
	VCVTDQ2PS Y0, Y0
	VSUBPS    Y7, Y0, Y0
	VDIVPS    Y7, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $8, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       sdrloop8

sdrdone:
	VZEROUPPER
	RET
