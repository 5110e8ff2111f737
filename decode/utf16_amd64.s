#include "textflag.h"

// utf16Block8 (declared and described in utf16_amd64.go): UTF-16LE to
// UTF-8, eight code units below U+0800 a block, SSE2 plus SSSE3's PSHUFB.

// func utf16Block8(dst, src *byte, units int, shuf *[256][16]byte, lens *[256]uint8) (consumed, written int)
TEXT ·utf16Block8(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ units+16(FP), CX
	MOVQ shuf+24(FP), R8
	MOVQ lens+32(FP), R9
	XORQ AX, AX                 // units consumed
	XORQ BX, BX                 // bytes written
	// Lane constants, from all ones: X8 0xFF80, X9 0xF800, X10 0x003F,
	// X11 0x80C0; X12 zero.
	PCMPEQW X13, X13
	MOVO    X13, X8
	PSLLW   $7, X8
	MOVO    X13, X9
	PSLLW   $11, X9
	MOVO    X13, X10
	PSRLW   $10, X10
	MOVO    X13, X11
	PSLLW   $15, X11
	PSRLW   $14, X13
	PSLLW   $6, X13
	POR     X13, X11
	PXOR    X12, X12

loop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  done
	MOVOU (SI)(AX*2), X0

	// Every lane below U+0800?
	MOVO     X0, X1
	PAND     X9, X1
	PCMPEQW  X12, X1
	PMOVMSKB X1, DX
	CMPL     DX, $0xFFFF
	JNE      done

	// ASCII lanes: 0xFFFF.
	MOVO     X0, X3
	PAND     X8, X3
	PCMPEQW  X12, X3
	PMOVMSKB X3, DX
	CMPL     DX, $0xFFFF
	JNE      mixed

	// Eight ASCII units: eight bytes.
	PACKUSWB X0, X0
	MOVQ     X0, (DI)(BX*1)
	ADDQ     $8, BX
	ADDQ     $8, AX
	JMP      loop

mixed:
	// Every lane's 2-byte form: 0xC0|u>>6, then 0x80|u&0x3F.
	MOVO  X0, X4
	PSRLW $6, X4
	MOVO  X0, X5
	PAND  X10, X5
	PSLLW $8, X5
	POR   X5, X4
	POR   X11, X4

	// One bit per ASCII lane: the shuffle's index.
	MOVO     X3, X7
	PACKSSWB X7, X7
	PMOVMSKB X7, R10
	ANDQ     $0xFF, R10

	// ASCII lanes keep u, the others take the 2-byte form.
	MOVO  X3, X6
	PAND  X0, X6
	PANDN X4, X3
	POR   X6, X3

	MOVQ    R10, R11
	SHLQ    $4, R11
	MOVOU   (R8)(R11*1), X7
	PSHUFB  X7, X3
	MOVOU   X3, (DI)(BX*1)
	MOVBQZX (R9)(R10*1), R11
	ADDQ    R11, BX
	ADDQ    $8, AX
	JMP     loop

done:
	MOVQ AX, consumed+40(FP)
	MOVQ BX, written+48(FP)
	RET
