package decode

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The value encoders and the cell decoder are written independently; these
// tests hold them to each other: encode -> DecodeCell -> Capture gives the
// value back (exactly, or within the type's documented rounding), and the
// decoded value re-encodes to the very same bytes.

// decodeOne decodes the single value enc of type ti through DecodeCell into
// a Capture (with a Columns call, so text comes back as string).
func decodeOne(t *testing.T, ti *TypeInfo, enc []byte) any {
	t.Helper()
	var c Capture
	modes := []Mode{ModeValue}
	if err := c.Columns([]Column{{Name: "c", Type: *ti}}, modes); err != nil {
		t.Fatal(err)
	}
	n, err := DecodeCell(enc, ti, 0, &c)
	if err != nil {
		t.Fatalf("DecodeCell(% X): %v", head(enc), err)
	}
	if n != len(enc) {
		t.Fatalf("DecodeCell took %d of %d bytes", n, len(enc))
	}
	if err := c.EndRow(); err != nil {
		t.Fatal(err)
	}
	if c.Err != nil {
		t.Fatalf("sink protocol: %v", c.Err)
	}
	if len(c.Rows) != 1 || len(c.Rows[0]) != 1 {
		t.Fatalf("captured %d rows", len(c.Rows))
	}
	return c.Rows[0][0]
}

func head(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// tickDiff is a - b in 100 ns ticks.
func tickDiff(a, b DateTime) int64 {
	return int64(a.Days-b.Days)*TicksPerDay + a.Ticks - b.Ticks
}

// smallDTTolerance is smalldatetime's rounding: SQL Server rounds 29.999 s
// up to the next minute, a difference of 30.001 s.
const smallDTTolerance = 300_010_000

// tolerance is the rounding the type's wire form allows, in ticks.
func tolerance(ti *TypeInfo) int64 {
	switch ti.Type {
	case TypeDateTime:
		return 16667 // half of 1/300 s
	case TypeDateTim4:
		return smallDTTolerance
	case TypeDateTimeN:
		if ti.Size == 4 {
			return smallDTTolerance
		}
		return 16667
	case TypeTimeN, TypeDateTime2N, TypeDateTimeOffset:
		return int64(pow10u64[7-min(ti.Scale, 7)]) / 2
	}
	return 0
}

// expected returns the value the decoder should give back for v encoded as
// ti, where it is not v itself, and the tick tolerance for time types.
func expected(ti *TypeInfo, v any) any {
	if v == nil {
		return nil
	}
	if ti.Type == TypeVariant {
		vv, ok := v.(Variant)
		if !ok {
			return v
		}
		bt := FixedForm(vv.Type)
		return Variant{Type: bt, Value: expected(&bt, vv.Value)}
	}
	if n, ok := asInt(v); ok {
		return n
	}
	switch x := v.(type) {
	case float64:
		if ti.Type == TypeFlt4 || ti.Type == TypeFltN && ti.Size == 4 {
			return float32(x)
		}
	case float32:
		if !(ti.Type == TypeFlt4 || ti.Type == TypeFltN && ti.Size == 4) {
			return float64(x)
		}
	case time.Time:
		if ti.Type == TypeDateTimeOffset {
			return DateTimeOffsetFromTime(x)
		}
		return DateTimeFromTime(x)
	case Decimal:
		r, err := RescaleDecimal(x, ti.Scale)
		if err != nil {
			return x
		}
		r.Precision = ti.Precision
		if r.Hi|r.Lo == 0 {
			r.Neg = false
		}
		return r
	case string:
		switch ti.Type {
		case TypeBigChar, TypeChar:
			enc, _ := EncodeText(nil, ti.Collation, x)
			return x + strings.Repeat(" ", max(0, charLimit(ti)-len(enc)))
		case TypeNChar:
			return x + strings.Repeat(" ", max(0, (charLimit(ti)-2*UTF16Len(x))/2))
		}
	case []byte:
		switch ti.Type {
		case TypeBigBinary, TypeBinary:
			limit := charLimit(ti)
			if ti.Type == TypeBinary {
				limit = int(ti.Size)
			}
			return append(append([]byte{}, x...), make([]byte, max(0, limit-len(x)))...)
		case TypeBigChar, TypeBigVarChar, TypeChar, TypeVarChar, TypeText:
			return nil // bytes in a code page come back as text: checked by re-encoding only
		case TypeImage, TypeBigVarBinary, TypeVarBinary, TypeUDT:
			if len(x) == 0 {
				return []byte{}
			}
		}
	}
	return v
}

// sameValue compares a decoded value with the expected one, allowing tol
// ticks of rounding for time types.
func sameValue(ti *TypeInfo, got, want any) string {
	if want == nil {
		if got != nil {
			return fmt.Sprintf("got %#v, want NULL", got)
		}
		return ""
	}
	tol := tolerance(ti)
	switch w := want.(type) {
	case Variant:
		g, ok := got.(Variant)
		if !ok {
			return fmt.Sprintf("got %T, want Variant", got)
		}
		if g.Type.Type != w.Type.Type || g.Type.Scale != w.Type.Scale || g.Type.Precision != w.Type.Precision ||
			g.Type.Collation != w.Type.Collation {
			return fmt.Sprintf("variant base type %+v, want %+v", g.Type, w.Type)
		}
		if w.Type.Type == TypeBigVarChar || w.Type.Type == TypeNVarChar || w.Type.Type == TypeBigVarBinary ||
			w.Type.Type == TypeBigChar || w.Type.Type == TypeNChar || w.Type.Type == TypeBigBinary {
			if g.Type.Size != uint32(charLimit(&w.Type)) {
				return fmt.Sprintf("variant max length %d, want %d", g.Type.Size, charLimit(&w.Type))
			}
		}
		bt := w.Type
		return sameValue(&bt, g.Value, w.Value)
	case DateTime:
		g, ok := got.(DateTime)
		if !ok {
			return fmt.Sprintf("got %T, want DateTime", got)
		}
		if d := tickDiff(g, w); d < -tol || d > tol {
			return fmt.Sprintf("got %+v, want %+v ± %d ticks", g, w, tol)
		}
		return ""
	case DateTimeOffset:
		g, ok := got.(DateTimeOffset)
		if !ok || g.OffsetMin != w.OffsetMin {
			return fmt.Sprintf("got %#v, want %+v", got, w)
		}
		if d := tickDiff(g.UTC, w.UTC); d < -tol || d > tol {
			return fmt.Sprintf("got %+v, want %+v ± %d ticks", g, w, tol)
		}
		return ""
	case Time:
		g, ok := got.(Time)
		if !ok {
			return fmt.Sprintf("got %T, want Time", got)
		}
		d := (int64(g) - int64(w)) % TicksPerDay
		if d > TicksPerDay/2 { // time(n) wraps at midnight
			d -= TicksPerDay
		} else if d < -TicksPerDay/2 {
			d += TicksPerDay
		}
		if d < -tol || d > tol {
			return fmt.Sprintf("got %d, want %d ± %d ticks", g, w, tol)
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("got %#v (%T), want %#v (%T)", got, got, want, want)
	}
	return ""
}

// roundTrip runs one value through encode -> DecodeCell -> Capture -> encode.
func roundTrip(t *testing.T, name string, o EncodeOptions, ti TypeInfo, v any) {
	t.Helper()
	enc, err := o.AppendValue(nil, &ti, v)
	if err != nil {
		t.Errorf("%s: encode: %v", name, err)
		return
	}
	got := decodeOne(t, &ti, enc)
	if want := expected(&ti, v); want != nil || v == nil {
		if msg := sameValue(&ti, got, want); msg != "" {
			t.Errorf("%s: %s", name, msg)
		}
	}
	re, err := o.AppendValue(nil, &ti, got)
	if err != nil {
		t.Errorf("%s: re-encoding the decoded %#v: %v", name, got, err)
		return
	}
	if !bytes.Equal(re, enc) {
		t.Errorf("%s: re-encoding differs:\n got % X\nwant % X", name, head(re), head(enc))
	}
}

func TestRoundTripAllTypes(t *testing.T) {
	// Every annotated case (every type, its edge values and NULL), framed
	// as AppendValue frames it and with the PLP variants.
	opts := []EncodeOptions{{}, {PLPChunk: 1}, {PLPChunk: 3, UnknownPLPLength: true}}
	for _, c := range encCases() {
		for _, o := range opts {
			roundTrip(t, fmt.Sprintf("%s %+v", c.name, o), o, c.ti, c.v)
		}
	}
	// Maximum lengths and large values.
	big := []struct {
		name string
		ti   TypeInfo
		v    any
	}{
		{"varchar(8000) full", TypeInfo{Type: TypeBigVarChar, Size: 8000, Collation: collLatin1}, strings.Repeat("é", 8000)},
		{"nvarchar(4000) supplementary", TypeInfo{Type: TypeNVarChar, Size: 8000}, strings.Repeat("😀", 2000)},
		{"varbinary(8000) full", TypeInfo{Type: TypeBigVarBinary, Size: 8000}, bytes.Repeat([]byte{0xA5}, 8000)},
		{"nvarchar(max) 100k", TypeInfo{Type: TypeNVarChar, Size: MaxVarLen}, strings.Repeat("ab😀ц", 10000)},
		{"varchar(max) cp932 50k", TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: collJapanese}, strings.Repeat("日本ｱa", 10000)},
		{"varbinary(max) 70k", TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, bytes.Repeat([]byte{1, 2, 3, 4, 5, 6, 7}, 10000)},
		{"xml 20k", TypeInfo{Type: TypeXML}, "<r>" + strings.Repeat("<e a='ü😀'/>", 2000) + "</r>"},
		{"json 20k", TypeInfo{Type: TypeJSON}, "[" + strings.Repeat(`"ü😀",`, 4000) + "1]"},
		{"text cp1251 20k", TypeInfo{Type: TypeText, Size: 0x7FFFFFFF, Collation: collCyrillic}, strings.Repeat("Привет", 4000)},
		{"ntext 20k", TypeInfo{Type: TypeNText, Size: 0x7FFFFFFE}, strings.Repeat("ü😀", 5000)},
		{"image 20k", TypeInfo{Type: TypeImage, Size: 0x7FFFFFFF}, bytes.Repeat([]byte{0, 0xFF}, 10000)},
		{"vector(1998)", TypeInfo{Type: TypeVector, Size: 8000}, make([]float32, 1998)},
		{"variant nvarchar(4000)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeNVarChar, Size: 8000, Collation: collLatin1}, Value: strings.Repeat("ж", 4000)}},
		{"variant varchar 932", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeBigVarChar, Size: 100, Collation: collJapanese}, Value: "日本"}},
		{"variant char(5)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeBigChar, Size: 5, Collation: collLatin1}, Value: "ab"}},
		{"variant binary(3)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeBigBinary, Size: 3}, Value: []byte{9}}},
		{"variant datetimeoffset(7)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeDateTimeOffset, Scale: 7}, Value: DateTimeOffset{UTC: maxDT, OffsetMin: -840}}},
		{"variant datetime2(0)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeDateTime2N, Scale: 0}, Value: DateTime{Days: 5, Ticks: 10_000_000}}},
		{"variant date", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeDateN}, Value: Date(MaxDate)}},
		{"variant numeric(38,38)", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeNumericN, Size: 17, Precision: 38, Scale: 38}, Value: mustDecimal("-0.99999999999999999999999999999999999999", 38, 38)}},
		{"variant bit", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeBitN, Size: 1}, Value: true}},
		{"variant tinyint", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeInt1}, Value: int64(255)}},
		{"variant bigint", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeInt8}, Value: int64(math.MinInt64)}},
		{"variant real", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeFltN, Size: 4}, Value: float32(-0.5)}},
		{"variant float", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeFlt8}, Value: math.SmallestNonzeroFloat64}},
		{"variant smallmoney", TypeInfo{Type: TypeVariant, Size: 8009}, Variant{Type: TypeInfo{Type: TypeMoney4}, Value: Money(-1)}},
		{"variant datetime", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeDateTime}, Value: DateTime{Days: sqlEpochDays, Ticks: 33333}}},
		{"variant smalldatetime", TypeInfo{Type: TypeVariant, Size: 8009},
			Variant{Type: TypeInfo{Type: TypeDateTimeN, Size: 4}, Value: DateTime{Days: sqlEpochDays + 1, Ticks: 600_000_000}}},
	}
	for _, c := range big {
		for _, o := range opts[:2] {
			roundTrip(t, fmt.Sprintf("%s %+v", c.name, o), o, c.ti, c.v)
		}
	}
}

func TestRoundTripRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	runes := []rune("aZ09 éüßœ€жЖ中日本ｱ😀𝄞\u0000\t")
	randString := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteRune(runes[r.IntN(len(runes))])
		}
		return b.String()
	}
	for i := 0; i < 3000; i++ {
		prec := uint8(1 + r.IntN(38))
		scale := uint8(r.IntN(int(prec) + 1))
		m := maxMagnitude[prec]
		d := Decimal{Lo: r.Uint64(), Neg: r.IntN(2) == 0, Scale: scale}
		if m[0] > 0 {
			d.Hi = r.Uint64N(m[0])
		} else if m[1] < math.MaxUint64 {
			d.Lo %= m[1] + 1
		}
		roundTrip(t, "decimal", EncodeOptions{}, TypeInfo{Type: TypeDecimalN, Size: uint32(decimalLen(prec)), Precision: prec, Scale: scale}, d)

		dt := DateTime{Days: r.Int32N(MaxDate), Ticks: r.Int64N(TicksPerDay)}
		sc := uint8(r.IntN(8))
		roundTrip(t, "datetime2", EncodeOptions{}, TypeInfo{Type: TypeDateTime2N, Scale: sc}, dt)
		roundTrip(t, "time", EncodeOptions{}, TypeInfo{Type: TypeTimeN, Scale: sc}, Time(dt.Ticks))
		off := int16(r.IntN(1681) - 840)
		dto := DateTimeOffset{UTC: DateTime{Days: 1 + r.Int32N(MaxDate-1), Ticks: dt.Ticks}, OffsetMin: off}
		roundTrip(t, "datetimeoffset", EncodeOptions{}, TypeInfo{Type: TypeDateTimeOffset, Scale: sc}, dto)
		ldt := DateTime{Days: minDateTimeDays + r.Int32N(MaxDate-minDateTimeDays), Ticks: dt.Ticks}
		roundTrip(t, "datetime", EncodeOptions{}, TypeInfo{Type: TypeDateTime}, ldt)
		sdt := DateTime{Days: sqlEpochDays + r.Int32N(maxSmallDateDays-sqlEpochDays), Ticks: dt.Ticks}
		roundTrip(t, "smalldatetime", EncodeOptions{}, TypeInfo{Type: TypeDateTimeN, Size: 4}, sdt)
		roundTrip(t, "money", EncodeOptions{}, TypeInfo{Type: TypeMoneyN, Size: 8}, Money(int64(r.Uint64())))
		roundTrip(t, "float", EncodeOptions{}, TypeInfo{Type: TypeFltN, Size: 8}, math.Float64frombits(r.Uint64()&^(0x7FF<<52)))
		roundTrip(t, "bigint", EncodeOptions{}, TypeInfo{Type: TypeIntN, Size: 8}, int64(r.Uint64()))

		s := randString(r.IntN(40))
		chunk := EncodeOptions{PLPChunk: 1 + r.IntN(9), UnknownPLPLength: r.IntN(2) == 0}
		roundTrip(t, "nvarchar", EncodeOptions{}, TypeInfo{Type: TypeNVarChar, Size: 400}, s)
		roundTrip(t, "nvarchar(max)", chunk, TypeInfo{Type: TypeNVarChar, Size: MaxVarLen}, s)
		roundTrip(t, "varchar utf8(max)", chunk, TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: collUTF8}, s)
		roundTrip(t, "xml", chunk, TypeInfo{Type: TypeXML}, s)
		roundTrip(t, "json", chunk, TypeInfo{Type: TypeJSON}, s)
		if enc, err := EncodeText(nil, collJapanese, s); err == nil {
			_ = enc
			roundTrip(t, "varchar(max) 932", chunk, TypeInfo{Type: TypeBigVarChar, Size: MaxVarLen, Collation: collJapanese}, s)
		}
		b := make([]byte, r.IntN(50))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		roundTrip(t, "varbinary(max)", chunk, TypeInfo{Type: TypeBigVarBinary, Size: MaxVarLen}, b)
		if t.Failed() {
			return
		}
	}
}

// streamRows decodes a token stream through Stream into a Capture, feeding
// it step bytes at a time (0: all at once), until DONE.
func streamRows(t *testing.T, msg []byte, step int) *Capture {
	t.Helper()
	var c Capture
	s := NewStream(StreamOptions{})
	s.SetSink(&c)
	var pending []byte
	fed := 0
	if step == 0 {
		pending, fed = msg, len(msg)
	}
	for calls := 0; ; calls++ {
		if calls > 4*len(msg)+100 {
			t.Fatalf("step %d: no progress after %d calls", step, calls)
		}
		n, ev, err := s.Next(pending)
		pending = pending[n:]
		if err == ErrNeedMore {
			if fed == len(msg) {
				t.Fatalf("stream wants more bytes after the end (step %d)", step)
			}
			k := min(step, len(msg)-fed)
			pending = append(pending, msg[fed:fed+k]...)
			fed += k
			continue
		}
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if ev == EventDone {
			if len(pending) != 0 || fed != len(msg) {
				t.Fatalf("step %d: DONE with %d bytes left", step, len(pending)+len(msg)-fed)
			}
			break
		}
	}
	if c.Err != nil {
		t.Fatalf("sink protocol: %v", c.Err)
	}
	return &c
}

func TestRoundTripRowsThroughStream(t *testing.T) {
	// One column per annotated case, values in a ROW, in an NBCROW, an
	// all-NULL NBCROW and a ROW with 1-byte unknown-length PLP chunks:
	// AppendColMetadata + AppendRow/AppendNBCRow + DONE through Stream.
	var cols []Column
	var vals, nulls []any
	for _, c := range encCases() {
		col := Column{Name: c.name, Flags: ColFlagNullable, Type: c.ti}
		switch c.ti.Type {
		case TypeText, TypeNText, TypeImage:
			col.TableName = []string{"dbo", "t"}
		}
		cols = append(cols, col)
		vals = append(vals, c.v)
		nulls = append(nulls, nil)
	}
	msg := AppendColMetadata(nil, cols)
	var err error
	if msg, err = AppendRow(msg, cols, vals); err != nil {
		t.Fatal(err)
	}
	if msg, err = AppendNBCRow(msg, cols, vals); err != nil {
		t.Fatal(err)
	}
	if msg, err = AppendNBCRow(msg, cols, nulls); err != nil {
		t.Fatal(err)
	}
	if msg, err = (EncodeOptions{PLPChunk: 1, UnknownPLPLength: true}).AppendRow(msg, cols, vals); err != nil {
		t.Fatal(err)
	}
	msg = Done{Token: TokenDone, Status: DoneCount, RowCount: 4}.Append(msg)
	for _, step := range []int{0, 1, 7, 512} {
		c := streamRows(t, msg, step)
		if len(c.Rows) != 4 {
			t.Fatalf("step %d: %d rows", step, len(c.Rows))
		}
		for r, row := range c.Rows {
			for i := range cols {
				v := vals[i]
				if r == 2 {
					v = nil
				}
				if msg := sameValue(&cols[i].Type, row[i], expected(&cols[i].Type, v)); msg != "" && expected(&cols[i].Type, v) != nil {
					t.Errorf("step %d row %d column %q: %s", step, r, cols[i].Name, msg)
				}
			}
		}
	}
}
