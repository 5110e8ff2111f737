package decode

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// wireTok is one decoded non-row token.
type wireTok struct {
	tok byte
	v   any
	raw []byte // the token's bytes, token byte included
}

// errWireRowToken stops wireWalk at COLMETADATA/ROW/NBCROW (decode-cells' tokens).
var errWireRowToken = errors.New("row token")

// wireDecodeToken decodes one non-row token whose token byte is src[0]; it
// returns the value and the bytes consumed including the token byte.
func wireDecodeToken(src []byte, dataClassRank bool) (any, int, error) {
	if len(src) == 0 {
		return nil, 0, ErrNeedMore
	}
	body := src[1:]
	var v interface {
		Decode([]byte) (int, error)
	}
	switch tok := src[0]; tok {
	case TokenDone, TokenDoneProc, TokenDoneInProc:
		v = &Done{Token: tok}
	case TokenError, TokenInfo:
		v = &Message{Token: tok}
	case TokenLoginAck:
		v = &LoginAck{}
	case TokenEnvChange:
		v = &EnvChange{}
	case TokenFeatureExtAck:
		v = &FeatureExtAck{}
	case TokenReturnStatus:
		v = &ReturnStatus{}
	case TokenReturnValue:
		v = &ReturnValue{}
	case TokenOrder:
		v = &Order{}
	case TokenTabName:
		v = &TabName{}
	case TokenColInfo:
		v = &ColInfo{}
	case TokenSessionState:
		v = &SessionState{}
	case TokenDataClassification:
		v = &DataClassification{WithRank: dataClassRank}
	case TokenFedAuthInfo:
		v = &FedAuthInfo{}
	case TokenSSPI:
		v = &SSPI{}
	case TokenColMetadata, TokenRow, TokenNBCRow:
		return nil, 0, errWireRowToken
	default:
		return nil, 0, protoErr(tok, "token stream", 0, "unknown token 0x"+wireHex(tok))
	}
	n, err := v.Decode(body)
	if err != nil {
		return nil, 0, err
	}
	return v, 1 + n, nil
}

// wireWalk decodes non-row tokens until the end of payload or a row token;
// it returns the tokens and the offset where it stopped.
func wireWalk(payload []byte) ([]wireTok, int, error) {
	var out []wireTok
	off := 0
	for off < len(payload) {
		v, n, err := wireDecodeToken(payload[off:], false)
		if err != nil {
			if pe, ok := err.(*ProtocolError); ok {
				pe.Offset += int64(off)
			}
			return out, off, err
		}
		out = append(out, wireTok{payload[off], v, payload[off : off+n]})
		off += n
	}
	return out, off, nil
}

// wireCheckTruncation checks that every proper prefix of each token's body
// yields ErrNeedMore: decoders never read past src and never mistake a
// short buffer for a malformed token.
func wireCheckTruncation(t *testing.T, toks []wireTok, rank ...bool) {
	t.Helper()
	for _, tk := range toks {
		for k := 1; k < len(tk.raw); k++ {
			_, _, err := wireDecodeToken(tk.raw[:k], len(rank) > 0 && rank[0])
			if err != ErrNeedMore {
				t.Fatalf("token %#x truncated to %d of %d bytes: %v, want ErrNeedMore", tk.tok, k, len(tk.raw), err)
			}
		}
	}
}

func wireReply(t *testing.T, name string) []byte {
	t.Helper()
	return wireMessage(t, name, PacketReply)
}

// TestWireSpecLoginResponse decodes MS-TDS 4.4 to its documented meaning.
func TestWireSpecLoginResponse(t *testing.T) {
	payload := wireReply(t, "4.4-login-response")
	toks, off, err := wireWalk(payload)
	if err != nil || off != len(payload) {
		t.Fatalf("walk stopped at %d: %v", off, err)
	}
	want := []any{
		&EnvChange{Type: EnvDatabase, NewValue: "master", OldValue: "master"},
		&Message{Token: TokenInfo, Number: 5701, State: 2, Class: 0, Text: "Changed database context to 'master'."},
		&EnvChange{Type: EnvCollation, NewBytes: []byte{0x09, 0x04, 0xD0, 0x00, 0x34}, Collation: Collation{Info: 0x00D00409, SortID: 0x34}},
		&EnvChange{Type: EnvLanguage, NewValue: "us_english"},
		&EnvChange{Type: EnvPacketSize, NewValue: "4096", OldValue: "4096"},
		&Message{Token: TokenInfo, Number: 5703, State: 1, Class: 0, Text: "Changed language setting to us_english."},
		&LoginAck{Interface: 1, TDSVersion: TDSVersion72, ProgName: "Microsoft SQL Server"},
		&Done{Token: TokenDone},
	}
	wireCompareToks(t, toks, want)
	if ps, ok := toks[4].v.(*EnvChange).PacketSize(); !ok || ps != 4096 {
		t.Fatalf("PacketSize = %d %v", ps, ok)
	}
	if c := toks[2].v.(*EnvChange).Collation; c.LCID() != 0x409 || c.SortID != 52 || c.UTF8() {
		t.Fatalf("collation %+v", c)
	}
	wireCheckTruncation(t, toks)
	wireCheckReencode(t, toks)
}

// TestWireSpecSQLBatchResponse decodes the non-row token of MS-TDS 4.7;
// COLMETADATA and ROW are decode-cells' (same fixture file).
func TestWireSpecSQLBatchResponse(t *testing.T) {
	payload := wireReply(t, "4.7-sqlbatch-response")
	_, off, err := wireWalk(payload)
	if err != errWireRowToken || off != 0 {
		t.Fatalf("walk: %d %v", off, err)
	}
	// The DONE is the last 13 bytes (after COLMETADATA 0x81 ... and ROW D1 03 00 66 6F 6F).
	doneAt := len(payload) - 13
	if !bytes.Equal(payload[doneAt-6:doneAt], []byte{0xD1, 0x03, 0x00, 'f', 'o', 'o'}) {
		t.Fatalf("unexpected ROW bytes % x", payload[doneAt-6:doneAt])
	}
	toks, _, err := wireWalk(payload[doneAt:])
	if err != nil {
		t.Fatal(err)
	}
	wireCompareToks(t, toks, []any{&Done{Token: TokenDone, Status: DoneCount, CurCmd: 0xC1, RowCount: 1}})
	// The column's TYPE_INFO (varchar(3), collation 09 04 D0 00 34) starts after
	// TokenType(1) Count(2) UserType(4) Flags(2).
	var ti TypeInfo
	n, err := DecodeTypeInfo(payload[9:], &ti)
	if err != nil || n != 8 || ti.Type != TypeBigVarChar || ti.Size != 3 || ti.Collation != (Collation{Info: 0x00D00409, SortID: 0x34}) {
		t.Fatalf("TYPE_INFO: %d %v %+v", n, err, ti)
	}
	if vn, err := ValueWireLen(payload[doneAt-5:], &ti); err != nil || vn != 5 {
		t.Fatalf("ROW value length %d %v", vn, err)
	}
}

// TestWireSpecRPCResponse decodes MS-TDS 4.9.
func TestWireSpecRPCResponse(t *testing.T) {
	payload := wireReply(t, "4.9-rpc-response")
	toks, off, err := wireWalk(payload)
	if err != nil || off != len(payload) {
		t.Fatalf("walk stopped at %d: %v", off, err)
	}
	wireCompareToks(t, toks, []any{
		&Done{Token: TokenDoneInProc, Status: DoneMore | DoneCount, CurCmd: 0xC1, RowCount: 1},
		&ReturnStatus{Value: 0},
		&Done{Token: TokenDoneProc, CurCmd: 0xE0},
	})
	wireCheckTruncation(t, toks)
	wireCheckReencode(t, toks)
}

// TestWireSpecSessionState decodes MS-TDS 4.18.
func TestWireSpecSessionState(t *testing.T) {
	payload := wireReply(t, "4.18-sessionstate")
	toks, off, err := wireWalk(payload)
	if err != nil || off != len(payload) {
		t.Fatalf("walk stopped at %d: %v", off, err)
	}
	wireCompareToks(t, toks, []any{
		&Done{Token: TokenDone, Status: DoneMore, CurCmd: 0xBE},
		&SessionState{SeqNo: 1, Status: 1, States: []SessionStateData{{ID: 9, Value: []byte{0xFF, 0xFF, 0xFF, 0xFF}}}},
		&Done{Token: TokenDone, CurCmd: 0xFD},
	})
	if !toks[1].v.(*SessionState).Recoverable() {
		t.Fatal("fRecoverable not set")
	}
	wireCheckTruncation(t, toks)
	wireCheckReencode(t, toks)
}

// TestWireSpecFeatureExtAck decodes MS-TDS 4.21.
func TestWireSpecFeatureExtAck(t *testing.T) {
	payload := wireReply(t, "4.21-featureextack-azuresqlsupport")
	toks, off, err := wireWalk(payload)
	if err != nil || off != len(payload) {
		t.Fatalf("walk stopped at %d: %v", off, err)
	}
	if len(toks) != 23 {
		t.Fatalf("%d tokens, want 23", len(toks))
	}
	for i := 0; i < 14; i++ {
		d, ok := toks[i].v.(*Done)
		if !ok || d.Token != TokenDoneInProc {
			t.Fatalf("token %d: %#v", i, toks[i].v)
		}
	}
	wireCompareToks(t, toks[14:22], []any{
		&EnvChange{Type: EnvDatabase, NewValue: "testdb", OldValue: "master"},
		&Message{Token: TokenInfo, Number: 5701, State: 2, Text: "Changed database context to 'testdb'.", Server: "testsvr", Line: 1},
		&EnvChange{Type: EnvCollation, NewBytes: []byte{0x09, 0x04, 0xD0, 0x00, 0x34}, Collation: Collation{Info: 0x00D00409, SortID: 0x34}},
		&EnvChange{Type: EnvLanguage, NewValue: "us_english"},
		&Message{Token: TokenInfo, Number: 5703, State: 1, Text: "Changed language setting to us_english.", Server: "testsvr", Line: 1},
		&LoginAck{Interface: 1, TDSVersion: TDSVersion74, ProgName: "Microsoft SQL Server", ProgVersion: [4]byte{12, 0, 3, 0xE8}},
		&EnvChange{Type: EnvPacketSize, NewValue: "8000", OldValue: "4096"},
		toks[21].v, // FEATUREEXTACK, checked below
	})
	ack := toks[21].v.(*FeatureExtAck)
	var ids []byte
	for _, f := range ack.Features {
		ids = append(ids, f.ID)
	}
	if !bytes.Equal(ids, []byte{FeatureSessionRecovery, FeatureColumnEncryption, FeatureGlobalTransactions, FeatureAzureSQLSupport}) {
		t.Fatalf("ack ids % x", ids)
	}
	if d, _ := ack.Ack(FeatureAzureSQLSupport); !bytes.Equal(d, []byte{1}) {
		t.Fatalf("AZURESQLSUPPORT data % x", d)
	}
	sr, _ := ack.Ack(FeatureSessionRecovery)
	if len(sr) != 0x77 {
		t.Fatalf("SESSIONRECOVERY data is %d bytes", len(sr))
	}
	states, err := DecodeSessionStateDataSet(sr)
	if err != nil || len(states) != 9 || states[0].ID != 0 || len(states[0].Value) != 9 || states[8].ID != 0x0B || len(states[8].Value) != 0x47 {
		t.Fatalf("session states: %v %+v", err, states)
	}
	if err := ack.Check([]byte{1, 4, 5, 8, 0x0A}); err != nil {
		t.Fatalf("Check with all requested: %v", err)
	}
	err = ack.Check([]byte{1, 4, 5})
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Token != TokenFeatureExtAck || !strings.Contains(pe.Msg, "0x08") {
		t.Fatalf("Check without AZURESQLSUPPORT: %v", err)
	}
	if d := toks[22].v.(*Done); *d != (Done{Token: TokenDone}) {
		t.Fatalf("final DONE %+v", d)
	}
	wireCheckTruncation(t, toks)
	wireCheckReencode(t, toks)
}

// TestWireSpecMalformed417 rejects MS-TDS 4.17: after the collation
// ENVCHANGE (Length 8) comes a stray 0x00, which is no token.
func TestWireSpecMalformed417(t *testing.T) {
	raw := wireSpec(t, "4.17-featureextack-sessionrecovery-malformed")
	payload := raw[HeaderLen:]
	toks, off, err := wireWalk(payload)
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "unknown token 0x00") {
		t.Fatalf("err = %v", err)
	}
	if len(toks) != 3 || off != 132 || pe.Offset != 132 {
		t.Fatalf("stopped after %d tokens at %d (error offset %d)", len(toks), off, pe.Offset)
	}
	if ec := toks[2].v.(*EnvChange); ec.Type != EnvCollation || len(ec.OldBytes) != 0 {
		t.Fatalf("third token %+v", ec)
	}
	t.Logf("4.17 rejected: %v", err)
}

// wireCompareToks compares decoded tokens with the expected values.
func wireCompareToks(t *testing.T, toks []wireTok, want []any) {
	t.Helper()
	if len(toks) != len(want) {
		t.Fatalf("%d tokens, want %d", len(toks), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(toks[i].v, want[i]) {
			t.Errorf("token %d (%#x):\n got %#v\nwant %#v", i, toks[i].tok, toks[i].v, want[i])
		}
	}
}

// wireAppender is what every token type implements.
type wireAppender interface{ Append([]byte) []byte }

// wireCheckReencode re-encodes decoded tokens and checks the bytes are the
// original ones (tokens whose decode normalises, like LOGINACK's trailing
// NULs, are compared by decoding again).
func wireCheckReencode(t *testing.T, toks []wireTok) {
	t.Helper()
	for i, tk := range toks {
		got := reflect.ValueOf(tk.v).Elem().Interface().(wireAppender).Append(nil)
		if bytes.Equal(got, tk.raw) {
			continue
		}
		v2, n, err := wireDecodeToken(got, false)
		if err != nil || n != len(got) || !reflect.DeepEqual(v2, tk.v) {
			t.Errorf("token %d (%#x) re-encoded to % x (decodes to %#v, %v)", i, tk.tok, got, v2, err)
		}
	}
}

// wireRoundTrip appends v, decodes it back and compares.
func wireRoundTrip(t *testing.T, v wireAppender, rank bool) []byte {
	t.Helper()
	b := v.Append(nil)
	got, n, err := wireDecodeToken(b, rank)
	if err != nil {
		t.Fatalf("%T: decode: %v (% x)", v, err, b)
	}
	if n != len(b) {
		t.Fatalf("%T: consumed %d of %d", v, n, len(b))
	}
	if !reflect.DeepEqual(reflect.ValueOf(got).Elem().Interface(), v) {
		t.Fatalf("%T round trip:\n got %#v\nwant %#v", v, reflect.ValueOf(got).Elem().Interface(), v)
	}
	wireCheckTruncation(t, []wireTok{{b[0], got, b}}, rank)
	return b
}

func TestWireTokenRoundTrips(t *testing.T) {
	ti := TypeInfo{Type: TypeNVarChar, Size: 100, Collation: Collation{Info: 0x00D00409, SortID: 0x34}}
	cases := []wireAppender{
		Done{Token: TokenDone, Status: DoneMore | DoneCount, CurCmd: 0xC1, RowCount: 1<<64 - 1},
		Done{Token: TokenDoneProc, Status: 0x0081},
		Done{Token: TokenDoneInProc, Status: 0xFFFF, CurCmd: 0xFFFF},
		Message{Token: TokenError, Number: 208, State: 1, Class: 16, Text: "Invalid object name 'nope'.", Server: "srv", Proc: "p", Line: 3},
		Message{Token: TokenInfo, Number: -1, Text: "𝄞 ünïcode", Line: -7},
		Message{Token: TokenInfo},
		LoginAck{Interface: 1, TDSVersion: TDSVersion74, ProgName: "tdsextract", ProgVersion: [4]byte{16, 0, 0x10, 0x00}},
		EnvChange{Type: EnvDatabase, NewValue: "db", OldValue: "master"},
		EnvChange{Type: EnvLanguage, NewValue: "us_english"},
		EnvChange{Type: EnvCharset, NewValue: "iso_1"},
		EnvChange{Type: EnvPacketSize, NewValue: "8000", OldValue: "4096"},
		EnvChange{Type: EnvUnicodeLCID, NewValue: "1033"},
		EnvChange{Type: EnvCompareFlags, NewValue: "196609"},
		EnvChange{Type: EnvCollation, NewBytes: []byte{9, 4, 0xD0, 0, 0x34}, OldBytes: []byte{9, 4, 0xD0, 0, 0x34}, Collation: Collation{Info: 0x00D00409, SortID: 0x34}},
		EnvChange{Type: EnvBeginTxn, NewBytes: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		EnvChange{Type: EnvCommitTxn, OldBytes: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		EnvChange{Type: EnvRollbackTxn, OldBytes: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		EnvChange{Type: EnvEnlistDTC, NewBytes: []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		EnvChange{Type: EnvDefectTxn, OldBytes: []byte{8, 7, 6, 5, 4, 3, 2, 1}},
		EnvChange{Type: EnvMirrorPartner, NewValue: "partner\\inst"},
		EnvChange{Type: EnvPromoteTxn, NewBytes: bytes.Repeat([]byte{0xAB}, 300)},
		EnvChange{Type: EnvTxnManagerAddr, NewBytes: []byte{1, 2}},
		EnvChange{Type: EnvTxnEnded, NewBytes: []byte{1, 2, 3, 4, 5, 6, 7, 8}},
		EnvChange{Type: EnvResetConnAck},
		EnvChange{Type: EnvUserInstance, NewValue: "\\\\.\\pipe\\x"},
		EnvChange{Type: EnvRouting, Routing: Routing{Port: 1433, Server: "replica.example.net"}},
		EnvChange{Type: EnvEnhancedRouting, Routing: Routing{Port: 11000, Server: "r2", Database: "sales"}},
		EnvChange{Type: 99, NewBytes: []byte{1, 2, 3}},
		FeatureExtAck{Features: []Feature{{ID: FeatureUTF8Support, Data: []byte{1}}, {ID: FeatureFedAuth}, {ID: FeatureJSONSupport, Data: []byte{1}}}},
		FeatureExtAck{},
		ReturnStatus{Value: -42},
		ReturnValue{Ordinal: 1, Name: "@out", Status: 1, Flags: ColFlagNullable, Type: ti, Value: []byte{4, 0, 'h', 0, 'i', 0}},
		ReturnValue{Ordinal: 0, Status: 2, Type: TypeInfo{Type: TypeIntN, Size: 4}, Value: []byte{0}},
		ReturnValue{Ordinal: 2, Name: "@x", Status: 1, Type: TypeInfo{Type: TypeXML}, Value: wireHexBytes(t, "FE FF FF FF FF FF FF FF 02 00 00 00 3C 00 00 00 00 00")},
		Order{Columns: []uint16{1, 3, 2}},
		TabName{Tables: [][]string{{"dbo", "t"}, {"srv", "db", "s", "u"}}},
		ColInfo{Columns: []ColProperty{{ColNum: 1, TableNum: 1, Status: ColInfoKey}, {ColNum: 2, TableNum: 1, Status: ColInfoDifferentName, Name: "base"}, {ColNum: 3, Status: ColInfoExpression}}},
		SessionState{SeqNo: 7, Status: 1, States: []SessionStateData{{ID: 0, Value: []byte{1}}, {ID: 2, Value: bytes.Repeat([]byte{9}, 300)}, {ID: 3}}},
		FedAuthInfo{Options: []FedAuthInfoOpt{{ID: FedAuthInfoSTSURL, Data: AppendUTF16LE(nil, "https://login.example/")}, {ID: FedAuthInfoSPN, Data: AppendUTF16LE(nil, "https://db.example/")}}},
		FedAuthInfo{},
		SSPI{Data: []byte{0x4E, 0x54, 0x4C, 0x4D}},
	}
	for _, c := range cases {
		wireRoundTrip(t, c, false)
	}
	dc := DataClassification{
		Labels:    []SensitivityLabel{{Name: "Confidential", ID: "l1"}},
		InfoTypes: []InformationType{{Name: "Financial", ID: "i1"}, {Name: "Contact", ID: "i2"}},
		Columns:   [][]SensitivityProperty{{{LabelIndex: 0, InfoTypeIndex: 1}}, {}, {{LabelIndex: 0xFFFF, InfoTypeIndex: 0}}},
	}
	wireRoundTrip(t, dc, false)
	dc.WithRank, dc.Rank = true, 30
	dc.Columns[0][0].Rank = 20
	wireRoundTrip(t, dc, true)
}

func TestWireTokenFixtures(t *testing.T) {
	cases := []struct {
		name string
		hex  string
		want any
	}{
		{"DONE 2.2.7.6", `
			FD                       // DONE
			11 00                    // Status DONE_MORE|DONE_COUNT
			C1 00                    // CurCmd 0xC1 (SELECT)
			2A 00 00 00 00 00 00 00  // DoneRowCount 42 (ULONGLONG since 7.2)`,
			&Done{Token: TokenDone, Status: 0x11, CurCmd: 0xC1, RowCount: 42}},
		{"DONEPROC with undocumented 0x80 2.2.7.8", "FE 81 00 E0 00 00 00 00 00 00 00 00 00",
			&Done{Token: TokenDoneProc, Status: 0x81, CurCmd: 0xE0}},
		{"ERROR 2.2.7.10", `
			AA                       // ERROR
			1A 00                    // Length 26
			D0 00 00 00              // Number 208
			01                       // State
			10                       // Class 16
			03 00 62 00 61 00 64 00  // MsgText US_VARCHAR "bad"
			01 73 00                 // ServerName B_VARCHAR "s"
			02 70 00 31 00           // ProcName B_VARCHAR "p1"
			05 00 00 00              // LineNumber 5`,
			&Message{Token: TokenError, Number: 208, State: 1, Class: 16, Text: "bad", Server: "s", Proc: "p1", Line: 5}},
		{"LOGINACK 2.2.7.14", `
			AD                       // LOGINACK
			10 00                    // Length 16
			01                       // Interface SQL_TSQL
			74 00 00 04              // TDSVersion 7.4
			03 53 00 51 00 4C 00     // ProgName "SQL"
			10 00 07 D0              // ProgVersion 16.0.2000`,
			&LoginAck{Interface: 1, TDSVersion: TDSVersion74, ProgName: "SQL", ProgVersion: [4]byte{16, 0, 7, 0xD0}}},
		{"ENVCHANGE routing 2.2.7.9 type 20", `
			E3                       // ENVCHANGE
			0E 00                    // Length 14
			14                       // Type 20 routing
			09 00                    // RoutingDataValueLength 9
			00                       // Protocol TCP
			99 05                    // ProtocolProperty: port 1433
			02 00 68 00 32 00        // AlternateServer US_VARCHAR "h2"
			00 00                    // OldValue`,
			&EnvChange{Type: EnvRouting, Routing: Routing{Port: 1433, Server: "h2"}}},
		{"ENVCHANGE begin transaction type 8", `
			E3 0B 00                 // ENVCHANGE, Length 11
			08                       // Type 8 begin transaction
			08 01 00 00 00 00 00 00 00 // NewValue B_VARBYTE: descriptor 1
			00                       // OldValue empty`,
			&EnvChange{Type: EnvBeginTxn, NewBytes: []byte{1, 0, 0, 0, 0, 0, 0, 0}}},
		{"ENVCHANGE promote type 15 (payload outside Length)", `
			E3 01 00                 // ENVCHANGE, Length 1 (only the type, per 2.2.7.9 notes)
			0F                       // Type 15 promote transaction
			03 00 00 00 AA BB CC     // NewValue L_VARBYTE
			00                       // OldValue`,
			&EnvChange{Type: EnvPromoteTxn, NewBytes: []byte{0xAA, 0xBB, 0xCC}}},
		{"ENVCHANGE unknown type skipped by Length", "E3 04 00 63 01 02 03",
			&EnvChange{Type: 0x63, NewBytes: []byte{1, 2, 3}}},
		{"FEATUREEXTACK 2.2.7.11", `
			AE                       // FEATUREEXTACK
			0A 01 00 00 00 01        // UTF8_SUPPORT, DataLen 1, supported
			0D 01 00 00 00 01        // JSONSUPPORT version 1
			0E 01 00 00 00 01        // VECTORSUPPORT version 1
			FF                       // TERMINATOR`,
			&FeatureExtAck{Features: []Feature{{ID: 0x0A, Data: []byte{1}}, {ID: 0x0D, Data: []byte{1}}, {ID: 0x0E, Data: []byte{1}}}}},
		{"RETURNSTATUS 2.2.7.18", "79 FF FF FF FF", &ReturnStatus{Value: -1}},
		{"RETURNVALUE named output parameter 2.2.7.19", `
			AC                       // RETURNVALUE
			01 00                    // ParamOrdinal 1
			04 40 00 6F 00 75 00 74 00 // ParamName "@out"
			01                       // Status: output parameter
			00 00 00 00              // UserType
			01 00                    // Flags fNullable
			26 04                    // TYPE_INFO INTN(4)
			04 2A 00 00 00           // value 42`,
			&ReturnValue{Ordinal: 1, Name: "@out", Status: 1, Flags: 1, Type: TypeInfo{Type: TypeIntN, Size: 4}, Value: []byte{4, 42, 0, 0, 0}}},
		{"ORDER 2.2.7.17", "A9 04 00 01 00 02 00", &Order{Columns: []uint16{1, 2}}},
		{"TABNAME 2.2.7.23", `
			A4 0D 00                 // TABNAME, Length 13
			02                       // NumParts 2
			03 00 64 00 62 00 6F 00  // "dbo"
			01 00 74 00              // "t"`,
			&TabName{Tables: [][]string{{"dbo", "t"}}}},
		{"COLINFO 2.2.7.3", `
			A5 09 00                 // COLINFO, Length 9
			01 01 08                 // column 1, table 1, KEY
			02 01 20 01 78 00        // column 2, table 1, DIFFERENT_NAME, "x"`,
			&ColInfo{Columns: []ColProperty{{ColNum: 1, TableNum: 1, Status: 8}, {ColNum: 2, TableNum: 1, Status: 0x20, Name: "x"}}}},
		{"SESSIONSTATE long StateLen 2.2.7.21", `
			E4 0E 00 00 00           // SESSIONSTATE, Length 14
			05 00 00 00              // SeqNo 5
			00                       // Status: not recoverable
			01 FF 03 00 00 00 AA BB CC // StateId 1, StateLen 0xFF + DWORD 3`,
			&SessionState{SeqNo: 5, States: []SessionStateData{{ID: 1, Value: []byte{0xAA, 0xBB, 0xCC}}}}},
		{"DATACLASSIFICATION 2.2.7.5 (version 1, no ranks)", `
			A3                       // DATACLASSIFICATION (no length prefix)
			01 00                    // SensitivityLabelCount 1
			01 50 00 01 4C 00        // "P", id "L"
			01 00                    // InformationTypeCount 1
			01 46 00 01 49 00        // "F", id "I"
			02 00                    // NumResultSetColumns 2
			01 00 00 00 00 00        // column 0: 1 property (label 0, info type 0)
			00 00                    // column 1: none`,
			&DataClassification{Labels: []SensitivityLabel{{"P", "L"}}, InfoTypes: []InformationType{{"F", "I"}}, Columns: [][]SensitivityProperty{{{}}, {}}}},
		{"FEDAUTHINFO 2.2.7.12", `
			EE 13 00 00 00           // FEDAUTHINFO, TokenLength 19
			02 00 00 00              // CountOfInfoIDs 2
			01 02 00 00 00 16 00 00 00 // STSURL, 2 bytes at 22
			02 00 00 00 00 00 00 00 00 // SPN, empty
			41 00                    // "A"`,
			// offset 22 > 19: rejected below; this row checks the corrected one.
			nil},
		{"FEDAUTHINFO corrected", `
			EE 18 00 00 00           // FEDAUTHINFO, TokenLength 24
			02 00 00 00              // CountOfInfoIDs 2
			01 02 00 00 00 16 00 00 00 // STSURL: 2 bytes at offset 22 (from CountOfInfoIDs)
			02 00 00 00 00 00 00 00 00 // SPN: empty
			41 00                    // "A"`,
			&FedAuthInfo{Options: []FedAuthInfoOpt{{ID: 1, Data: []byte{0x41, 0}}, {ID: 2, Data: []byte{}}}}},
		{"SSPI 2.2.7.22", "ED 03 00 01 02 03", &SSPI{Data: []byte{1, 2, 3}}},
	}
	for _, c := range cases {
		b := wireHexBytes(t, c.hex)
		got, n, err := wireDecodeToken(b, false)
		if c.want == nil {
			if err == nil {
				t.Errorf("%s: accepted", c.name)
			}
			continue
		}
		if err != nil || n != len(b) {
			t.Errorf("%s: n=%d/%d err=%v", c.name, n, len(b), err)
			continue
		}
		if fi, ok := got.(*FedAuthInfo); ok && len(fi.Options) == 2 && fi.Options[1].Data == nil {
			fi.Options[1].Data = []byte{}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", c.name, got, c.want)
		}
	}
}

func TestWireTokenReject(t *testing.T) {
	cases := []struct {
		name, hex, msg string
	}{
		{"ERROR fields past Length", "AA 04 00 01 00 00 00 00 00", "past the end"},
		{"ERROR ServerName past Length", "AA 0A 00 01 00 00 00 01 10 01 00 41 00", "past the end"},
		{"LOGINACK short body", "AD 02 00 01 74", "past the end"},
		{"ENVCHANGE empty", "E3 00 00", "no Type"},
		{"ENVCHANGE string past Length", "E3 03 00 01 05 41", "past the end"},
		{"ENVCHANGE collation of 4 bytes", "E3 07 00 07 04 09 04 D0 00 00", "want 5"},
		{"ENVCHANGE routing protocol 1", "E3 0A 00 14 05 00 01 99 05 00 00 00 00", "not TCP"},
		{"ENVCHANGE routing port 0", "E3 0A 00 14 05 00 00 00 00 00 00 00 00", "port 0"},
		{"ENVCHANGE routing length mismatch", "E3 0A 00 14 06 00 00 99 05 00 00 00 00", "RoutingDataValueLength"},
		{"ENVCHANGE promote old value", "E3 01 00 0F 01 00 00 00 AA 01", "old value"},
		{"FEATUREEXTACK implausible length", "AE 01 FF FF FF FF", "implausible"},
		{"ORDER odd length", "A9 03 00 01 00 02", "odd Length"},
		{"TABNAME part past Length", "A4 03 00 01 05 00", "past the end"},
		{"COLINFO name past Length", "A5 04 00 01 01 20 05", "past the end"},
		{"SESSIONSTATE StateLen past Length", "E4 07 00 00 00 01 00 00 00 01 09 05", "past the end"},
		{"SESSIONSTATE long StateLen past Length", "E4 0A 00 00 00 01 00 00 00 01 09 FF 09 00 00 00", "past"},
		{"DATACLASSIFICATION label index out of range", "A3 00 00 00 00 01 00 01 00 00 00 FF FF", "out of range"},
		{"DATACLASSIFICATION info type index out of range", "A3 00 00 00 00 01 00 01 00 FF FF 00 00", "out of range"},
		{"FEDAUTHINFO count too big", "EE 04 00 00 00 05 00 00 00", "does not fit"},
		{"FEDAUTHINFO data inside option table", "EE 0D 00 00 00 01 00 00 00 01 01 00 00 00 00 00 00 00", "outside"},
		{"FEDAUTHINFO TokenLength below 4", "EE 02 00 00 00 00 00", "below 4"},
		{"RETURNVALUE impossible INTN length", "AC 00 00 00 00 00 00 00 00 00 00 26 04 03 01 02 03", "impossible value length"},
		{"RETURNVALUE unknown type", "AC 00 00 00 00 00 00 00 00 00 00 F3 00", "table-valued"},
		{"RETURNVALUE encrypted", "AC 00 00 00 00 00 00 00 00 00 08 26 04 00", "encrypted"},
		{"unknown token", "77 00", "unknown token"},
	}
	for _, c := range cases {
		_, _, err := wireDecodeToken(wireHexBytes(t, c.hex), false)
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: %v, want a *ProtocolError mentioning %q", c.name, err, c.msg)
			continue
		}
		if pe.Token == 0 && c.name != "unknown token" && !strings.HasPrefix(c.name, "RETURNVALUE") {
			t.Errorf("%s: error does not name the token: %v", c.name, err)
		}
	}
}

// TestWireDoneNoAlloc: DONE is decoded per statement on the hot path.
func TestWireDoneNoAlloc(t *testing.T) {
	b := Done{Token: TokenDone, Status: DoneCount, RowCount: 5}.Append(nil)[1:]
	var d Done
	if n := testing.AllocsPerRun(100, func() { _, _ = d.Decode(b) }); n != 0 {
		t.Fatalf("Done.Decode allocates %v", n)
	}
	var rs ReturnStatus
	if n := testing.AllocsPerRun(100, func() { _, _ = rs.Decode([]byte{1, 2, 3, 4}) }); n != 0 {
		t.Fatalf("ReturnStatus.Decode allocates %v", n)
	}
}

func TestWireMessageAppendClampsText(t *testing.T) {
	m := Message{Class: 16, Text: strings.Repeat("x", 40000), Server: "s"}
	b := m.Append(nil)
	if b[0] != TokenError {
		t.Fatalf("token %#x", b[0])
	}
	var got Message
	n, err := got.Decode(b[1:])
	if err != nil || n != len(b)-1 || len(got.Text) >= 40000 || got.Server != "s" {
		t.Fatalf("n=%d err=%v text=%d", n, err, len(got.Text))
	}
}

func FuzzTokens(f *testing.F) {
	for _, name := range []string{"4.4-login-response", "4.9-rpc-response", "4.18-sessionstate", "4.21-featureextack-azuresqlsupport"} {
		_, payload := wireOnePacket(f, wireSpec(f, name))
		toks, _, _ := wireWalk(payload)
		for _, tk := range toks {
			f.Add(tk.raw, false)
		}
	}
	f.Add(wireHexBytes(f, "A3 01 00 01 50 00 01 4C 00 01 00 01 46 00 01 49 00 02 00 01 00 00 00 00 00 00 00"), false)
	f.Add(wireHexBytes(f, "A3 00 00 00 00 1E 00 00 00 01 00 01 00 00 00 FF FF 14 00 00 00"), true)
	f.Add(wireHexBytes(f, "EE 18 00 00 00 02 00 00 00 01 02 00 00 00 16 00 00 00 02 00 00 00 00 00 00 00 00 41 00"), false)
	f.Add(wireHexBytes(f, "AC 01 00 04 40 00 6F 00 75 00 74 00 01 00 00 00 00 01 00 26 04 04 2A 00 00 00"), false)
	f.Add(wireHexBytes(f, "E3 01 00 0F 03 00 00 00 AA BB CC 00"), false)
	f.Fuzz(func(t *testing.T, data []byte, rank bool) {
		if len(data) == 0 {
			return
		}
		wireAllocCheck(t, len(data), func() {
			v, n, err := wireDecodeToken(data, rank)
			if err != nil {
				var pe *ProtocolError
				if err != ErrNeedMore && err != errWireRowToken && !errors.As(err, &pe) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if n > len(data) || n < 1 {
				t.Fatalf("consumed %d of %d", n, len(data))
			}
			// Decoding a longer buffer consumes the same bytes.
			v2, n2, err := wireDecodeToken(append(append([]byte(nil), data[:n]...), 0xFD, 0, 0), rank)
			if err != nil || n2 != n || !reflect.DeepEqual(v, v2) {
				t.Fatalf("not prefix-stable: %d vs %d, %v", n, n2, err)
			}
			// Re-encoding gives bytes that decode to the same token.
			re := reflect.ValueOf(v).Elem().Interface().(wireAppender).Append(nil)
			v3, n3, err := wireDecodeToken(re, rank)
			if err != nil || n3 != len(re) {
				t.Fatalf("re-encoded token does not decode: %v (% x)", err, re)
			}
			if !reflect.DeepEqual(wireNormalize(v), wireNormalize(v3)) {
				t.Fatalf("round trip differs:\n%#v\n%#v", v, v3)
			}
		})
	})
}

// wireNormalize maps decoded tokens to comparable values: strings the
// encoder truncates or that the decoder trims are dropped.
func wireNormalize(v any) any {
	switch x := v.(type) {
	case *LoginAck:
		c := *x
		c.ProgName = strings.TrimRight(c.ProgName, "\x00")
		return c
	case *EnvChange:
		c := *x
		if c.Type == EnvCollation {
			c.NewBytes = nil
			c.Collation = Collation{}
		}
		if len(c.NewBytes) == 0 {
			c.NewBytes = nil
		}
		if len(c.OldBytes) == 0 {
			c.OldBytes = nil
		}
		return c
	case *Message:
		c := *x
		c.Text = ""
		return c
	case *SSPI:
		return len(x.Data)
	}
	return reflect.ValueOf(v).Elem().Interface()
}

func BenchmarkWireDoneDecode(b *testing.B) {
	src := Done{Token: TokenDone, Status: DoneCount, CurCmd: 0xC1, RowCount: 12345}.Append(nil)[1:]
	var d Done
	b.ReportAllocs()
	b.SetBytes(int64(len(src) + 1))
	for i := 0; i < b.N; i++ {
		if _, err := d.Decode(src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWireEnvChangeDecode(b *testing.B) {
	src := EnvChange{Type: EnvDatabase, NewValue: "tdsextract", OldValue: "master"}.Append(nil)[1:]
	var e EnvChange
	b.ReportAllocs()
	b.SetBytes(int64(len(src) + 1))
	for i := 0; i < b.N; i++ {
		if _, err := e.Decode(src); err != nil {
			b.Fatal(err)
		}
	}
}
