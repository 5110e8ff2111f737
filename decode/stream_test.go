package decode

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// streamResult is everything a stream decoded: one line per event and the
// rows captured per result set.
type streamResult struct {
	events []string
	sets   [][][]any
	cols   [][]Column
}

// eventLine describes an event of s for comparison.
func eventLine(s *Stream, ev Event) string {
	switch ev {
	case EventDone:
		return fmt.Sprintf("Done %#x status=%#x cmd=%#x rows=%d", s.Done.Token, s.Done.Status, s.Done.CurCmd, s.Done.RowCount)
	case EventReturnStatus:
		return fmt.Sprintf("ReturnStatus %d", s.ReturnStatus)
	case EventColMetadata:
		var names []string
		for _, c := range s.Columns {
			names = append(names, fmt.Sprintf("%s:%#x", c.Name, c.Type.Type))
		}
		return "ColMetadata " + strings.Join(names, ",")
	case EventError, EventInfo:
		return fmt.Sprintf("%v %d %q", ev, s.Message.Number, s.Message.Text)
	}
	return ev.String()
}

// feedStream decodes payload the way a session does: it reads pieces of at
// most piece bytes into a buffer, calls Next until it needs more, drops the
// consumed bytes (compacting the buffer) and reads again. It fails the test
// on any error; capture receives the rows.
func feedStream(t *testing.T, opts StreamOptions, payload []byte, piece int, capture *Capture) streamResult {
	t.Helper()
	res, err := feedStreamErr(opts, payload, piece, capture)
	if err != nil {
		t.Fatalf("piece %d: %v", piece, err)
	}
	return res
}

func feedStreamErr(opts StreamOptions, payload []byte, piece int, capture *Capture) (streamResult, error) {
	var res streamResult
	s := NewStream(opts)
	if capture != nil {
		s.SetSink(capture)
	}
	buf := make([]byte, 0, 64)
	rest := payload
	for {
		n, ev, err := s.Next(buf)
		if n < 0 || n > len(buf) {
			return res, fmt.Errorf("Next consumed %d of %d bytes", n, len(buf))
		}
		// Compact: drop the consumed bytes like a session reusing its buffer.
		buf = buf[:copy(buf, buf[n:])]
		if err == ErrNeedMore {
			if len(rest) == 0 {
				if len(buf) == 0 && !s.inRow {
					break
				}
				return res, fmt.Errorf("stream ends inside a token (%d bytes left)", len(buf))
			}
			k := min(piece, len(rest))
			buf = append(buf, rest[:k]...)
			rest = rest[k:]
			continue
		}
		if err != nil {
			return res, err
		}
		if capture != nil && capture.Err != nil {
			return res, capture.Err
		}
		if ev == EventColMetadata && capture != nil {
			if len(res.sets) > 0 {
				res.sets[len(res.sets)-1] = capture.Rows
			}
			res.sets = append(res.sets, nil)
			res.cols = append(res.cols, append([]Column(nil), s.Columns...))
		}
		res.events = append(res.events, eventLine(s, ev))
	}
	if capture != nil && len(res.sets) > 0 {
		res.sets[len(res.sets)-1] = capture.Rows
	}
	return res, nil
}

// pieceSizes are the read sizes every positive stream is re-fed with:
// packet payloads of 512, 4096 and 32767-byte packets, and one byte.
var pieceSizes = []int{MinPacketSize - HeaderLen, DefaultPacketSize - HeaderLen, MaxPacketSize - HeaderLen, 1, 7}

// checkResplit decodes payload whole and in every piece size, with the sink
// reserving and declining, and checks that all agree.
func checkResplit(t *testing.T, opts StreamOptions, payload []byte) streamResult {
	t.Helper()
	want := feedStream(t, opts, payload, len(payload)+1, &Capture{})
	for _, piece := range pieceSizes {
		for _, decline := range []bool{false, true} {
			got := feedStream(t, opts, payload, piece, &Capture{DeclineReserve: decline})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("piece %d (decline %v) differs:\n got %v\nwant %v", piece, decline, got, want)
			}
		}
	}
	// A nil sink counts the same rows and events.
	got := feedStream(t, opts, payload, 3, nil)
	if !reflect.DeepEqual(got.events, want.events) {
		t.Fatalf("nil sink events %v, want %v", got.events, want.events)
	}
	return want
}

// MS-TDS 4.7: SQL batch response with one varchar column and one row.
func TestStreamSpec47SQLBatchResponse(t *testing.T) {
	res := checkResplit(t, StreamOptions{}, wireReply(t, "4.7-sqlbatch-response"))
	wantEvents := []string{"ColMetadata bar:0xa7", "Row", "Done 0xfd status=0x10 cmd=0xc1 rows=1"}
	if !reflect.DeepEqual(res.events, wantEvents) {
		t.Fatalf("events %q", res.events)
	}
	c := res.cols[0][0]
	if c.Flags != 0x0020 || c.Type.Size != 3 || c.Type.Collation != (Collation{Info: 0x00D00409, SortID: 0x34}) {
		t.Fatalf("column %#v", c)
	}
	if !reflect.DeepEqual(res.sets, [][][]any{{{"foo"}}}) {
		t.Fatalf("rows %#v", res.sets)
	}
}

// MS-TDS 4.9: RPC response: DONEINPROC, RETURNSTATUS, DONEPROC.
func TestStreamSpec49RPCResponse(t *testing.T) {
	res := checkResplit(t, StreamOptions{}, wireReply(t, "4.9-rpc-response"))
	want := []string{"Done 0xff status=0x11 cmd=0xc1 rows=1", "ReturnStatus 0", "Done 0xfe status=0x0 cmd=0xe0 rows=0"}
	if !reflect.DeepEqual(res.events, want) {
		t.Fatalf("events %q", res.events)
	}
}

// MS-TDS 4.15: sparse column select: an XML column as unknown-length PLP,
// ROW and NBCROW interleaved.
func TestStreamSpec415SparseColumns(t *testing.T) {
	res := checkResplit(t, StreamOptions{}, wireReply(t, "4.15-sparse-column-select"))
	want := []string{"ColMetadata id:0x26,sparsePropertySet:0xf1"}
	for i := 0; i < 10; i++ {
		want = append(want, "Row")
	}
	want = append(want, "Done 0xfd status=0x10 cmd=0xc1 rows=10")
	if !reflect.DeepEqual(res.events, want) {
		t.Fatalf("events %q", res.events)
	}
	if f := res.cols[0][1].Flags; f != 0x040B || f&ColFlagSparseColumnSet == 0 {
		t.Fatalf("flags %#x", f)
	}
	rows := [][]any{
		{int64(1), "<sparseProp1>1000</sparseProp1><sparseProp2>foo</sparseProp2>"},
		{int64(2), "<sparseProp1>1000</sparseProp1>"},
		{int64(3), "<sparseProp2>abcd</sparseProp2>"},
	}
	for i := int64(4); i <= 10; i++ {
		rows = append(rows, []any{i, nil})
	}
	if !reflect.DeepEqual(res.sets[0], rows) {
		t.Fatalf("rows %#v", res.sets[0])
	}
}

// allTypesColumns gives one column per cell case type, nullable.
func allTypesColumns() []Column {
	var cols []Column
	seen := map[string]bool{}
	for _, c := range cellCases {
		key := fmt.Sprintf("%#v", c.ti)
		if seen[key] || unencodable(c.ti) {
			continue
		}
		seen[key] = true
		cols = append(cols, Column{Name: fmt.Sprintf("c%d", len(cols)), Flags: ColFlagNullable, Type: c.ti})
	}
	return cols
}

// allTypesStream builds COLMETADATA, rows of every type (values from the
// cell cases, NULLs, ROW and NBCROW interleaved) and DONE with the encoders
// of encode.go, with the given PLP chunk size.
func allTypesStream(t testing.TB, chunk int, unknown bool) ([]byte, []Column, [][]any) {
	cols := allTypesColumns()
	byType := map[string][]any{}
	for _, c := range cellCases {
		if c.want != nil && !replaced(c.want) {
			key := fmt.Sprintf("%#v", c.ti)
			byType[key] = append(byType[key], c.want)
		}
	}
	o := EncodeOptions{PLPChunk: chunk, UnknownPLPLength: unknown}
	out := AppendColMetadata(nil, cols)
	var rows [][]any
	for r := 0; r < 6; r++ {
		vals := make([]any, len(cols))
		for i := range cols {
			vs := byType[fmt.Sprintf("%#v", cols[i].Type)]
			var p colPlan
			makePlan(&p, &cols[i].Type, ModeValue, &textDecoder{})
			if p.shape != shapeFixed && (r%3 == 2 || len(vs) == 0 || (r+i)%5 == 4) {
				continue // NULL
			}
			vals[i] = vs[(r+i)%len(vs)]
		}
		var err error
		if r%2 == 1 {
			out, err = o.AppendNBCRow(out, cols, vals)
		} else {
			out, err = o.AppendRow(out, cols, vals)
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, vals)
	}
	out = Done{Token: TokenDone, Status: DoneCount, CurCmd: 0xC1, RowCount: 6}.Append(out)
	return out, cols, rows
}

func TestStreamAllTypesResplit(t *testing.T) {
	for _, chunk := range []int{1, 3, 8000} {
		for _, unknown := range []bool{false, true} {
			payload, cols, rows := allTypesStream(t, chunk, unknown)
			res := checkResplit(t, StreamOptions{}, payload)
			if len(res.sets) != 1 || len(res.sets[0]) != len(rows) {
				t.Fatalf("rows: %d sets", len(res.sets))
			}
			for r, row := range rows {
				for i, want := range row {
					got := res.sets[0][r][i]
					if !reflect.DeepEqual(got, want) && !sameAfterEncoding(&cols[i].Type, got, want) {
						t.Fatalf("chunk %d row %d column %d (%#x): got %#v, want %#v", chunk, r, i, cols[i].Type.Type, got, want)
					}
				}
			}
		}
	}
}

// sameAfterEncoding accepts the differences the encoder is documented to
// make: char(n)/nchar(n)/binary(n) padding, a variant's declared length.
func sameAfterEncoding(ti *TypeInfo, got, want any) bool {
	switch ti.Type {
	case TypeBigChar, TypeNChar:
		g, ok1 := got.(string)
		w, ok2 := want.(string)
		return ok1 && ok2 && strings.TrimRight(g, " ") == strings.TrimRight(w, " ")
	case TypeVariant:
		g, ok1 := got.(Variant)
		w, ok2 := want.(Variant)
		return ok1 && ok2 && reflect.DeepEqual(g.Value, w.Value) && g.Type.Type == w.Type.Type
	}
	return false
}

// unencodable reports a type the encoders do not write: float16 vectors
// (VECTORSUPPORT version 2).
func unencodable(ti TypeInfo) bool { return ti.Type == TypeVector && ti.Scale == 1 }

// replaced reports a decoded string with U+FFFD from invalid input, which
// an encoder cannot produce (cases of malformed text).
func replaced(v any) bool {
	s, ok := v.(string)
	return ok && strings.ContainsRune(s, '\uFFFD')
}

// The generic path (Capture) equals the value given to AppendValue, for
// every cell case: encode -> DecodeCell -> Capture.
func TestCellParityWithEncoder(t *testing.T) {
	for _, c := range cellCases {
		if c.want == nil || replaced(c.want) || unencodable(c.ti) {
			continue
		}
		ti := c.ti
		enc, err := AppendValue(nil, &ti, c.want)
		if err != nil {
			t.Fatalf("%s: AppendValue: %v", c.name, err)
		}
		got := decodeCell(t, ti, enc)
		if !reflect.DeepEqual(got, c.want) && !sameAfterEncoding(&ti, got, c.want) {
			t.Fatalf("%s: got %#v, want %#v", c.name, got, c.want)
		}
	}
}

// Modes chosen by the sink: raw bytes and skipped columns.
func TestStreamModes(t *testing.T) {
	payload, cols, _ := allTypesStream(t, 5, false)
	modes := make([]Mode, len(cols))
	for i := range modes {
		modes[i] = Mode(i % 3)
	}
	want := feedStream(t, StreamOptions{}, payload, len(payload), &Capture{Modes: modes})
	for _, piece := range []int{1, 13, 4088} {
		got := feedStream(t, StreamOptions{}, payload, piece, &Capture{Modes: modes})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("piece %d differs", piece)
		}
	}
	for _, row := range want.sets[0] {
		for i, v := range row {
			switch modes[i] {
			case ModeSkip:
				if v != nil {
					t.Fatalf("skipped column %d has %#v", i, v)
				}
			case ModeRaw:
				if _, ok := v.([]byte); v != nil && !ok {
					t.Fatalf("raw column %d has %T", i, v)
				}
			}
		}
	}
}

// A row straddling refills finishes after them: cells delivered before the
// refill are not delivered again (Capture flags a second delivery).
func TestStreamResumeNoRedelivery(t *testing.T) {
	cols := []Column{
		{Name: "a", Type: TypeInfo{Type: TypeIntN, Size: 4}},
		{Name: "b", Type: TypeInfo{Type: TypeNVarChar, Size: MaxVarLen, Collation: cLatin1}},
		{Name: "c", Type: TypeInfo{Type: TypeIntN, Size: 8}},
	}
	big := strings.Repeat("x\U0001F600", 5000)
	out := AppendColMetadata(nil, cols)
	out, err := EncodeOptions{PLPChunk: 4001}.AppendRow(out, cols, []any{int64(7), big, int64(-9)})
	if err != nil {
		t.Fatal(err)
	}
	var c Capture
	s := NewStream(StreamOptions{})
	s.SetSink(&c)
	n, ev, err := s.Next(out)
	if err != nil || ev != EventColMetadata {
		t.Fatal(ev, err)
	}
	row := out[n:]
	// Stop in the middle of the PLP value: cell a is delivered, b is open.
	n, ev, err = s.Next(row[:1000])
	if err != ErrNeedMore || ev != EventNone || n != 1000 {
		t.Fatalf("Next = %d %v %v", n, ev, err)
	}
	if !c.seen[0] || c.seen[1] {
		t.Fatalf("after the first part: seen %v", c.seen)
	}
	n2, ev, err := s.Next(row[1000:])
	if err != nil || ev != EventRow || n2 != len(row)-1000 || c.Err != nil {
		t.Fatalf("Next = %d %v %v %v", n2, ev, err, c.Err)
	}
	if got := c.Rows[0]; got[0] != int64(7) || got[1] != big || got[2] != int64(-9) {
		t.Fatalf("row %v", got[0])
	}
}

// The residency cap: a token or a non-streamed value bigger than the cap is
// an error wrapping ErrTooLarge; PLP and text values bigger than it stream.
func TestStreamResidencyCap(t *testing.T) {
	cols := []Column{
		{Name: "v", Type: TypeInfo{Type: TypeBigVarBinary, Size: 8000}},
		{Name: "m", Type: TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}},
		{Name: "t", Type: TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}},
	}
	blob := make([]byte, 100_000)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	small := AppendColMetadata(nil, cols)
	small, _ = AppendRow(small, cols, []any{[]byte{1, 2}, blob, blob})
	opts := StreamOptions{ResidencyCap: 1024}
	res := feedStream(t, opts, small, 4088, &Capture{})
	if got := res.sets[0][0]; !reflect.DeepEqual(got[1], blob) || !reflect.DeepEqual(got[2], blob) {
		t.Fatal("streamed values differ")
	}
	// A varbinary(8000) value of 4000 bytes does not fit a 1 KiB cap.
	big := AppendColMetadata(nil, cols)
	big, _ = AppendRow(big, cols, []any{blob[:4000], nil, nil})
	_, err := feedStreamErr(opts, big, 4088, &Capture{})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Token != TokenRow {
		t.Fatalf("err = %#v", err)
	}
	// An ERROR token bigger than the cap.
	msg := Message{Token: TokenError, Number: 50000, Class: 16, Text: strings.Repeat("e", 2000)}.Append(nil)
	if _, err := feedStreamErr(opts, msg, 100, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ERROR token: err = %v", err)
	}
	// A COLMETADATA (no length prefix) bigger than the cap.
	many := make([]Column, 100)
	for i := range many {
		many[i] = Column{Name: strings.Repeat("n", 100), Type: TypeInfo{Type: TypeIntN, Size: 4}}
	}
	if _, err := feedStreamErr(opts, AppendColMetadata(nil, many), 100, nil); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("COLMETADATA: err = %v", err)
	}
	// A PLP total above MaxValueSize is refused before anything is delivered.
	if _, err := feedStreamErr(StreamOptions{MaxValueSize: 50_000}, small, 4088, &Capture{}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("MaxValueSize: err = %v", err)
	}
}

func TestStreamFeatureExtAck(t *testing.T) {
	ack := FeatureExtAck{Features: []Feature{{ID: FeatureUTF8Support, Data: []byte{1}}}}.Append(nil)
	res := checkResplit(t, StreamOptions{RequestedFeatures: []byte{FeatureUTF8Support, FeatureJSONSupport}}, ack)
	if !reflect.DeepEqual(res.events, []string{"FeatureExtAck"}) {
		t.Fatal(res.events)
	}
	_, err := feedStreamErr(StreamOptions{RequestedFeatures: []byte{FeatureJSONSupport}}, ack, 1000, nil)
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Token != TokenFeatureExtAck || pe.Offset != 1 {
		t.Fatalf("unrequested ack: err = %v", err)
	}
}

// Malformed streams give a *ProtocolError naming the token and the offset;
// the error is sticky until Reset.
func TestStreamMalformed(t *testing.T) {
	meta := AppendColMetadata(nil, []Column{{Name: "a", Type: TypeInfo{Type: TypeIntN, Size: 4}}})
	cases := []struct {
		name   string
		stream []byte
		tok    byte
		off    int64
		msg    string
	}{
		{"unknown token", append(append([]byte{}, meta...), 0x01), 0x01, int64(len(meta)), "unknown token 0x01"},
		{"row without metadata", []byte{0xD1, 0x04, 1, 0, 0, 0}, TokenRow, 0, "without column metadata"},
		{"intn length 3", append(append([]byte{}, meta...), 0xD1, 0x03, 1, 2, 3), TokenRow, int64(len(meta) + 1), "invalid length 3"},
		{"altrow", []byte{0xD3, 0, 0}, TokenAltRow, 0, "not supported"},
		{"column count", []byte{0x81, 0x01, 0x20}, TokenColMetadata, 1, "exceeds 4096"},
		{"bad type", []byte{0x81, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0x01, 0}, TokenColMetadata, 9, "unknown type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, piece := range []int{1, 1000} {
				_, err := feedStreamErr(StreamOptions{}, c.stream, piece, &Capture{})
				var pe *ProtocolError
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v", err)
				}
				if pe.Token != c.tok || pe.Offset != c.off || !strings.Contains(pe.Error(), c.msg) {
					t.Fatalf("got token %#x offset %d %q; want %#x %d %q", pe.Token, pe.Offset, pe.Error(), c.tok, c.off, c.msg)
				}
			}
		})
	}
	s := NewStream(StreamOptions{})
	_, _, err := s.Next([]byte{0x02})
	if _, _, err2 := s.Next(meta); err2 != err {
		t.Fatal("error not sticky")
	}
	s.Reset()
	if _, ev, err := s.Next(meta); err != nil || ev != EventColMetadata {
		t.Fatal("Reset did not clear the error", err)
	}
}

// A sink's error from EndRow stops the stream and comes back unchanged.
func TestStreamSinkError(t *testing.T) {
	payload, _, _ := allTypesStream(t, 0, false)
	boom := errors.New("sink full")
	s := NewStream(StreamOptions{})
	s.SetSink(&failingSink{Capture: &Capture{}, err: boom})
	buf := payload
	for {
		n, _, err := s.Next(buf)
		buf = buf[n:]
		if err == boom {
			break
		}
		if err != nil {
			t.Fatalf("err = %v, want the sink's", err)
		}
	}
}

type failingSink struct {
	*Capture
	err error
}

func (f *failingSink) EndRow() error { return f.err }

func TestColMetadataRoundTrip(t *testing.T) {
	cols := allTypesColumns()
	cols = append(cols,
		Column{Name: "txt", UserType: 0, Flags: ColFlagNullable, Type: TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: cLatin1}, TableName: []string{"db", "dbo", "t"}},
		Column{Name: "ts", UserType: 0x50, Flags: 0x0010, Type: TypeInfo{Type: TypeBigBinary, Size: 8}},
		Column{Name: "名前", Type: TypeInfo{Type: TypeUDT, Size: MaxVarLen, UDTDatabase: "d", UDTSchema: "sys", UDTName: "geography", UDTAssembly: "Microsoft.SqlServer.Types"}},
	)
	enc := AppendColMetadata(nil, cols)
	var m ColMetadata
	n, err := m.Decode(enc[1:], false)
	if err != nil || n != len(enc)-1 {
		t.Fatalf("Decode: %d/%d %v", n, len(enc)-1, err)
	}
	if !reflect.DeepEqual(m.Columns, cols) {
		for i := range cols {
			if !reflect.DeepEqual(m.Columns[i], cols[i]) {
				t.Fatalf("column %d: %#v\nwant %#v", i, m.Columns[i], cols[i])
			}
		}
	}
	for k := 0; k < len(enc)-1; k++ {
		if _, err := m.Decode(enc[1:1+k], false); err != ErrNeedMore {
			t.Fatalf("prefix %d: %v", k, err)
		}
	}
	// NoMetaData.
	if b := AppendColMetadata(nil, nil); string(b) != "\x81\xff\xff" {
		t.Fatalf("% x", b)
	}
	if n, err := m.Decode([]byte{0xff, 0xff}, false); n != 2 || err != nil || len(m.Columns) != 0 {
		t.Fatal(n, err)
	}
}

// COLMETADATA with a CekTable and an encrypted column (Always Encrypted).
func TestColMetadataCekTable(t *testing.T) {
	b := ahex(`
		01 00                         # 1 column
		01 00                         # EkValueCount 1
		05 00 00 00 01 00 00 00 01 00 00 00   # DatabaseId, CekId, CekVersion
		00 00 00 00 00 00 00 00       # CekMDVersion
		01                            # one EncryptionKeyValue
		02 00 aa bb                   # EncryptedKey
		01 6b 00                      # KeyStoreName "k"
		01 00 70 00                   # KeyPath "p"
		01 61 00                      # AsymmetricAlgo "a"
		00 00 00 00  01 08            # UserType, Flags nullable|encrypted
		a5 10 00                      # varbinary(16) ciphertext
		00 00  00 00 00 00  38        # CryptoMetaData: ordinal, usertype, int
		02 01 01                      # algo 2, algo type, norm version
		01 78 00                      # name "x"`)
	var m ColMetadata
	n, err := m.Decode(b, true)
	if err != nil || n != len(b) {
		t.Fatalf("Decode: %d/%d %v", n, len(b), err)
	}
	if len(m.CekTable) != 2+20+1+4+3+4+3 || m.Columns[0].Name != "x" || m.Columns[0].Type.Type != TypeBigVarBinary {
		t.Fatalf("%#v", m)
	}
	if _, err := m.Decode(b[:2], false); err == nil {
		// Without the feature the CekTable bytes are read as a column.
	}
}

// allocSink is a sink that keeps values in reused storage (no allocation
// once warm); with decline set it refuses Reserve, so the decoder's own
// transcoding scratch is used.
type allocSink struct {
	buf     []byte
	sum     uint64
	decline bool
}

func (s *allocSink) Columns(cols []Column, modes []Mode) error { return nil }
func (s *allocSink) Null(col int)                              { s.sum++ }
func (s *allocSink) Bool(col int, v bool)                      { s.sum += 2 }
func (s *allocSink) Int(col int, v int64)                      { s.sum += uint64(v) }
func (s *allocSink) Float32(col int, v float32)                { s.sum += uint64(v) }
func (s *allocSink) Float64(col int, v float64)                { s.sum += uint64(v) }
func (s *allocSink) Decimal(col int, v Decimal)                { s.sum += v.Lo }
func (s *allocSink) Money(col int, v int64)                    { s.sum += uint64(v) }
func (s *allocSink) Date(col int, days int32)                  { s.sum += uint64(days) }
func (s *allocSink) Time(col int, ticks int64)                 { s.sum += uint64(ticks) }
func (s *allocSink) DateTime(col int, v DateTime)              { s.sum += uint64(v.Ticks) }
func (s *allocSink) DateTimeOffset(col int, v DateTimeOffset)  { s.sum += uint64(v.OffsetMin) }
func (s *allocSink) GUID(col int, v GUID)                      { s.sum += uint64(v[0]) }
func (s *allocSink) Variant(col int, ti *TypeInfo)             { s.sum += uint64(ti.Type) }
func (s *allocSink) BeginValue(col int, size int64)            { s.buf = s.buf[:0] }
func (s *allocSink) Reserve(col int, n int) []byte {
	if s.decline {
		return nil
	}
	if cap(s.buf)-len(s.buf) < n {
		nb := make([]byte, len(s.buf), 2*cap(s.buf)+n)
		copy(nb, s.buf)
		s.buf = nb
	}
	return s.buf[len(s.buf) : len(s.buf)+n]
}
func (s *allocSink) Commit(col int, n int)   { s.buf = s.buf[:len(s.buf)+n] }
func (s *allocSink) Write(col int, p []byte) { s.sum += uint64(len(p)) }
func (s *allocSink) EndValue(col int)        { s.sum += uint64(len(s.buf)) }
func (s *allocSink) EndRow() error           { return nil }

// Zero allocations per row for rows of every type (ROW and NBCROW, NULLs,
// PLP in small chunks, code pages 1252/1251/932, UTF-8, UTF-16, variants),
// also when the sink declines Reserve and when rows arrive in pieces.
func TestStreamAllTypesNoAllocs(t *testing.T) {
	payload, _, _ := allTypesStream(t, 7, false)
	var meta ColMetadata
	mn, err := meta.Decode(payload[1:], false)
	if err != nil {
		t.Fatal(err)
	}
	head, rows := payload[:1+mn], payload[1+mn:]
	for _, decline := range []bool{false, true} {
		sink := &allocSink{decline: decline}
		s := NewStream(StreamOptions{})
		s.SetSink(sink)
		if _, ev, err := s.Next(head); err != nil || ev != EventColMetadata {
			t.Fatal(ev, err)
		}
		buf := make([]byte, 0, 64<<10)
		run := func(piece int) {
			buf = buf[:0]
			rest := rows
			for {
				n, _, err := s.Next(buf)
				buf = buf[:copy(buf, buf[n:])]
				if err == ErrNeedMore {
					if len(rest) == 0 {
						return
					}
					k := min(piece, len(rest))
					buf, rest = append(buf, rest[:k]...), rest[k:]
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, piece := range []int{len(rows), 5} {
			run(piece)
			if a := testing.AllocsPerRun(5, func() { run(piece) }); a != 0 {
				t.Fatalf("decline %v piece %d: %v allocations per pass", decline, piece, a)
			}
		}
	}
}

// sql_variant with every base type (MS-TDS 2.2.5.5.4), encoded by
// AppendValue and decoded back through DecodeCell.
func TestCellVariantAllBaseTypes(t *testing.T) {
	vals := []Variant{
		{TypeInfo{Type: TypeInt1}, int64(255)},
		{TypeInfo{Type: TypeBit}, true},
		{TypeInfo{Type: TypeInt2}, int64(-32768)},
		{TypeInfo{Type: TypeInt4}, int64(-1)},
		{TypeInfo{Type: TypeInt8}, int64(1) << 62},
		{TypeInfo{Type: TypeFlt4}, float32(2.5)},
		{TypeInfo{Type: TypeFlt8}, -0.125},
		{TypeInfo{Type: TypeMoney}, Money(-12345678)},
		{TypeInfo{Type: TypeMoney4}, Money(-10000)},
		{TypeInfo{Type: TypeDateTime}, DateTime{Days: days(2024, 2, 29), Ticks: 33333}},
		{TypeInfo{Type: TypeDateTim4}, DateTime{Days: days(2000, 1, 1), Ticks: 600_000_000}},
		{TypeInfo{Type: TypeGUID}, GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{TypeInfo{Type: TypeDecimalN, Precision: 38, Scale: 10}, dec(false, 5, 7, 38, 10)},
		{TypeInfo{Type: TypeNumericN, Precision: 9, Scale: 0}, dec(true, 0, 999999999, 9, 0)},
		{TypeInfo{Type: TypeDateN}, Date(0)},
		{TypeInfo{Type: TypeTimeN, Scale: 3}, Time(12_345_670_000)},
		{TypeInfo{Type: TypeDateTime2N, Scale: 0}, DateTime{Days: 3652058, Ticks: 86399 * 10_000_000}},
		{TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, DateTimeOffset{UTC: DateTime{Days: 700000, Ticks: 1}, OffsetMin: -300}},
		{TypeInfo{Type: TypeBigVarBinary, Size: 100}, []byte{0, 1, 2}},
		{TypeInfo{Type: TypeBigBinary, Size: 3}, []byte{9, 8, 7}},
		{TypeInfo{Type: TypeBigVarChar, Size: 100, Collation: cJapanese}, "日本語"},
		{TypeInfo{Type: TypeBigChar, Size: 4, Collation: cCyrillic}, "Ёжик"},
		{TypeInfo{Type: TypeNVarChar, Size: 100, Collation: cLatin1}, "x\U0001F600"},
		{TypeInfo{Type: TypeNChar, Size: 4, Collation: cLatin1}, "ab"},
	}
	ti := TypeInfo{Type: TypeVariant, Size: 8009}
	for _, v := range vals {
		enc, err := AppendValue(nil, &ti, v)
		if err != nil {
			t.Fatalf("%#x: %v", v.Type.Type, err)
		}
		got, ok := decodeCell(t, ti, enc).(Variant)
		if !ok || got.Type.Type != v.Type.Type || !reflect.DeepEqual(got.Value, v.Value) {
			t.Fatalf("%#x: got %#v, want %#v", v.Type.Type, got, v)
		}
	}
}

// MS-TDS 4.4 login response, 4.18 SESSIONSTATE and 4.21 FEATUREEXTACK
// through the Stream, re-split like every positive stream.
func TestStreamSpecLoginResponses(t *testing.T) {
	res := checkResplit(t, StreamOptions{}, wireReply(t, "4.4-login-response"))
	want := []string{"EnvChange", "Info 5701 \"Changed database context to 'master'.\"", "EnvChange", "EnvChange",
		"EnvChange", "Info 5703 \"Changed language setting to us_english.\"", "LoginAck", "Done 0xfd status=0x0 cmd=0x0 rows=0"}
	if !reflect.DeepEqual(res.events, want) {
		t.Fatalf("4.4 events %q", res.events)
	}
	res = checkResplit(t, StreamOptions{}, wireReply(t, "4.18-sessionstate"))
	want = []string{"Done 0xfd status=0x1 cmd=0xbe rows=0", "SessionState", "Done 0xfd status=0x0 cmd=0xfd rows=0"}
	if !reflect.DeepEqual(res.events, want) {
		t.Fatalf("4.18 events %q", res.events)
	}
	req := []byte{FeatureSessionRecovery, FeatureColumnEncryption, FeatureGlobalTransactions, FeatureAzureSQLSupport}
	payload := wireReply(t, "4.21-featureextack-azuresqlsupport")
	res = checkResplit(t, StreamOptions{RequestedFeatures: req}, payload)
	if n := len(res.events); n < 2 || res.events[n-2] != "FeatureExtAck" {
		t.Fatalf("4.21 events %q", res.events)
	}
	// Without AZURESQLSUPPORT requested, its acknowledgement is an error.
	if _, err := feedStreamErr(StreamOptions{RequestedFeatures: req[:3]}, payload, 512, nil); err == nil {
		t.Fatal("4.21: ack of an unrequested feature accepted")
	}
}

// MS-TDS 4.17 is malformed in the spec itself (a stray 00 after the
// collation ENVCHANGE): the Stream meets token 0x00 and says so.
func TestStreamSpec417Malformed(t *testing.T) {
	raw := wireSpec(t, "4.17-featureextack-sessionrecovery-malformed")
	payload := raw[HeaderLen:]
	_, err := feedStreamErr(StreamOptions{RequestedFeatures: []byte{FeatureSessionRecovery}}, payload, 512, &Capture{})
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "unknown token 0x00") {
		t.Fatalf("err = %v", err)
	}
	if pe.Offset <= 0 || int(pe.Offset) >= len(payload) || payload[pe.Offset] != 0 {
		t.Fatalf("offset %d does not point at the stray byte", pe.Offset)
	}
}

// Every token of the explicit token table through the Stream (MS-TDS
// 2.2.7), re-split, with the decoded values checked.
func TestStreamEveryToken(t *testing.T) {
	cols := []Column{{Name: "a", Flags: ColFlagNullable, Type: TypeInfo{Type: TypeIntN, Size: 4}}}
	var out []byte
	out = LoginAck{Interface: 1, TDSVersion: 0x74000004, ProgName: "srv", ProgVersion: [4]byte{16, 0, 0x10, 0x01}}.Append(out)
	out = EnvChange{Type: EnvDatabase, NewValue: "db", OldValue: "master"}.Append(out)
	out = Message{Token: TokenInfo, Number: 5701, Class: 0, Text: "ctx", Server: "s", Line: 1}.Append(out)
	out = FeatureExtAck{Features: []Feature{{ID: FeatureUTF8Support, Data: []byte{1}}}}.Append(out)
	out = SessionState{SeqNo: 2, Status: 1, States: []SessionStateData{{ID: 9, Value: []byte{1, 2}}}}.Append(out)
	out = FedAuthInfo{Options: []FedAuthInfoOpt{{ID: 1, Data: AppendUTF16LE(nil, "https://sts")}}}.Append(out)
	out = SSPI{Data: []byte{0x4e, 0x54, 0x4c, 0x4d}}.Append(out)
	out = AppendColMetadata(out, cols)
	out = TabName{Tables: [][]string{{"dbo", "t"}}}.Append(out)
	out = ColInfo{Columns: []ColProperty{{ColNum: 1, TableNum: 1}}}.Append(out)
	out = Order{Columns: []uint16{1}}.Append(out)
	out, _ = AppendNBCRow(out, cols, []any{nil})
	out, _ = AppendRow(out, cols, []any{int64(-5)})
	out = DataClassification{Labels: []SensitivityLabel{{Name: "L", ID: "l"}}, InfoTypes: []InformationType{{Name: "I", ID: "i"}},
		Columns: [][]SensitivityProperty{{{LabelIndex: 0, InfoTypeIndex: 0}}}}.Append(out)
	out = Done{Token: TokenDoneInProc, Status: DoneMore | DoneCount, CurCmd: 0xC1, RowCount: 2}.Append(out)
	out = ReturnStatus{Value: -6}.Append(out)
	rv := ReturnValue{Ordinal: 1, Name: "@out", Status: 1, Type: TypeInfo{Type: TypeNVarChar, Size: 20, Collation: cLatin1}}
	rv.Value = AppendUShortUTF16(nil, "héllo")
	out = rv.Append(out)
	out = Message{Token: TokenError, Number: 50000, State: 1, Class: 16, Text: "boom", Server: "s", Proc: "p", Line: 3}.Append(out)
	out = Done{Token: TokenDoneProc, Status: DoneError, CurCmd: 0xE0}.Append(out)

	opts := StreamOptions{RequestedFeatures: []byte{FeatureUTF8Support}}
	res := checkResplit(t, opts, out)
	want := []string{"LoginAck", "EnvChange", "Info 5701 \"ctx\"", "FeatureExtAck", "SessionState", "FedAuthInfo", "SSPI",
		"ColMetadata a:0x26", "TabName", "ColInfo", "Order", "Row", "Row", "DataClassification",
		"Done 0xff status=0x11 cmd=0xc1 rows=2", "ReturnStatus -6", "ReturnValue", "Error 50000 \"boom\"", "Done 0xfe status=0x2 cmd=0xe0 rows=0"}
	if !reflect.DeepEqual(res.events, want) {
		t.Fatalf("events %q", res.events)
	}
	if !reflect.DeepEqual(res.sets[0], [][]any{{nil}, {int64(-5)}}) {
		t.Fatalf("rows %#v", res.sets[0])
	}
	// The last token of each kind is kept in the Stream; the RETURNVALUE's
	// value decodes through DecodeCell.
	s := NewStream(opts)
	buf := out
	for len(buf) > 0 {
		n, _, err := s.Next(buf)
		if err != nil {
			t.Fatal(err)
		}
		buf = buf[n:]
	}
	if s.LoginAck.ProgName != "srv" || s.EnvChange.NewValue != "db" || string(s.SSPI.Data) != "NTLM" ||
		len(s.Order.Columns) != 1 || s.TabName.Tables[0][1] != "t" || s.SessionState.SeqNo != 2 ||
		s.ReturnStatus != -6 || s.Message.Text != "boom" || s.Rows != 2 || len(s.DataClassification.Labels) != 1 {
		t.Fatalf("stream state %+v", s)
	}
	c := &Capture{}
	c.Columns([]Column{{Type: s.ReturnValue.Type}}, []Mode{ModeValue})
	if _, err := DecodeCell(s.ReturnValue.Value, &s.ReturnValue.Type, 0, c); err != nil || c.cur[0] != "héllo" || s.ReturnValue.Name != "@out" {
		t.Fatalf("return value %#v %v", c.cur, err)
	}
}

type columnsErrSink struct{ Capture }

func (c *columnsErrSink) Columns([]Column, []Mode) error { return errors.New("no thanks") }

// SetSink after COLMETADATA gives the new sink its Columns call at once; a
// sink refusing the columns stops the stream.
func TestStreamSetSinkLate(t *testing.T) {
	cols := []Column{{Name: "a", Type: TypeInfo{Type: TypeIntN, Size: 8}}}
	meta := AppendColMetadata(nil, cols)
	row, _ := AppendRow(nil, cols, []any{int64(1) << 40})
	s := NewStream(StreamOptions{})
	if _, ev, err := s.Next(meta); err != nil || ev != EventColMetadata {
		t.Fatal(ev, err)
	}
	c := &Capture{}
	if err := s.SetSink(c); err != nil || c.Sets != 1 {
		t.Fatalf("SetSink: %v, %d Columns calls", err, c.Sets)
	}
	if _, ev, err := s.Next(row); err != nil || ev != EventRow || c.Rows[0][0] != int64(1)<<40 {
		t.Fatal(ev, err, c.Rows)
	}
	if err := s.SetSink(&columnsErrSink{}); err == nil {
		t.Fatal("Columns error not returned")
	}
	if _, _, err := s.Next(row); err == nil || err.Error() != "no thanks" {
		t.Fatalf("stream not stopped: %v", err)
	}
}
