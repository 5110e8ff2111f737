package session

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/tdsextract/tdsextract/decode"
)

var memCols = []decode.Column{
	{Name: "id", Flags: decode.ColFlagNullable, Type: decode.TypeInfo{Type: decode.TypeIntN, Size: 4}},
	{Name: "s", Flags: decode.ColFlagNullable, Type: decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 20, Collation: decode.DefaultParamCollation}},
}

// memResponse is a token stream: COLMETADATA, rows, and (if done) DONE.
func memResponse(t testing.TB, rows int, done bool) []byte {
	b := decode.AppendColMetadata(nil, memCols)
	var err error
	for i := 0; i < rows; i++ {
		b, err = decode.AppendRow(b, memCols, []any{int64(i), "row"})
		if err != nil {
			t.Fatal(err)
		}
	}
	if done {
		b = decode.Done{Token: decode.TokenDone, Status: decode.DoneCount, RowCount: uint64(rows)}.Append(b)
	}
	return b
}

// bufferedSession is a session whose read buffer already holds payload and
// whose socket has nothing more to give (a fakeConn in fake time).
func bufferedSession(t *testing.T, tm Timeout, payload []byte, eom bool, more ...step) (*Conn, *fakeConn) {
	c, fc, _ := newFakeSession(t, tm, more...)
	c.cancelTimeout = time.Second
	c.stream = decode.NewStream(decode.StreamOptions{})
	c.wpos = copy(c.buf, payload)
	c.inMsg, c.eom = true, eom
	return c, fc
}

// TestExhaustedBudgetServesBufferedRows: with an exhausted budget, rows
// already buffered are delivered and a response that is complete in the
// buffer succeeds; only a read that has to wait times out.
func TestExhaustedBudgetServesBufferedRows(t *testing.T) {
	c, fc := bufferedSession(t, TimeoutOf(0), memResponse(t, 50, true), true)
	var cap decode.Capture
	res := &Result{}
	c.w.start(TimeoutOf(0))
	c.stream.SetSink(&cap)
	if err := c.readResponse(&Query{}, res); err != nil {
		t.Fatalf("complete buffered response: %v", err)
	}
	if res.Rows != 50 || len(cap.Rows) != 50 || fc.reads != 0 || fc.sets != 0 {
		t.Fatalf("rows %d, reads %d, deadline sets %d", res.Rows, fc.reads, fc.sets)
	}

	c, fc = bufferedSession(t, TimeoutOf(0), memResponse(t, 50, false), false)
	cap = decode.Capture{}
	res = &Result{}
	c.w.start(TimeoutOf(0))
	c.stream.SetSink(&cap)
	err := c.readResponse(&Query{}, res)
	if !isTimeout(err) {
		t.Fatalf("read that must wait: %v", err)
	}
	if res.Rows != 50 || fc.reads != 1 {
		t.Fatalf("rows %d, reads %d", res.Rows, fc.reads)
	}
}

// TestLazyDeadlineNotPerRow: the deadline is armed once per network read,
// never per row.
func TestLazyDeadlineNotPerRow(t *testing.T) {
	body := memResponse(t, 5000, true)
	var script []step
	for b := body; len(b) > 0; {
		n := min(len(b), 4000)
		script = append(script, step{wait: time.Millisecond, data: packet(b[:n], n == len(b))})
		b = b[n:]
	}
	c, fc, _ := newFakeSession(t, TimeoutOf(time.Minute), script...)
	c.stream = decode.NewStream(decode.StreamOptions{})
	res := &Result{}
	c.stream.SetSink(&c.discard)
	if err := c.readResponse(&Query{}, res); err != nil {
		t.Fatal(err)
	}
	if res.Rows != 5000 {
		t.Fatalf("rows %d", res.Rows)
	}
	if fc.sets != 1 {
		t.Fatalf("%d deadline sets for %d reads, %d packets, %d rows", fc.sets, fc.reads, len(script), res.Rows)
	}
	if c.w.b.remaining != time.Minute-time.Duration(len(script))*time.Millisecond {
		t.Fatalf("charged %v for %d waits of 1ms", time.Minute-c.w.b.remaining, len(script))
	}
}

// TestReadLoopZeroAllocsPerRow: the read loop allocates nothing per row
// (allocations for 100000 rows equal those for 1000).
func TestReadLoopZeroAllocsPerRow(t *testing.T) {
	run := func(rows int) float64 {
		body := memResponse(t, rows, true)
		var wire []byte
		for b := body; len(b) > 0; {
			n := min(len(b), maxPacketSize-decode.HeaderLen)
			wire = append(wire, packet(b[:n], n == len(b))...)
			b = b[n:]
		}
		sink := &checksumSinkT{}
		c, fc, _ := newFakeSession(t, TimeoutOf(time.Minute))
		c.stream = decode.NewStream(decode.StreamOptions{})
		return testing.AllocsPerRun(5, func() {
			fc.script = []step{{data: wire}}
			c.r, c.wpos, c.inMsg, c.eom, c.pktRemain, c.hdrN = 0, 0, false, false, 0, 0
			c.w.start(TimeoutOf(time.Minute))
			c.stream.Reset()
			c.stream.SetSink(sink)
			res := Result{RowCounts: make([]int64, 0, 4)}
			if err := c.readResponse(&Query{}, &res); err != nil || res.Rows != int64(rows) {
				t.Fatalf("%v %d", err, res.Rows)
			}
		})
	}
	// 1 more allocation is tolerated: AllocsPerRun counts the whole
	// process, and other tests' servers may still be winding down. One per
	// row would be 99,000 more.
	small, large := run(1000), run(100000)
	if large > small+1 {
		t.Fatalf("allocations grow with rows: %v for 1000 rows, %v for 100000", small, large)
	}
}

type checksumSinkT struct {
	decode.Nop
	sum uint64
}

func (s *checksumSinkT) Int(col int, v int64)    { s.sum += uint64(v) }
func (s *checksumSinkT) Write(col int, p []byte) { s.sum += uint64(len(p)) }

// TestCancelFlagBetweenRows: a cancellation seen between buffered rows stops
// the loop without any network read.
func TestCancelFlagBetweenRows(t *testing.T) {
	c, fc := bufferedSession(t, NoTimeout, memResponse(t, 50, true), true)
	sink := &countSink{after: 10, fire: func() { c.w.interrupt.flag.Store(true) }}
	c.stream.SetSink(sink)
	res := &Result{}
	err := c.readResponse(&Query{}, res)
	if !errors.Is(err, errInterrupted) || res.Rows != 10 || fc.reads != 0 {
		t.Fatalf("err %v rows %d reads %d", err, res.Rows, fc.reads)
	}
	_ = context.Background
}

type countSink struct {
	decode.Discard
	n, after int
	fire     func()
}

func (s *countSink) EndRow() error {
	s.n++
	if s.n == s.after {
		s.fire()
	}
	return nil
}

// TestBuildRPC decodes the sp_executesql request the engine builds.
func TestBuildRPC(t *testing.T) {
	c := &Conn{}
	ti4 := decode.TypeInfo{Type: decode.TypeIntN, Size: 4}
	when := time.Date(2024, 2, 29, 12, 30, 0, 0, time.UTC)
	q := Query{SQL: "SELECT @a, @b, @p3, @d, @e, @f, @g, @h", Params: []Param{
		{Name: "a", Value: 42},
		{Name: "@b", Value: "héllo"},
		{Value: nil},
		{Name: "d", Value: int64(7), Type: &ti4},
		{Name: "e", Value: []byte{1, 2, 3}},
		{Name: "f", Value: when},
		{Name: "g", Value: decode.Decimal{Lo: 12345, Scale: 2, Precision: 10}},
		{Name: "h", Value: 2.5},
	}}
	c.txn = 0x0102030405060708
	payload, err := c.buildRequest(&q)
	if err != nil {
		t.Fatal(err)
	}
	var r decode.RPCRequest
	if err := r.Decode(payload); err != nil {
		t.Fatal(err)
	}
	if r.ProcID != decode.ProcIDExecuteSQL || r.TxnDescriptor != c.txn || len(r.Params) != 10 {
		t.Fatalf("rpc %+v", r)
	}
	// @params: USHORT byte length, then UTF-16LE.
	v := r.Params[1].Value
	u := make([]uint16, (len(v)-2)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(v[2+2*i:])
	}
	wantDecl := "@a bigint, @b nvarchar(4000), @p3 nvarchar(4000), @d int, @e varbinary(8000), @f datetimeoffset(7), @g decimal(10,2), @h float"
	if got := string(utf16.Decode(u)); got != wantDecl {
		t.Fatalf("declaration %q, want %q", got, wantDecl)
	}
	names := []string{"", "", "@a", "@b", "@p3", "@d", "@e", "@f", "@g", "@h"}
	for i, p := range r.Params {
		if p.Name != names[i] {
			t.Errorf("param %d name %q, want %q", i, p.Name, names[i])
		}
	}
	if _, err := c.buildRequest(&Query{SQL: "x", Params: []Param{{Value: struct{}{}}}}); err == nil {
		t.Fatal("unsupported type accepted")
	}
	if _, err := c.buildRequest(&Query{SQL: "x", Params: []Param{{Value: uint64(1 << 63)}}}); err == nil {
		t.Fatal("bigint overflow accepted")
	}
	// Without parameters: a SQLBatch carrying the transaction descriptor.
	payload, _ = c.buildRequest(&Query{SQL: "SELECT 1"})
	var b decode.SQLBatch
	if err := b.Decode(payload); err != nil || b.SQL != "SELECT 1" || b.TxnDescriptor != c.txn {
		t.Fatalf("batch %+v %v", b, err)
	}
}
