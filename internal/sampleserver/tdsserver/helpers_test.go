package tdsserver_test

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"math/big"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sampleserver/tdsserver"
)

const (
	testUser     = "sa"
	testPassword = "Sample-Passw0rd"
)

// testRows keeps the tables small enough for a quick suite while every
// table still spans many packets.
var testRows = map[string]int64{
	"dbo.poc48":         3000,
	"dbo.odbc5":         5000,
	"dbo.wide601":       40,
	"dbo.lob":           30,
	"dbo.lob_nvarchar":  10,
	"dbo.temporal":      3000,
	"dbo.lineitem":      3000,
	"sales.customers":   200,
	"sales.products":    50,
	"sales.orders":      500,
	"sales.order_lines": 2000,
}

func newDB() *sampledb.DB {
	return sampledb.New(sampledb.Config{Seed: 42, Rows: testRows})
}

// startServer starts a server on loopback; it is closed when the test ends.
func startServer(t testing.TB, cfg tdsserver.Config) *tdsserver.Server {
	t.Helper()
	if cfg.DB == nil {
		cfg.DB = newDB()
	}
	if cfg.Logger == nil {
		level := slog.LevelWarn
		if os.Getenv("TDSSERVER_DEBUG") != "" {
			level = slog.LevelDebug
		}
		cfg.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: level}))
	}
	s, err := tdsserver.Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testLogWriter sends the server's log to the test log.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// needBinary skips (or, with CI set, fails) when name is not installed.
func needBinary(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed (CI is set, so this fails instead of skipping)", name)
			}
			t.Skipf("skipping: %s not installed (apt-get install freetds-bin tdsodbc unixodbc pgloader)", name)
		}
	}
}

// ---- canonical text of a value, for comparing what a client read with
// what the sample database generated. Both sides are reduced to the same
// string; the conversions are the client's documented ones (go-mssqldb:
// real as float64(float32), decimal and money as text, GUID in wire order,
// date/time as time.Time, datetime rounded to milliseconds). ----

var day0 = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

func civil(days int32, ticks int64) time.Time {
	return day0.AddDate(0, 0, int(days)).Add(time.Duration(ticks) * 100)
}

const tsLayout = "2006-01-02 15:04:05.000000000"

// canonExpected renders a generic value of sampledb (decode's value types).
func canonExpected(v any, ti *decode.TypeInfo) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "1"
		}
		return "0"
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		// go-mssqldb widens real to float64; compare the widened values.
		return strconv.FormatFloat(float64(x), 'g', -1, 64)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case decode.Decimal:
		m := new(big.Int).SetUint64(x.Hi)
		m.Lsh(m, 64)
		m.Or(m, new(big.Int).SetUint64(x.Lo))
		if x.Neg {
			m.Neg(m)
		}
		r := new(big.Rat).SetFrac(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		return "D" + r.RatString()
	case decode.Money:
		return "D" + new(big.Rat).SetFrac64(int64(x), 10000).RatString()
	case decode.Date:
		return civil(int32(x), 0).Format("2006-01-02")
	case decode.Time:
		return civil(0, int64(x)).Format("15:04:05.000000000")
	case decode.DateTime:
		if isLegacyDateTime(ti) {
			// go-mssqldb's conversion of 1/300 s ticks to milliseconds.
			k := (x.Ticks*3 + 50000) / 100000
			ms := int64(math.Trunc(float64(k%300)/0.3 + 0.5))
			return civil(x.Days, 0).Add(time.Duration(k/300)*time.Second + time.Duration(ms)*time.Millisecond).Format(tsLayout)
		}
		return civil(x.Days, x.Ticks).Format(tsLayout)
	case decode.DateTimeOffset:
		return civil(x.UTC.Days, x.UTC.Ticks).Format(tsLayout) + fmt.Sprintf(" %+d", x.OffsetMin)
	case decode.GUID:
		// RFC order to the wire's mixed-endian order, as go-mssqldb returns it.
		var w [16]byte
		binary.LittleEndian.PutUint32(w[0:], binary.BigEndian.Uint32(x[0:]))
		binary.LittleEndian.PutUint16(w[4:], binary.BigEndian.Uint16(x[4:]))
		binary.LittleEndian.PutUint16(w[6:], binary.BigEndian.Uint16(x[6:]))
		copy(w[8:], x[8:])
		return fmt.Sprintf("G%x", w)
	case string:
		return "S" + x
	case []byte:
		return fmt.Sprintf("B%x", x)
	case []float32:
		return fmt.Sprint(x)
	case decode.Variant:
		return canonExpected(x.Value, &x.Type)
	}
	return fmt.Sprintf("?%T:%v", v, v)
}

func isLegacyDateTime(ti *decode.TypeInfo) bool {
	return ti != nil && (ti.Type == decode.TypeDateTime || ti.Type == decode.TypeDateTimeN && ti.Size == 8)
}

// canonMSSQL renders what go-mssqldb returned for a cell. exp (the value
// the server generated) only tells which rendering applies where go-mssqldb
// uses one Go type for several SQL types (time.Time, []byte).
func canonMSSQL(v any, exp any) string {
	if x, ok := exp.(decode.Variant); ok {
		exp = x.Value
	}
	switch x := v.(type) {
	case time.Time:
		switch exp.(type) {
		case decode.Date:
			return x.Format("2006-01-02")
		case decode.Time:
			return x.Format("15:04:05.000000000")
		case decode.DateTimeOffset:
			_, off := x.Zone()
			return x.UTC().Format(tsLayout) + fmt.Sprintf(" %+d", off/60)
		}
		return x.Format(tsLayout)
	case []byte:
		switch exp.(type) {
		case decode.Decimal, decode.Money:
			r, ok := new(big.Rat).SetString(string(x))
			if !ok {
				return "bad decimal " + string(x)
			}
			return "D" + r.RatString()
		case decode.GUID:
			return fmt.Sprintf("G%x", x)
		}
		return fmt.Sprintf("B%x", x)
	}
	// NULL, bit, integers, float and strings come back as the generator's
	// own Go types and render alike.
	return canonExpected(v, nil)
}

// checksum hashes canonical cell strings.
type checksum struct {
	h     interface{ Write([]byte) (int, error) }
	cells int64
	sum   func() uint64
}

func newChecksum() *checksum {
	h := fnv.New64a()
	return &checksum{h: h, sum: h.Sum64}
}

func (c *checksum) add(s string) {
	c.h.Write([]byte(s))
	c.h.Write([]byte{0})
	c.cells++
}

func (c *checksum) String() string { return fmt.Sprintf("%016x/%d", c.sum(), c.cells) }

// quoteName returns [schema].[name].
func quoteName(t *sampledb.Table) string {
	return "[" + t.Schema + "].[" + t.Name + "]"
}

func joinNames(cols []decode.Column) string {
	var b strings.Builder
	for i := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[" + cols[i].Name + "]")
	}
	return b.String()
}
