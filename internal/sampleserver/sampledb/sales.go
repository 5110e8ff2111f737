package sampledb

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/tdsextract/tdsextract/decode"
)

// mulDiv returns a*b/c without overflow (a, b, c >= 0, c > 0, result < 2^63).
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// asciiSlug keeps the lower-case ASCII letters of s (for e-mail addresses).
func asciiSlug(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z':
			sb.WriteRune(r)
		case r == 'é' || r == 'è' || r == 'ë':
			sb.WriteByte('e')
		case r == 'ö' || r == 'ø' || r == 'ó':
			sb.WriteByte('o')
		case r == 'ü' || r == 'ú':
			sb.WriteByte('u')
		case r == 'å' || r == 'á' || r == 'ä':
			sb.WriteByte('a')
		case r == 'ł':
			sb.WriteByte('l')
		case r == 'ř':
			sb.WriteByte('r')
		case r == 'ñ':
			sb.WriteByte('n')
		case r == 'ç':
			sb.WriteByte('c')
		}
	}
	return sb.String()
}

// Sales is the shape of the sales schema for a given row count
// configuration; its methods compute the cross-table facts (which lines
// belong to which order, an order's total) the tests and the pgloader
// check need without scanning.
type Sales struct {
	Customers, Products, Orders, Lines int64
	seed                               uint64
}

// OrderOfLine returns the order_id of order line row l (0-based): lines are
// spread evenly and in order over the orders, so each order's lines are
// contiguous.
func (s Sales) OrderOfLine(l int64) int64 { return mulDiv(l, s.Orders, s.Lines) + 1 }

// LinesOfOrder returns the row range [from, to) of order_lines belonging to
// order_id id.
func (s Sales) LinesOfOrder(id int64) (from, to int64) {
	o := id - 1
	ceil := func(o int64) int64 {
		if o <= 0 {
			return 0
		}
		// smallest l with l*Orders/Lines >= o, i.e. l >= o*Lines/Orders
		l := mulDiv(o, s.Lines, s.Orders)
		for l > 0 && mulDiv(l-1, s.Orders, s.Lines) >= o {
			l--
		}
		for mulDiv(l, s.Orders, s.Lines) < o {
			l++
		}
		return l
	}
	return min(ceil(o), s.Lines), min(ceil(o+1), s.Lines)
}

// ProductOfLine returns the product_id of order line row l.
func (s Sales) ProductOfLine(l int64) int64 {
	return 1 + uniform(mix(s.seed^0x9A0D^uint64(l)*golden), s.Products)
}

// QuantityOfLine returns the quantity of order line row l (1..10, mostly small).
func (s Sales) QuantityOfLine(l int64) int64 {
	h := mix(s.seed ^ 0x0A7 ^ uint64(l)*golden)
	if h&3 != 0 {
		return 1 + int64(h>>8&1)
	}
	return 1 + uniform(h, 10)
}

// PriceCents returns the price of product_id p in cents (0.99 .. 998.99).
func (s Sales) PriceCents(p int64) int64 {
	h := mix(s.seed ^ 0x9121CE ^ uint64(p)*golden)
	return 100*(1+uniform(h, 999)) - 1
}

// DiscountPct returns the discount of order line row l in percent (0, 5, 10 or 15).
func (s Sales) DiscountPct(l int64) int64 {
	h := mix(s.seed ^ 0xD15C ^ uint64(l)*golden)
	if h&7 != 0 {
		return 0
	}
	return 5 * (1 + int64(h>>8%3))
}

// OrderTotalCents returns orders.total of order_id id in cents: the sum of
// quantity*unit_price of its lines (before discounts).
func (s Sales) OrderTotalCents(id int64) int64 {
	from, to := s.LinesOfOrder(id)
	var sum int64
	for l := from; l < to; l++ {
		sum += s.QuantityOfLine(l) * s.PriceCents(s.ProductOfLine(l))
	}
	return sum
}

// CustomerOfOrder returns customer_id of order row o (0-based).
func (s Sales) CustomerOfOrder(o int64) int64 {
	h := mix(s.seed ^ 0xC057 ^ uint64(o)*golden)
	// Skewed: a quarter of the customers place half of the orders.
	if h&1 == 0 {
		return 1 + uniform(h, max(1, s.Customers/4))
	}
	return 1 + uniform(h, s.Customers)
}

// SalesRows returns Config.Rows for a sales schema whose order_lines has
// lines rows and whose other tables keep the default proportions (four
// lines per order, five orders per customer, a hundred lines per product;
// at least one row each), so that a benchmark can scale the schema as a
// whole: every order's customer, every line's order and product exist at
// any scale, since the rows are derived from these counts.
func SalesRows(lines int64) map[string]int64 {
	n := DefaultRows["sales.order_lines"]
	part := func(table string) int64 { return max(1, mulDiv(lines, DefaultRows[table], n)) }
	return map[string]int64{"sales.order_lines": lines, "sales.orders": part("sales.orders"),
		"sales.customers": part("sales.customers"), "sales.products": part("sales.products")}
}

// SalesShape returns the sales schema facts of db.
func (db *DB) SalesShape() Sales {
	t := func(n string) int64 { x, _ := db.Table("sales", n); return x.Rows }
	return Sales{Customers: t("customers"), Products: t("products"), Orders: t("orders"), Lines: t("order_lines"),
		seed: mix(uint64(db.seed) ^ 0x5A1E5)}
}

var (
	categories = map[string]string{"Chair": "furniture", "Table": "furniture", "Lamp": "home", "Keyboard": "electronics",
		"Backpack": "outdoor", "Bottle": "outdoor", "Wallet": "accessories", "Jacket": "apparel", "Clock": "home",
		"Speaker": "electronics", "Mug": "kitchen", "Notebook": "office"}
	statuses = []string{"new", "paid", "shipped", "delivered", "cancelled", "returned"}
)

func (b *builder) sales() {
	s := Sales{Customers: b.rows("sales.customers"), Products: b.rows("sales.products"),
		Orders: b.rows("sales.orders"), Lines: b.rows("sales.order_lines"), seed: mix(uint64(b.db.seed) ^ 0x5A1E5)}
	// Keep referential integrity when a parent table is configured empty.
	if s.Customers == 0 {
		s.Orders = 0
	}
	if s.Orders == 0 || s.Products == 0 {
		s.Lines = 0
	}
	hash := func(salt uint64, i int64) uint64 { return mix(s.seed ^ salt ^ uint64(i)*golden) }
	day20200101, day20220101 := decode.DateFromCivil(2020, 1, 1), decode.DateFromCivil(2022, 1, 1)
	day20261130 := decode.DateFromCivil(2026, 11, 30)
	id := func(i int64) int64 { return i + 1 }

	identity := func(t *Table, col string) {
		t.Identity = col
		c := t.ColumnIndex(col)
		t.Columns[c].Flags = decode.ColFlagIdentity
		t.setKey(col, true)
	}

	// customers
	cu := b.newTable("sales", "customers", []colDef{
		{name: "customer_id", sqlType: b.keyType("sales.customers")},
		{name: "first_name", sqlType: "nvarchar(50)"},
		{name: "last_name", sqlType: "nvarchar(50)"},
		{name: "email", sqlType: "varchar(120)"},
		{name: "city", sqlType: "nvarchar(60)", nullable: true},
		{name: "country", sqlType: "char(2)", nullable: true},
		{name: "created_at", sqlType: "datetime"},
		{name: "is_active", sqlType: "bit"},
		{name: "loyalty_points", sqlType: "int"},
	})
	identity(cu, "customer_id")
	cu.Defaults = map[string]string{"created_at": "(getdate())", "is_active": "((1))", "loyalty_points": "((0))"}
	cu.Indexes = append(cu.Indexes, Index{Name: "UX_customers_email", Columns: []string{"email"}, Unique: true},
		Index{Name: "IX_customers_last_name", Columns: []string{"last_name", "first_name"}, Included: []string{"city"}})
	cu.rowFn = func(i int64, dst []any) []any {
		h := hash(0xC1, i)
		first, last := firstNames[h%uint64(len(firstNames))], lastNames[(h>>16)%uint64(len(lastNames))]
		var city, country any
		if h>>32&15 != 0 {
			city = cities[(h>>36)%uint64(len(cities))]
			country = countries[(h>>44)%uint64(len(countries))]
		}
		created := roundTo300(dateTimeIn(mix(h), day20200101, day20220101))
		return append(dst, id(i), first, last,
			fmt.Sprintf("%s.%s%d@example.com", asciiSlug(first), asciiSlug(last), i+1),
			city, country, created, h>>50&7 != 0, int64(h>>52%2000))
	}

	// products
	pr := b.newTable("sales", "products", []colDef{
		{name: "product_id", sqlType: b.keyType("sales.products")},
		{name: "sku", sqlType: "varchar(20)"},
		{name: "name", sqlType: "nvarchar(100)"},
		{name: "category", sqlType: "varchar(30)", nullable: true},
		{name: "price", sqlType: "decimal(10,2)"},
		{name: "in_stock", sqlType: "int"},
		{name: "discontinued", sqlType: "bit"},
	})
	identity(pr, "product_id")
	pr.Defaults = map[string]string{"in_stock": "((0))", "discontinued": "((0))"}
	pr.Indexes = append(pr.Indexes, Index{Name: "UX_products_sku", Columns: []string{"sku"}, Unique: true},
		Index{Name: "IX_products_category", Columns: []string{"category"}})
	pr.rowFn = func(i int64, dst []any) []any {
		h := hash(0x9D, i)
		noun := productNoun[(h>>8)%uint64(len(productNoun))]
		name := fmt.Sprintf("%s %s %d", productAdj[h%uint64(len(productAdj))], noun, 100+h>>20%900)
		var cat any = categories[noun]
		if h>>40&31 == 0 {
			cat = nil
		}
		price := dec(s.PriceCents(i + 1))
		price.Precision, price.Scale = 10, 2
		return append(dst, id(i), fmt.Sprintf("SKU-%06d", i+1), name, cat, price, int64(h>>44%500), h>>60 == 0)
	}

	// orders
	or := b.newTable("sales", "orders", []colDef{
		{name: "order_id", sqlType: b.keyType("sales.orders")},
		{name: "customer_id", sqlType: b.keyType("sales.customers")},
		{name: "order_date", sqlType: "datetime"},
		{name: "status", sqlType: "nvarchar(20)"},
		{name: "ship_city", sqlType: "nvarchar(60)", nullable: true},
		{name: "total", sqlType: "decimal(12,2)"},
	})
	identity(or, "order_id")
	or.Defaults = map[string]string{"order_date": "(getdate())", "status": "(N'new')", "total": "((0))"}
	or.Indexes = append(or.Indexes, Index{Name: "IX_orders_customer_id", Columns: []string{"customer_id"}},
		Index{Name: "IX_orders_order_date", Columns: []string{"order_date"}, Included: []string{"status"}})
	or.ForeignKeys = []ForeignKey{{Name: "FK_orders_customers", Columns: []string{"customer_id"}, RefSchema: "sales",
		RefTable: "customers", RefColumns: []string{"customer_id"}, OnDelete: "NO_ACTION", OnUpdate: "NO_ACTION"}}
	or.rowFn = func(i int64, dst []any) []any {
		h := hash(0x0D, i)
		// Order dates increase with the order id, spread over 2022-01-01..2026-11-30.
		span := int64(day20261130 - day20220101)
		day := int64(day20220101) + mulDiv(i, span, max(1, s.Orders))
		when := roundTo300(decode.DateTime{Days: int32(day), Ticks: int64(h % decode.TicksPerDay)})
		age := float64(s.Orders-i) / float64(max(1, s.Orders))
		st := statuses[3]
		switch r := h >> 40 % 100; {
		case r < 4:
			st = statuses[4]
		case r < 6:
			st = statuses[5]
		case age < 0.01:
			st = statuses[h>>20%3]
		}
		var city any
		if h>>50&7 != 0 {
			city = cities[(h>>54)%uint64(len(cities))]
		}
		total := dec(s.OrderTotalCents(i + 1))
		total.Precision, total.Scale = 12, 2
		return append(dst, id(i), s.CustomerOfOrder(i), when, st, city, total)
	}

	// order_lines
	ol := b.newTable("sales", "order_lines", []colDef{
		{name: "line_id", sqlType: b.keyType("sales.order_lines")},
		{name: "order_id", sqlType: b.keyType("sales.orders")},
		{name: "product_id", sqlType: b.keyType("sales.products")},
		{name: "quantity", sqlType: "int"},
		{name: "unit_price", sqlType: "decimal(10,2)"},
		{name: "discount", sqlType: "decimal(4,2)"},
	})
	identity(ol, "line_id")
	ol.Defaults = map[string]string{"quantity": "((1))", "discount": "((0))"}
	ol.Indexes = append(ol.Indexes, Index{Name: "IX_order_lines_order_id", Columns: []string{"order_id"}},
		Index{Name: "IX_order_lines_product_id", Columns: []string{"product_id"}})
	ol.ForeignKeys = []ForeignKey{
		{Name: "FK_order_lines_orders", Columns: []string{"order_id"}, RefSchema: "sales", RefTable: "orders",
			RefColumns: []string{"order_id"}, OnDelete: "CASCADE", OnUpdate: "NO_ACTION"},
		{Name: "FK_order_lines_products", Columns: []string{"product_id"}, RefSchema: "sales", RefTable: "products",
			RefColumns: []string{"product_id"}, OnDelete: "NO_ACTION", OnUpdate: "NO_ACTION"},
	}
	ol.rowFn = func(i int64, dst []any) []any {
		p := s.ProductOfLine(i)
		price := dec(s.PriceCents(p))
		price.Precision, price.Scale = 10, 2
		disc := dec(s.DiscountPct(i))
		disc.Precision, disc.Scale = 4, 2
		return append(dst, id(i), s.OrderOfLine(i), p, s.QuantityOfLine(i), price, disc)
	}
	or.Rows, ol.Rows = s.Orders, s.Lines
}
