package postgres

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/pgcheck"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// TestSampleTablesReadBack streams every sample table (type_matrix with
// every SQL Server type and its edge rows, the benchmark shapes, sales, the
// code-page tables) through the real decoder into the sink, into
// PostgreSQL 15, and reads every value back with pgx's own decoders,
// comparing it with the sample database's value: exact numerics, dates
// and times truncated to microseconds (datetime as SQL Server shows it),
// UUIDs in RFC order, vectors element by element, sql_variant as its text
// with the base type beside it, datetimeoffset's offset beside the instant.
func TestSampleTablesReadBack(t *testing.T) {
	conn, url := pgConn(t)
	exec(t, conn, "CREATE SCHEMA readback")
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"dbo.poc48": 700, "dbo.odbc5": 700, "dbo.wide601": 40,
		"dbo.lob": 30, "dbo.lob_nvarchar": 6, "dbo.temporal": 1000, "dbo.lineitem": 700, "sales.customers": 100,
		"sales.products": 50, "sales.orders": 200, "sales.order_lines": 400}})
	ctx := context.Background()
	for _, tb := range db.Tables() {
		if tb.Catalog {
			continue
		}
		t.Run(tb.FullName(), func(t *testing.T) {
			for _, nbc := range []bool{false, true} {
				s := newSink(t, url, map[string]any{"schema": "readback", "table": "{schema}_{table}", "mode": "replace"})
				if err := s.Open(ctx, sinks.ExtractInfo{Name: tb.Name, Schema: tb.Schema, Table: tb.Name}); err != nil {
					t.Fatal(err)
				}
				sinktest.StreamTable(t, tb, s, tb.Rows, nbc)
				st, err := s.Publish(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if st.Rows != tb.Rows {
					t.Fatalf("published %d rows, want %d", st.Rows, tb.Rows)
				}
				pgcheck.Compare(t, ctx, conn, s.Target().QualifiedName(), "", checkColumns(s), tb.Columns, tb.Rows, tb.Row)
			}
		})
	}
}

// The mapping the sink creates tables with, as documented.
func TestDefaultTypes(t *testing.T) {
	db := sampledb.New(sampledb.Config{Seed: 1})
	tb, _ := db.Table("dbo", "type_matrix")
	mapped, err := MapColumns(tb.Columns, MapOptions{Identifiers: IdentLower, OffsetColumn: true, VariantTypeColumn: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range mapped {
		got[m.Name] = m.Type.SQL
	}
	for name, want := range map[string]string{
		"c_tinyint": "smallint", "c_int": "integer", "c_bigint": "bigint", "c_bit": "boolean", "c_real": "real",
		"c_float": "double precision", "c_money": "numeric(19,4)", "c_smallmoney": "numeric(10,4)",
		"c_datetime": "timestamp(3)", "c_smalldatetime": "timestamp(0)", "c_decimal_38_38": "numeric(38,38)",
		"c_uniqueidentifier": "uuid", "c_date": "date", "c_time_7": "time(6)", "c_datetime2_7": "timestamp(6)",
		"c_datetimeoffset_7": "timestamptz(6)", "c_datetimeoffset_7__offset_minutes": "smallint",
		"c_char_10": "char(10)", "c_nchar_10": "varchar(10)", "c_varchar_50": "varchar(50)", "c_varchar_max": "text",
		"c_nvarchar_50": "varchar(50)", "c_text": "text", "c_ntext": "text", "c_binary_8": "bytea", "c_image": "bytea",
		"c_xml": "xml", "c_json": "jsonb", "c_vector_3": "real[]", "c_sql_variant": "text", "c_sql_variant__type": "text",
		"c_rowversion": "bytea", "c_geography": "bytea",
	} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	ms := mappings(tb.Columns, mapped)
	for i, c := range tb.Columns {
		lossy := c.Kind().HasScale() && c.Kind() != decode.KindDecimal && c.Type.Scale == 7
		if ms[i].Lossy != lossy {
			t.Errorf("%s: lossy %v (%s), want %v", c.Name, ms[i].Lossy, ms[i].Why, lossy)
		}
	}
}

// The option table of doc.go is the declared spec (the README's is held
// to it by cmd/tdsextract's TestREADMESinkOptions).
func TestDocsShowTheSpec(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(Spec.Markdown()), "\n") {
		if !strings.Contains(string(doc), "//\t"+line+"\n") {
			t.Errorf("doc.go lacks the option line %s", line)
		}
	}
}
