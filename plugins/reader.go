package plugins

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// batchReader turns the batch messages of one extract into Arrow record
// batches whose buffers are slices of the message's memory: nothing is
// copied, and nothing outlives the next read.
type batchReader struct {
	src    *messageFeed
	r      *ipc.Reader
	schema *arrow.Schema
}

// messageFeed is an ipc.MessageReader that hands the ipc.Reader the
// schema message first and then, one at a time, the batch put in cur.
type messageFeed struct {
	schema *ipc.Message
	cur    *ipc.Message
}

func (m *messageFeed) Message() (*ipc.Message, error) {
	if m.schema != nil {
		s := m.schema
		m.schema = nil
		return s, nil
	}
	c := m.cur
	m.cur = nil
	if c == nil {
		return nil, io.EOF
	}
	return c, nil
}

func (m *messageFeed) Retain()  {}
func (m *messageFeed) Release() {}

// newBatchReader reads an extract's schema: an encapsulated IPC Schema
// message, as OpenRequest.schema carries it.
func newBatchReader(schemaIPC []byte) (*batchReader, error) {
	msg, err := ipc.NewMessageReader(bytes.NewReader(schemaIPC)).Message()
	if err != nil {
		return nil, fmt.Errorf("plugins: reading the batch schema: %w", err)
	}
	if msg.Type() != ipc.MessageSchema {
		return nil, fmt.Errorf("plugins: the batch schema is a %v message", msg.Type())
	}
	src := &messageFeed{schema: msg}
	r, err := ipc.NewReaderFromMessageReader(src)
	if err != nil {
		return nil, fmt.Errorf("plugins: reading the batch schema: %w", err)
	}
	return &batchReader{src: src, r: r, schema: r.Schema()}, nil
}

// read returns the record batch of one encapsulated IPC message held in
// msg (a slot of the shared memory, or the bytes of a Batch). The batch
// is valid until the next read.
func (b *batchReader) read(msg []byte) (arrow.RecordBatch, error) {
	if len(msg) < 8 || binary.LittleEndian.Uint32(msg) != ipcContinuation {
		return nil, errors.New("plugins: batch does not start with an Arrow IPC message")
	}
	n := int(binary.LittleEndian.Uint32(msg[4:]))
	if n < 8 || 8+n > len(msg) {
		return nil, fmt.Errorf("plugins: batch metadata length %d outside the %d-byte message", n, len(msg))
	}
	m := ipc.NewMessage(memory.NewBufferBytes(msg[8:8+n]), memory.NewBufferBytes(msg[8+n:]))
	if m.Type() != ipc.MessageRecordBatch {
		return nil, fmt.Errorf("plugins: batch is a %v message", m.Type())
	}
	if m.BodyLen() != int64(len(msg)-8-n) {
		return nil, fmt.Errorf("plugins: batch body of %d bytes, message says %d", len(msg)-8-n, m.BodyLen())
	}
	b.src.cur = m
	if !b.r.Next() {
		if err := b.r.Err(); err != nil {
			return nil, err
		}
		return nil, errors.New("plugins: batch could not be read")
	}
	return b.r.RecordBatch(), nil
}

func (b *batchReader) close() { b.r.Release() }
