package parquet

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is Parquet's ZSTD codec on klauspost/compress with literal
// entropy coding always on. klauspost's two fast levels skip Huffman
// coding of the literals of a block that has no matches, and the plain
// pages of integer columns are mostly such literals: measured on poc48's
// i08 (1M values as PLAIN INT32, 256 KiB pages), SpeedFastest and
// SpeedDefault left them at 100.0% of their size (4.8 and 3.6 GB/s: a
// copy), SpeedFastest with entropy coding gave 72.6% at 363 MB/s a core,
// and SpeedBetterCompression the same 72.6% at 271 MB/s (the reference
// zstd -1: 72.5%). So the default is SpeedFastest with entropy coding.
type zstdCodec struct {
	level  zstd.EncoderLevel
	window int

	once sync.Once
	enc  *zstd.Encoder
	dec  *zstd.Decoder
	err  error
}

// newZstdCodec is the codec for a run's level (0: the default) and page
// size. Its window covers twice the larger of a data page and the largest
// dictionary page, so a page is compressed as with the library's default
// 8 MiB window (one segment, every match in reach) while an encoder's
// history buffer, which klauspost sizes to about twice the window, is a
// quarter of it.
func newZstdCodec(level, pageBytes int) *zstdCodec {
	l := zstd.SpeedFastest
	if level > 0 {
		l = zstd.EncoderLevel(level)
	}
	w := 1 << 20
	for w < 2*max(pageBytes, dictMaxBytes) && w < 8<<20 {
		w <<= 1
	}
	return &zstdCodec{level: l, window: w}
}

// zstdShared holds the encoders of the process, one per level, window and
// thread count, shared by every sink: an encoder allocates its history
// buffers (megabytes) on first use, which a sink of its own paid per file,
// and EncodeAll is safe for concurrent use. The decoders are shared too.
var zstdShared struct {
	sync.Mutex
	enc map[zstdKey]*zstd.Encoder
	dec map[int]*zstd.Decoder
}

type zstdKey struct {
	level         zstd.EncoderLevel
	window, procs int
}

func (c *zstdCodec) init() {
	c.once.Do(func() {
		// EncodeAll and DecodeAll are safe for concurrent use, each call on
		// one goroutine; concurrency bounds how many run at once.
		n := runtime.GOMAXPROCS(0)
		k := zstdKey{c.level, c.window, n}
		zstdShared.Lock()
		defer zstdShared.Unlock()
		if c.enc = zstdShared.enc[k]; c.enc == nil {
			c.enc, c.err = zstd.NewWriter(nil,
				zstd.WithEncoderLevel(c.level),
				zstd.WithWindowSize(c.window),
				zstd.WithAllLitEntropyCompression(true),
				zstd.WithEncoderConcurrency(n),
				zstd.WithEncoderCRC(false),
				zstd.WithZeroFrames(true))
			if c.err != nil {
				return
			}
			if zstdShared.enc == nil {
				zstdShared.enc = map[zstdKey]*zstd.Encoder{}
			}
			zstdShared.enc[k] = c.enc
		}
		if c.dec = zstdShared.dec[n]; c.dec == nil {
			c.dec, c.err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(n))
			if c.err != nil {
				return
			}
			if zstdShared.dec == nil {
				zstdShared.dec = map[int]*zstd.Decoder{}
			}
			zstdShared.dec[n] = c.dec
		}
	})
}

func (c *zstdCodec) String() string { return "ZSTD" }

func (c *zstdCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

func (c *zstdCodec) Encode(dst, src []byte) ([]byte, error) {
	if c.init(); c.err != nil {
		return dst[:0], fmt.Errorf("zstd: %w", c.err)
	}
	return c.enc.EncodeAll(src, dst[:0]), nil
}

func (c *zstdCodec) Decode(dst, src []byte) ([]byte, error) {
	if c.init(); c.err != nil {
		return dst[:0], fmt.Errorf("zstd: %w", c.err)
	}
	return c.dec.DecodeAll(src, dst[:0])
}
