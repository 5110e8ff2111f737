package sampledb

import (
	"fmt"
	"sort"

	"github.com/tdsextract/tdsextract/decode"
)

// The finance schema holds identities on exact numeric types and a
// datetimeoffset default: decimal(12,0) IDENTITY(5000,5) on invoices
// (two values were handed out after the last row: rows deleted), and
// numeric(20,0) IDENTITY(1,1) on ledger, a precision no PostgreSQL
// integer holds. ledger.invoice_no, decimal(12,0), references the
// invoices' key. Its views combine query blocks with UNION, UNION ALL,
// EXCEPT and INTERSECT, take the TOP (5) rows of an ORDER BY and read a
// CTE; their rows are computed from the tables' when the database is
// built, each view's in the order of its key columns.

// financeShape computes the cross-table facts of the finance schema.
type financeShape struct {
	invoices, ledger int64
	seed             uint64
}

func (s financeShape) h(salt uint64, i int64) uint64 { return mix(s.seed ^ salt ^ uint64(i)*golden) }

func (s financeShape) invoiceNo(i int64) int64 { return 5000 + 5*i }

// invoiceCustomer is one of seven customers, so the per-customer totals
// have several invoices each.
func (s financeShape) invoiceCustomer(i int64) string {
	return []string{"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne"}[s.h(0xC0, i)%7]
}

func (s financeShape) invoiceCents(i int64) int64 { return 1000 + int64(s.h(0xA3, i)>>16%99000) }

func (s financeShape) invoiceStatus(i int64) string {
	return []string{"open", "paid", "paid", "void"}[s.h(0x57, i)&3]
}

// ledgerInvoice is the invoice row a ledger row books against: only the
// even invoice rows are booked.
func (s financeShape) ledgerInvoice(i int64) int64 {
	if s.invoices < 2 {
		return 0
	}
	return 2 * (int64(s.h(0x1E, i)>>8) % ((s.invoices + 1) / 2))
}

func (s financeShape) ledgerCents(i int64) int64 { return -50000 + int64(s.h(0x1C, i)>>16%100000) }

func decimalOf(v int64, prec, scale uint8) decode.Decimal {
	d := dec(v)
	d.Precision, d.Scale = prec, scale
	return d
}

func (b *builder) finance() {
	s := financeShape{invoices: b.rows("finance.invoices"), ledger: b.rows("finance.ledger"), seed: mix(uint64(b.db.seed) ^ 0xB111)}
	if s.invoices == 0 {
		s.ledger = 0
	}
	exactIdentity := func(t *Table, col string, seed, incr, gap int64, key func(int64) int64) {
		t.Identity, t.IdentitySeed, t.IdentityIncrement, t.IdentityGap = col, seed, incr, gap
		t.Columns[t.ColumnIndex(col)].Flags = decode.ColFlagIdentity
		// The key is not an integer type: no key-range fast path, but
		// KeyValue gives the identity's values.
		t.Key = []string{col}
		t.keyOf = key
		t.Indexes = append(t.Indexes, Index{Name: "PK_" + t.Name, Columns: []string{col}, Unique: true, PrimaryKey: true, Clustered: true})
	}
	day20250101 := decode.DateFromCivil(2025, 1, 1)

	inv := b.newTable("finance", "invoices", []colDef{
		{name: "invoice_no", sqlType: "decimal(12,0)"},
		{name: "customer", sqlType: "nvarchar(60)"},
		{name: "amount", sqlType: "decimal(12,2)"},
		{name: "status", sqlType: "varchar(10)"},
		{name: "issued_at", sqlType: "datetimeoffset(7)"},
	})
	inv.Rows = s.invoices
	exactIdentity(inv, "invoice_no", 5000, 5, 2, s.invoiceNo)
	inv.Defaults = map[string]string{"status": "('open')", "issued_at": "(sysdatetimeoffset())"}
	inv.rowFn = func(i int64, dst []any) []any {
		h := s.h(0x155, i)
		at := dateTimeIn(h, day20250101, day20250101+365)
		off := int16(60 * (int64(h>>40%27) - 12)) // -12:00 .. +14:00 in whole hours
		return append(dst, decimalOf(s.invoiceNo(i), 12, 0), s.invoiceCustomer(i), decimalOf(s.invoiceCents(i), 12, 2),
			s.invoiceStatus(i), decode.DateTimeOffset{UTC: at, OffsetMin: off})
	}

	led := b.newTable("finance", "ledger", []colDef{
		{name: "entry_no", sqlType: "numeric(20,0)"},
		{name: "invoice_no", sqlType: "decimal(12,0)"},
		{name: "amount", sqlType: "decimal(12,2)"},
		{name: "memo", sqlType: "varchar(40)", nullable: true},
	})
	led.Rows = s.ledger
	exactIdentity(led, "entry_no", 1, 1, 0, func(i int64) int64 { return i + 1 })
	led.ForeignKeys = []ForeignKey{{Name: "FK_ledger_invoices", Columns: []string{"invoice_no"}, RefSchema: "finance",
		RefTable: "invoices", RefColumns: []string{"invoice_no"}, OnDelete: "NO_ACTION", OnUpdate: "NO_ACTION"}}
	led.rowFn = func(i int64, dst []any) []any {
		var memo any
		if s.h(0x3E, i)%3 != 0 {
			memo = fmt.Sprintf("booking %d", i+1)
		}
		return append(dst, decimalOf(i+1, 20, 0), decimalOf(s.invoiceNo(s.ledgerInvoice(i)), 12, 0),
			decimalOf(s.ledgerCents(i), 12, 2), memo)
	}

	b.financeViews(s)
}

func (b *builder) financeViews(s financeShape) {
	view := func(name, def string, cols []colDef, rows [][]any) {
		v := makeTable(b.db, "finance", name, cols)
		v.View = def
		v.Rows = int64(len(rows))
		v.rowFn = func(i int64, dst []any) []any { return append(dst, rows[i]...) }
		b.db.views = append(b.db.views, v)
	}
	no := func(i int64) decode.Decimal { return decimalOf(s.invoiceNo(i), 12, 0) }
	money := func(cents int64) decode.Decimal { return decimalOf(cents, 12, 2) }
	booked := map[int64]bool{}
	for j := range s.ledger {
		booked[s.ledgerInvoice(j)] = true
	}

	var rows [][]any
	for i := range s.invoices {
		if s.invoiceStatus(i) == "open" || s.invoiceCents(i) > 80000 {
			rows = append(rows, []any{no(i), s.invoiceCustomer(i)})
		}
	}
	view("open_or_large", "CREATE VIEW [finance].[open_or_large]\nAS\nSELECT invoice_no, customer FROM finance.invoices WHERE status = 'open'\n"+
		"UNION\nSELECT invoice_no, customer FROM finance.invoices WHERE amount > 800.00\n",
		[]colDef{{name: "invoice_no", sqlType: "decimal(12,0)"}, {name: "customer", sqlType: "nvarchar(60)"}}, rows)

	// amounts: every invoice and ledger amount, by invoice_no then amount.
	type amount struct{ no, cents int64 }
	var am []amount
	for i := range s.invoices {
		am = append(am, amount{s.invoiceNo(i), s.invoiceCents(i)})
	}
	for j := range s.ledger {
		am = append(am, amount{s.invoiceNo(s.ledgerInvoice(j)), s.ledgerCents(j)})
	}
	sort.Slice(am, func(a, b int) bool { return am[a].no < am[b].no || am[a].no == am[b].no && am[a].cents < am[b].cents })
	rows = nil
	for _, a := range am {
		rows = append(rows, []any{decimalOf(a.no, 12, 0), money(a.cents)})
	}
	view("amounts", "CREATE VIEW [finance].[amounts]\nAS\nSELECT i.invoice_no, i.amount FROM finance.invoices AS i\n"+
		"UNION ALL\nSELECT l.invoice_no, l.amount FROM finance.ledger AS l\n",
		[]colDef{{name: "invoice_no", sqlType: "decimal(12,0)"}, {name: "amount", sqlType: "decimal(12,2)"}}, rows)

	var unbooked, bookedRows [][]any
	for i := range s.invoices {
		if booked[i] {
			bookedRows = append(bookedRows, []any{no(i)})
		} else {
			unbooked = append(unbooked, []any{no(i)})
		}
	}
	noCol := []colDef{{name: "invoice_no", sqlType: "decimal(12,0)"}}
	view("unbooked", "CREATE VIEW [finance].[unbooked] AS\nSELECT invoice_no FROM finance.invoices\nEXCEPT\nSELECT invoice_no FROM finance.ledger", noCol, unbooked)
	view("booked", "CREATE VIEW [finance].[booked] AS\nSELECT invoice_no FROM finance.invoices\nINTERSECT\nSELECT invoice_no FROM finance.ledger;", noCol, bookedRows)

	// largest_invoices: the five largest amounts, ties by invoice_no.
	order := make([]int64, s.invoices)
	for i := range order {
		order[i] = int64(i)
	}
	sort.Slice(order, func(a, b int) bool {
		ca, cb := s.invoiceCents(order[a]), s.invoiceCents(order[b])
		return ca > cb || ca == cb && order[a] < order[b]
	})
	rows = nil
	for _, i := range order[:min(5, len(order))] {
		rows = append(rows, []any{no(i), s.invoiceCustomer(i), money(s.invoiceCents(i))})
	}
	view("largest_invoices", "CREATE VIEW [finance].[largest_invoices]\nAS\n-- the five largest invoices\n"+
		"SELECT TOP (5) invoice_no, customer, amount\nFROM finance.invoices\nORDER BY amount DESC, invoice_no\n",
		[]colDef{{name: "invoice_no", sqlType: "decimal(12,0)"}, {name: "customer", sqlType: "nvarchar(60)"}, {name: "amount", sqlType: "decimal(12,2)"}}, rows)

	// customer_totals: per customer with more than five invoices, by customer.
	total, count := map[string]int64{}, map[string]int64{}
	for i := range s.invoices {
		c := s.invoiceCustomer(i)
		total[c] += s.invoiceCents(i)
		count[c]++
	}
	var names []string
	for c := range total {
		if count[c] > 5 {
			names = append(names, c)
		}
	}
	sort.Strings(names)
	rows = nil
	for _, c := range names {
		rows = append(rows, []any{c, decimalOf(total[c], 38, 2), count[c]})
	}
	view("customer_totals", "CREATE VIEW [finance].[customer_totals]\nAS\nWITH totals AS (\n"+
		"    SELECT customer, SUM(amount) AS total, COUNT(*) AS invoices\n    FROM finance.invoices\n    GROUP BY customer\n)\n"+
		"SELECT t.customer, t.total, t.invoices\nFROM totals AS t\nWHERE t.invoices > 5\n",
		[]colDef{{name: "customer", sqlType: "nvarchar(60)"}, {name: "total", sqlType: "decimal(38,2)", nullable: true}, {name: "invoices", sqlType: "int", nullable: true}}, rows)
}
