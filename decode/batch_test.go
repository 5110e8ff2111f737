package decode

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestWireSQLBatchSpec decodes MS-TDS 4.6 and re-encodes it byte for byte.
func TestWireSQLBatchSpec(t *testing.T) {
	payload := wireMessage(t, "4.6-sqlbatch-request", PacketSQLBatch)
	want := SQLBatch{TxnDescriptor: 0x0100000000000000, OutstandingRequests: 0, SQL: "\nselect 'foo' as 'bar'\n        "}
	wireExact(t, payload, want, infallible((*SQLBatch).Encode))
}

func TestWireSQLBatchFixture(t *testing.T) {
	// 2.2.5.3 ALL_HEADERS with a trace activity header after the transaction descriptor.
	b := wireHexBytes(t, `
		30 00 00 00              // TotalLength 48
		12 00 00 00 02 00        // HeaderLength 18, transaction descriptor
		05 00 00 00 00 00 00 00  // TransactionDescriptor 5
		01 00 00 00              // OutstandingRequestCount 1
		1A 00 00 00 03 00        // HeaderLength 26, trace activity
		00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 01 00 00 00 // ActivityId + sequence
		53 00 45 00 4C 00 45 00 43 00 54 00 20 00 31 00 // "SELECT 1"`)
	want := SQLBatch{TxnDescriptor: 5, OutstandingRequests: 1, SQL: "SELECT 1",
		OtherHeaders: []StreamHeader{{Type: HeaderTraceActivity, Data: wireHexBytes(t, "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F 01 00 00 00")}}}
	wireExact(t, b, want, infallible((*SQLBatch).Encode))
}

func TestWireSQLBatchRoundTrip(t *testing.T) {
	for _, sql := range []string{"", "SELECT 1", "SELECT N'𝄞 €'", strings.Repeat("SELECT 1;", 5000)} {
		b := SQLBatch{OutstandingRequests: 1, SQL: sql, OtherHeaders: []StreamHeader{{Type: 0x77, Data: []byte{1}}}}
		enc := b.Encode(nil)
		var got SQLBatch
		if err := got.Decode(enc); err != nil || !reflect.DeepEqual(got, b) {
			t.Fatalf("%q: %v %+v", sql[:min(len(sql), 20)], err, got)
		}
		wireResplit(t, PacketSQLBatch, enc)
	}
}

func TestWireSQLBatchReject(t *testing.T) {
	cases := []struct{ name, hex, msg string }{
		{"no ALL_HEADERS (7.1 style)", "53 00 45 00 4C 00 45 00 43 00 54 00", "TotalLength"},
		{"short", "16 00", "too short"},
		{"TotalLength beyond payload", "40 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00", "TotalLength"},
		{"HeaderLength beyond TotalLength", "16 00 00 00 13 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00 00", "HeaderLength"},
		{"HeaderLength 5", "16 00 00 00 05 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00", "HeaderLength"},
		{"descriptor of 11 bytes", "15 00 00 00 11 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00", "want 12"},
		{"no transaction descriptor", "0C 00 00 00 08 00 00 00 03 00 AA BB", "missing"},
		{"duplicate header", "28 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00", "twice"},
		{"odd SQL text", "16 00 00 00 12 00 00 00 02 00 00 00 00 00 00 00 00 00 01 00 00 00 41", "odd"},
	}
	for _, c := range cases {
		var b SQLBatch
		err := b.Decode(wireHexBytes(t, c.hex))
		var pe *ProtocolError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Where, "SQLBatch") || !strings.Contains(pe.Error(), c.msg) {
			t.Errorf("%s: %v, want SQLBatch error with %q", c.name, err, c.msg)
		}
	}
}
