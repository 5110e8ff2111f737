package sampledb

import (
	"github.com/tdsextract/tdsextract/decode"
)

// lineitem layout: rows come in blocks of 32 covering 8 orders whose line
// counts are a per-block permutation of {1,2,3,4,4,5,6,7} (TPC-H: 1..7 lines,
// 4 on average). Order keys are sparse as in TPC-H's dbgen: within each block
// of 32 keys only the first 8 are used, so block b holds keys 32b+1..32b+8.
// l_orderkey is thus non-decreasing in the row number, and a key maps back to
// its first row in O(1).

var lineCounts = [8]int{1, 2, 3, 4, 4, 5, 6, 7}

// lineBlocks are 64 fixed arrangements of lineCounts; each block of 32 rows
// uses one, chosen by a hash of (seed, block). For each arrangement the
// tables map a row within the block to its order and line number, and an
// order to its first row, so locating a row costs one hash and two lookups.
var lineBlocks = makeLineBlocks()

// lineBlock is one arrangement: order (0..7) and line number (1..7) of each
// of the 32 rows, and the first row of each order (first[8] = 32).
type lineBlock struct {
	order, line [32]uint8
	first       [9]uint8
}

func makeLineBlocks() (t [64]lineBlock) {
	h := uint64(0x11E17E)
	for p := range t {
		c := lineCounts
		for k := 7; k > 0; k-- {
			h = mix(h + golden)
			j := int(h % uint64(k+1))
			c[k], c[j] = c[j], c[k]
		}
		r := 0
		for o := range 8 {
			t[p].first[o] = uint8(r)
			for l := range c[o] {
				t[p].order[r], t[p].line[r] = uint8(o), uint8(l+1)
				r++
			}
		}
		t[p].first[8] = 32
	}
	return t
}

type lineLayout struct{ seed uint64 }

// block returns the arrangement index of block b.
func (l lineLayout) block(b int64) int { return int(mix(l.seed^uint64(b)*golden) & 63) }

// locate returns the order key and line number (1-based) of row i.
func (l lineLayout) locate(i int64) (orderKey int64, line int) {
	b, r := i/32, i%32
	a := &lineBlocks[l.block(b)]
	return b*32 + int64(a.order[r]) + 1, int(a.line[r])
}

// firstRow returns the first row whose order key is >= k.
func (l lineLayout) firstRow(k int64) int64 {
	if k <= 1 {
		return 0
	}
	b, o := (k-1)/32, (k-1)%32
	if o >= 8 {
		return (b + 1) * 32
	}
	return b*32 + int64(lineBlocks[l.block(b)].first[o])
}

func (b *builder) lineitem() {
	seed := uint64(b.db.seed)
	lay := lineLayout{seed: mix(seed ^ 0x7C41)}
	orderHash := func(i int64) uint64 {
		ok, _ := lay.locate(i)
		return mix(lay.seed ^ 0xA11CE ^ uint64(ok)*golden)
	}
	orderDate := func(i int64) int64 {
		return int64(day19920101) + uniform(orderHash(i), int64(day19980802-day19920101-151))
	}
	partKey := func(h uint64) int64 { return 1 + uniform(h, 200000) }
	quantity := func(h uint64) int64 { return 1 + uniform(mix(h+7), 50) }
	retail := func(pk int64) int64 { return 90000 + (pk/10)%20001 + 100*(pk%1000) } // cents
	// Per-row line hash shared by columns that depend on each other.
	lineHash := func(i int64) uint64 { return mix(lay.seed ^ 0x11AE ^ uint64(i)*golden) }
	shipDate := func(i int64) int64 { return orderDate(i) + 1 + uniform(lineHash(i), 121) }
	commitDate := func(i int64) int64 { return orderDate(i) + 30 + uniform(mix(lineHash(i)+1), 61) }
	receiptDate := func(i int64) int64 { return shipDate(i) + 1 + uniform(mix(lineHash(i)+2), 30) }

	instr := []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	modes := []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	comments := wordPool(seed^0xC0DE, 4096, 44, words)

	ph := func(i int64) uint64 { return mix(lineHash(i) + 3) } // part/quantity hash
	t := b.newTable("dbo", "lineitem", []colDef{
		{name: "l_orderkey", sqlType: "bigint", v: &vfn{i: func(i int64, _ uint64) int64 { k, _ := lay.locate(i); return k }}},
		{name: "l_partkey", sqlType: "int", v: &vfn{i: func(i int64, _ uint64) int64 { return partKey(ph(i)) }}},
		{name: "l_suppkey", sqlType: "int", v: &vfn{i: func(i int64, h uint64) int64 {
			pk := partKey(ph(i))
			return 1 + (pk+int64(h%4)*(10000/4+(pk-1)/10000))%10000 // TPC-H supplier rule
		}}},
		{name: "l_linenumber", sqlType: "int", v: &vfn{i: func(i int64, _ uint64) int64 { _, l := lay.locate(i); return int64(l) }}},
		{name: "l_quantity", sqlType: "decimal(15,2)", v: &vfn{d: func(i int64, _ uint64) decode.Decimal { return dec(quantity(ph(i)) * 100) }}},
		{name: "l_extendedprice", sqlType: "decimal(15,2)", v: &vfn{d: func(i int64, _ uint64) decode.Decimal {
			h := ph(i)
			return dec(quantity(h) * retail(partKey(h)))
		}}},
		{name: "l_discount", sqlType: "decimal(15,2)", v: &vfn{d: func(_ int64, h uint64) decode.Decimal { return dec(uniform(h, 11)) }}},
		{name: "l_tax", sqlType: "decimal(15,2)", v: &vfn{d: func(_ int64, h uint64) decode.Decimal { return dec(uniform(h, 9)) }}},
		{name: "l_returnflag", sqlType: "char(1)", v: &vfn{strs: []string{"R", "A", "N"}, sidx: func(i int64, h uint64) int {
			if receiptDate(i) <= int64(day19950617) {
				return int(h & 1)
			}
			return 2
		}}},
		{name: "l_linestatus", sqlType: "char(1)", v: &vfn{strs: []string{"O", "F"}, sidx: func(i int64, _ uint64) int {
			if shipDate(i) > int64(day19950617) {
				return 0
			}
			return 1
		}}},
		{name: "l_shipdate", sqlType: "date", v: &vfn{i: func(i int64, _ uint64) int64 { return shipDate(i) }}},
		{name: "l_commitdate", sqlType: "date", v: &vfn{i: func(i int64, _ uint64) int64 { return commitDate(i) }}},
		{name: "l_receiptdate", sqlType: "date", v: &vfn{i: func(i int64, _ uint64) int64 { return receiptDate(i) }}},
		{name: "l_shipinstruct", sqlType: "char(25)", v: &vfn{strs: instr}},
		{name: "l_shipmode", sqlType: "char(10)", v: &vfn{strs: modes}},
		{name: "l_comment", sqlType: "varchar(44)", v: &vfn{strs: comments}},
	})
	t.Key = []string{"l_orderkey", "l_linenumber"}
	t.keyCol = 0
	t.keyOf = func(i int64) int64 { k, _ := lay.locate(i); return k }
	t.lowerB = lay.firstRow
	t.Indexes = append(t.Indexes, Index{Name: "PK_lineitem", Columns: []string{"l_orderkey", "l_linenumber"}, Unique: true, PrimaryKey: true, Clustered: true},
		Index{Name: "IX_lineitem_shipdate", Columns: []string{"l_shipdate"}})
}
