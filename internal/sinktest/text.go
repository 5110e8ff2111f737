package sinktest

import (
	"strconv"

	"github.com/tdsextract/tdsextract/decode"
)

// ScalarText is decode's text form of a non-NULL scalar value v of type ti
// as the sample database holds it (bool, integers, floats, decimal, money,
// dates and times, GUID), with date/time scales as SQL Server shows them.
// ok is false for any other value (NULL, text, bytes, vectors,
// sql_variant). Expectations built with it share the formatting code of
// the sinks that call decode's Append*Text: check a sink's own output
// against golden files or an independent reader instead.
func ScalarText(ti *decode.TypeInfo, v any) (s string, ok bool) {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float32:
		return string(decode.AppendFloat32Text(nil, x)), true
	case float64:
		return string(decode.AppendFloat64Text(nil, x)), true
	case decode.Decimal:
		return x.String(), true
	case decode.Money:
		return string(decode.AppendMoneyText(nil, int64(x))), true
	case decode.Date:
		return string(decode.AppendDateText(nil, int32(x))), true
	case decode.Time:
		return string(decode.AppendTimeText(nil, int64(x), ti.Scale)), true
	case decode.DateTime:
		return string(decode.AppendDateTimeText(nil, x, ti.DateTimeScale())), true
	case decode.DateTimeOffset:
		return string(decode.AppendDateTimeOffsetText(nil, x, ti.Scale)), true
	case decode.GUID:
		return x.String(), true
	}
	return "", false
}
