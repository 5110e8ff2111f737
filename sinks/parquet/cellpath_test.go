package parquet

import (
	"context"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/internal/sampleserver/sampledb"
	"github.com/tdsextract/tdsextract/internal/sinktest"
	"github.com/tdsextract/tdsextract/sinks"
)

// markCheck is a Sink whose EndRow first checks that a row EndRow lets
// through on its one comparison is one at which none of endRow's checks
// would have done anything.
type markCheck struct {
	*Sink
	t         *testing.T
	fast, all int
}

func (m *markCheck) EndRow() error {
	s := m.Sink
	b := s.fill
	n := b.rows + 1
	held := b.bytes + n*s.fixedBytes
	m.all++
	if n < s.markRows && held < s.markBytes && s.err == nil {
		m.fast++
		if n == predictFrom || n == sampleValues ||
			s.cfg.MaxRows > 0 && s.fileRows+1 >= s.cfg.MaxRows ||
			held >= s.cfg.RowGroupBytes || s.cfg.RowGroupRows > 0 && n >= s.cfg.RowGroupRows ||
			held-b.sentBytes >= s.chunk {
			m.t.Fatalf("row %d of the batch (%d bytes) would skip endRow, whose checks apply (marks %d rows, %d bytes)",
				n, held, s.markRows, s.markBytes)
		}
	}
	return m.Sink.EndRow()
}

// EndRow's one comparison stands for all of endRow's checks: on sizes,
// row and file limits, streaming and the first batch's milestones.
func TestEndRowMarks(t *testing.T) {
	const rows = 30000
	db := sampledb.New(sampledb.Config{Seed: 3, Rows: map[string]int64{"sales.orders": rows, "sales.order_lines": rows}})
	cases := []struct {
		name  string
		table string
		opts  map[string]any
		chunk int64 // streaming job size, 0 = the sink's own
	}{
		{"defaults", "order_lines", nil, 0},
		{"streaming", "orders", map[string]any{"row_group_bytes": 256 << 10}, 20 << 10},
		{"row_group_rows", "order_lines", map[string]any{"row_group_rows": 7000}, 0},
		{"max_rows", "orders", map[string]any{"max_rows": 9000, "row_group_bytes": 64 << 10}, 16 << 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb, _ := db.Table("sales", c.table)
			opts := map[string]any{"path": t.TempDir() + "/out.parquet"}
			for k, v := range c.opts {
				opts[k] = v
			}
			cfg, err := ParseConfig(opts)
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.chunk > 0 {
				s.threads, s.chunk = 2, c.chunk
			}
			ctx := context.Background()
			if err := s.Open(ctx, sinks.ExtractInfo{Name: tb.Name, EstimatedRows: rows}); err != nil {
				t.Fatal(err)
			}
			m := &markCheck{Sink: s, t: t}
			st := decode.NewStream(decode.StreamOptions{})
			if err := st.SetSink(m); err != nil {
				t.Fatal(err)
			}
			wire := decode.AppendColMetadata(nil, tb.Columns)
			sinktest.Feed(t, st, tb.AppendRows(wire, 0, rows, false))
			stats, err := s.Publish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if stats.Rows != rows || m.all != rows {
				t.Fatalf("%d rows published, %d ended, want %d", stats.Rows, m.all, rows)
			}
			// nearly every row takes the one comparison
			if m.fast < rows*9/10 {
				t.Fatalf("%d of %d rows took EndRow's one comparison", m.fast, rows)
			}
		})
	}
}

// A value the column cannot take fails the run at that row, on the short
// paths of Int and Decimal as on the others.
func TestCellMismatchErrors(t *testing.T) {
	cols := []decode.Column{
		{Name: "i", Type: decode.TypeInfo{Type: decode.TypeInt4}},
		{Name: "d", Type: decode.TypeInfo{Type: decode.TypeDecimalN, Size: 9, Precision: 10, Scale: 2}},
		{Name: "s", Type: decode.TypeInfo{Type: decode.TypeBigVarChar, Size: 10}},
	}
	good := []cell{{Kind: 'i', I: 5}, {Kind: 'd', Dec: mustDec(t, "1.25", 10, 2)}, {Kind: 's', S: "x"}}
	cases := []struct {
		name string
		col  int
		c    cell
		want string
	}{
		{"decimal into int", 0, cell{Kind: 'd', Dec: mustDec(t, "1.25", 10, 2)}, "decimal value with scale 2 in a column of scale 0"},
		{"int into decimal", 1, cell{Kind: 'i', I: 1}, "unexpected integer"},
		{"int into varchar", 2, cell{Kind: 'i', I: 1}, "unexpected integer"},
		{"decimal scale", 1, cell{Kind: 'd', Dec: mustDec(t, "1.250", 10, 3)}, "scale 3 in a column of scale 2"},
		{"decimal magnitude", 1, cell{Kind: 'd', Dec: decode.Decimal{Hi: 1, Scale: 2, Precision: 10}}, "exceeds its precision"},
		{"NULL in NOT NULL", 0, cell{Kind: 'n'}, "NOT NULL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(Config{Path: t.TempDir() + "/out.parquet"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := s.Open(ctx, sinks.ExtractInfo{Name: "t"}); err != nil {
				t.Fatal(err)
			}
			defer s.Abort(ctx)
			if err := s.Columns(cols, make([]decode.Mode, len(cols))); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 3000; r++ {
				for i := range good {
					if r == 2500 && i == c.col {
						drive(s, i, &c.c)
					} else {
						drive(s, i, &good[i])
					}
				}
				err := s.EndRow()
				if (err != nil) != (r >= 2500) {
					t.Fatalf("row %d: EndRow error %v", r, err)
				}
				if err != nil && !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q, want %q", err, c.want)
				}
			}
		})
	}
}
