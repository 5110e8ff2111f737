package sampledb

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
)

// The finance schema holds identities on exact numeric types and a
// datetimeoffset default: decimal(12,0) IDENTITY(5000,5) on invoices
// (two values were handed out after the last row: rows deleted), and
// numeric(20,0) IDENTITY(1,1) on ledger, a precision no PostgreSQL
// integer holds. ledger.invoice_no, decimal(12,0), references the
// invoices' key.

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
}
