package plugins

import (
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// The Arrow IPC framing of one batch (Arrow columnar format, "IPC
// streaming format" and "Encapsulated message format"): a slot holds
//
//	0xFFFFFFFF              continuation marker, int32
//	metadata length         int32: header-8, the flatbuffer plus zero padding
//	Message flatbuffer      version V5, header RecordBatch{length, nodes, buffers}, bodyLength
//	zero padding            to header bytes from the slot's start (a multiple of 64)
//	body                    the buffers, each at a 64-byte aligned offset from the body's start
//
// so the bytes [0, header+bodyLength) of a slot are exactly what an Arrow
// IPC stream reader reads for one record batch, and any Arrow library can
// take them as they lie in memory.

const (
	ipcContinuation = 0xFFFFFFFF
	// Message.version: Arrow metadata version V5 (the current one).
	ipcVersionV5 = 4
	// MessageHeader.RecordBatch in Message.header_type.
	ipcHeaderRecordBatch = 3
)

// ipcNode and ipcBuffer are the RecordBatch's FieldNode and Buffer structs.
type ipcNode struct{ length, nulls int64 }
type ipcBuffer struct{ offset, length int64 }

// fields are a struct's two longs in the order the schema declares them.
func (n ipcNode) fields() (int64, int64)   { return n.length, n.nulls }
func (b ipcBuffer) fields() (int64, int64) { return b.offset, b.length }

// longPairVector adds a vector of structs of two longs (FieldNode, Buffer)
// to b: like every flatbuffer vector of structs, built back to front (and
// each struct last field first) before the table that refers to it.
func longPairVector[T interface{ fields() (int64, int64) }](b *flatbuffers.Builder, v []T) flatbuffers.UOffsetT {
	b.StartVector(16, len(v), 8)
	for i := len(v) - 1; i >= 0; i-- {
		first, second := v[i].fields()
		b.Prep(8, 16)
		b.PrependInt64(second)
		b.PrependInt64(first)
	}
	return b.EndVector(len(v))
}

// metaBuilder builds RecordBatch metadata, reusing its builder and slices.
type metaBuilder struct {
	b       *flatbuffers.Builder
	nodes   []ipcNode
	buffers []ipcBuffer
}

// headerSize is the slot header that always fits the metadata of a batch
// with nodes field nodes and buffers buffers: the 8-byte prefix, the
// flatbuffer's tables and vtables (under 128 bytes), 16 bytes per node and
// per buffer, rounded up to 64 so the body starts aligned.
func headerSize(nodes, buffers int) int {
	return align64(8 + 128 + 16*nodes + 16*buffers)
}

// encode writes the encapsulated prefix and metadata of a batch of rows
// rows with bodyLen body bytes into hdr (the slot's header, len(hdr) =
// headerSize), zero-padding the rest.
func (m *metaBuilder) encode(hdr []byte, rows, bodyLen int64) error {
	if m.b == nil {
		m.b = flatbuffers.NewBuilder(len(hdr))
	}
	b := m.b
	b.Reset()
	bufs := longPairVector(b, m.buffers)
	nodes := longPairVector(b, m.nodes)
	// RecordBatch { length: long; nodes: [FieldNode]; buffers: [Buffer];
	// compression; variadicBufferCounts }
	b.StartObject(5)
	b.PrependInt64Slot(0, rows, 0)
	b.PrependUOffsetTSlot(1, nodes, 0)
	b.PrependUOffsetTSlot(2, bufs, 0)
	rb := b.EndObject()
	// Message { version: short; header_type: ubyte; header; bodyLength:
	// long; custom_metadata }
	b.StartObject(5)
	b.PrependInt64Slot(3, bodyLen, 0)
	b.PrependUOffsetTSlot(2, rb, 0)
	b.PrependInt16Slot(0, ipcVersionV5, 0)
	b.PrependByteSlot(1, ipcHeaderRecordBatch, 0)
	b.Finish(b.EndObject())
	fb := b.FinishedBytes()
	if len(fb) > len(hdr)-8 {
		return fmt.Errorf("plugins: batch metadata of %d bytes exceeds its %d-byte header", len(fb), len(hdr)-8)
	}
	binary.LittleEndian.PutUint32(hdr[0:], ipcContinuation)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(len(hdr)-8))
	n := copy(hdr[8:], fb)
	clear(hdr[8+n:])
	return nil
}

func align64(n int) int { return (n + 63) &^ 63 }
func align8(n int) int  { return (n + 7) &^ 7 }
