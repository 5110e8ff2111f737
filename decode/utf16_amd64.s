#include "textflag.h"

// utf16Block8 (declared and described in utf16_amd64.go): UTF-16LE to
// UTF-8, eight code units a block, SSE2 plus SSSE3's PSHUFB.

// WIDE4 encodes the four code units in X1's 32-bit lanes (zero-extended, no
// surrogates) as 1 to 3 UTF-8 bytes each, compresses them with the shuf3
// table and writes them at DI+BX, adding their length to BX. Per lane,
// with a = u&0x3F, b = u>>6&0x3F, c = u>>12: the 3-byte form is
// c|0xE0, b|0x80, a|0x80 and the 2-byte form u>>6|0xC0, a|0x80. The
// shuffle index holds one bit per lane above ASCII (low nibble) and one
// per lane at or above U+0800 (high nibble). Clobbers X2-X7, R10, R11.
#define WIDE4 \
	MOVO     X1, X4 \
	PSRLL    $6, X4 \
	MOVO     X1, X5 \
	PAND     X10, X5 \
	MOVO     X4, X6 \
	PAND     X10, X6 \
	MOVO     X1, X7 \
	PSRLL    $12, X7 \
	PSLLL    $8, X6 \
	POR      X6, X7 \
	MOVO     X5, X6 \
	PSLLL    $16, X6 \
	POR      X6, X7 \
	POR      X15, X7 \
	PSLLL    $8, X5 \
	POR      X5, X4 \
	POR      X13, X4 \
	MOVO     X1, X2 \
	PAND     X9, X2 \
	PCMPEQL  X12, X2 \
	MOVO     X1, X3 \
	PAND     X8, X3 \
	PCMPEQL  X12, X3 \
	MOVMSKPS X2, R10 \
	MOVMSKPS X3, R11 \
	XORQ     $0xF, R10 \
	XORQ     $0xF, R11 \
	SHLQ     $4, R10 \
	ORQ      R11, R10 \
	MOVO     X2, X5 \
	PAND     X4, X5 \
	PANDN    X7, X2 \
	POR      X5, X2 \
	MOVO     X3, X5 \
	PAND     X1, X5 \
	PANDN    X2, X3 \
	POR      X5, X3 \
	MOVQ     R10, R11 \
	SHLQ     $4, R11 \
	MOVOU    4352(R8)(R11*1), X5 \
	PSHUFB   X5, X3 \
	MOVOU    X3, (DI)(BX*1) \
	MOVBQZX  8448(R8)(R10*1), R11 \
	ADDQ     R11, BX

// func utf16Block8(dst, src *byte, units int, tab *u16Tables) (consumed, written int)
TEXT ·utf16Block8(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ units+16(FP), CX
	MOVQ tab+24(FP), R8
	XORQ AX, AX                 // units consumed
	XORQ BX, BX                 // bytes written

	// Constants. 16-bit lanes: X8 0xFF80, X9 0xF800, X10 0x003F,
	// X11 0x80C0, X14 0xD800 (X8, X9 and X10 serve 32-bit lanes of
	// zero-extended units too); 32-bit lanes: X13 0x80C0, X15 0x8080E0;
	// X12 zero.
	MOVQ       $0xFF80FF80FF80FF80, R11
	MOVQ       R11, X8
	PUNPCKLQDQ X8, X8
	MOVQ       $0xF800F800F800F800, R11
	MOVQ       R11, X9
	PUNPCKLQDQ X9, X9
	MOVQ       $0x003F003F003F003F, R11
	MOVQ       R11, X10
	PUNPCKLQDQ X10, X10
	MOVQ       $0x80C080C080C080C0, R11
	MOVQ       R11, X11
	PUNPCKLQDQ X11, X11
	MOVQ       $0xD800D800D800D800, R11
	MOVQ       R11, X14
	PUNPCKLQDQ X14, X14
	MOVQ       $0x000080C0000080C0, R11
	MOVQ       R11, X13
	PUNPCKLQDQ X13, X13
	MOVQ       $0x008080E0008080E0, R11
	MOVQ       R11, X15
	PUNPCKLQDQ X15, X15
	PXOR       X12, X12

loop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  done
	MOVOU (SI)(AX*2), X0

	// Every lane below U+0800?
	MOVO     X0, X1
	PAND     X9, X1
	MOVO     X1, X2
	PCMPEQW  X12, X1
	PMOVMSKB X1, DX
	CMPL     DX, $0xFFFF
	JNE      wide

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
	MOVBQZX 4096(R8)(R10*1), R11
	ADDQ    R11, BX
	ADDQ    $8, AX
	JMP     loop

wide:
	// A character at or above U+0800: stop at a surrogate, else take
	// the block as two halves of four 32-bit lanes.
	PCMPEQW  X14, X2
	PMOVMSKB X2, DX
	TESTL    DX, DX
	JNE      done
	MOVO      X0, X1
	PUNPCKLWL X12, X1
	WIDE4
	MOVO      X0, X1
	PUNPCKHWL X12, X1
	WIDE4
	ADDQ $8, AX
	JMP  loop

done:
	MOVQ AX, consumed+32(FP)
	MOVQ BX, written+40(FP)
	RET
