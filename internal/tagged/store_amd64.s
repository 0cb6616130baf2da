#include "textflag.h"

// func storeTagged(dst *uint64, src *float32, n int, tag uint32)
TEXT ·storeTagged(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL tag+24(FP), DX
	SHLQ $32, DX
	TESTQ CX, CX
	JLE done
loop:
	MOVL (SI), AX      // zero-extends into RAX
	ORQ DX, AX
	MOVQ AX, (DI)      // one aligned 8-byte store: value and tag land together
	ADDQ $4, SI
	ADDQ $8, DI
	DECQ CX
	JNZ loop
done:
	RET

// func demote(p *uint64, n int)
// CLDEMOTE every 64-byte line of the n bytes at p (BYTE-encoded: the Go
// assembler lacks it; 0F 1C /0 is a NOP on CPUs without CLDEMOTE).
TEXT ·demote(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), BX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE ddone
	LEAQ (BX)(CX*1), R8
	ANDQ $~63, BX
dloop:
	BYTE $0x0F; BYTE $0x1C; BYTE $0x03 // CLDEMOTE (BX)
	ADDQ $64, BX
	CMPQ BX, R8
	JB dloop
ddone:
	RET

// func copyTaggedAVX2(dst *float32, src *uint64, n int, tag uint32) int
// Copies the values of src's words to dst, eight words per step (two 32-byte
// loads), while every word of a step carries tag; returns how many words it
// copied (a multiple of 8): it stops at the first step with a stale word
// and leaves the rest, and any tail, to the caller.
TEXT ·copyTaggedAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL tag+24(FP), DX
	MOVQ DX, X4
	VPBROADCASTQ X4, Y4
	XORQ BX, BX
c8loop:
	LEAQ 8(BX), AX
	CMPQ AX, CX
	JGT c8done
	VMOVDQU (SI)(BX*8), Y0
	VMOVDQU 32(SI)(BX*8), Y1
	VPSRLQ $32, Y0, Y2
	VPSRLQ $32, Y1, Y3
	VPCMPEQQ Y4, Y2, Y2
	VPCMPEQQ Y4, Y3, Y3
	VPAND Y3, Y2, Y2
	VPMOVMSKB Y2, AX
	CMPL AX, $0xffffffff
	JNE c8done
	VSHUFPS $0x88, Y1, Y0, Y2
	VPERMQ $0xD8, Y2, Y2
	VMOVDQU Y2, (DI)(BX*4)
	ADDQ $8, BX
	JMP c8loop
c8done:
	VZEROUPPER
	MOVQ BX, ret+32(FP)
	RET
