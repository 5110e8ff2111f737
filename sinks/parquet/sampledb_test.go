package parquet

import (
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
)

// streamTable sends rows [0, rows) of tb through the real decoder into sink.
func streamTable(t testing.TB, tb *sampledb.Table, sink decode.CellSink, rows int64, nbc bool) {
	t.Helper()
	sinktest.StreamTable(t, tb, sink, rows, nbc)
}

func variantText(ti *decode.TypeInfo, v any) string {
	if t, ok := sinktest.ScalarText(ti, v); ok {
		return t
	}
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return hex.EncodeToString(x)
	}
	return fmt.Sprintf("?%T", v)
}
