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
