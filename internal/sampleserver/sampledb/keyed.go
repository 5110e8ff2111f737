package sampledb

import (
	"fmt"

	"github.com/tdsextract/tdsextract/decode"
)

// keyed adds two tables clustered on keys that are not integers, for the
// code that splits a table into key ranges on such keys:
//
//   - readings: clustered primary key reading_at datetime2(7), strictly
//     increasing with the row (about 3.7 s apart, with 100 ns digits, so
//     that a key that loses its last digit on the way still keeps the
//     rows apart), a sensor id and a value.
//   - devices: clustered primary key device_id uniqueidentifier (random
//     version-4 GUIDs, so the clustered order is SQL Server's GUID order,
//     not the rows'), a name and a registration date.
//
// Neither has an integer key, so KeyColumn is -1 and a range predicate on
// the key is evaluated row by row.
func (b *builder) keyed() {
	seed := uint64(b.db.seed)
	day20240101 := decode.DateFromCivil(2024, 1, 1)

	rd := b.newTable("dbo", "readings", []colDef{
		{name: "reading_at", sqlType: "datetime2(7)"},
		{name: "sensor_id", sqlType: "int"},
		{name: "value", sqlType: "decimal(9,3)", nullable: true},
	})
	rd.Key = []string{"reading_at"}
	rd.Indexes = []Index{{Name: "PK_readings", Columns: []string{"reading_at"}, Unique: true, PrimaryKey: true, Clustered: true}}
	rdSalt := mix(seed ^ 0x4EAD)
	rd.rowFn = func(i int64, dst []any) []any {
		h := mix(rdSalt ^ uint64(i)*golden)
		const step = 37_000_017 // ticks between readings; the jitter stays below it
		t := int64(day20240101)*decode.TicksPerDay + i*step + int64(h%1_000_000)
		var v any
		if h>>20&15 != 0 {
			d := dec(int64(h>>24%2_000_000) - 1_000_000)
			d.Precision, d.Scale = 9, 3
			v = d
		}
		return append(dst, decode.DateTime{Days: int32(t / decode.TicksPerDay), Ticks: t % decode.TicksPerDay}, int64(1+h>>40%50), v)
	}

	dv := b.newTable("dbo", "devices", []colDef{
		{name: "device_id", sqlType: "uniqueidentifier"},
		{name: "name", sqlType: "nvarchar(40)"},
		{name: "registered", sqlType: "date"},
	})
	dv.Key = []string{"device_id"}
	dv.Indexes = []Index{{Name: "PK_devices", Columns: []string{"device_id"}, Unique: true, PrimaryKey: true, Clustered: true}}
	dvSalt := mix(seed ^ 0xDE71CE)
	dv.rowFn = func(i int64, dst []any) []any {
		h := mix(dvSalt ^ uint64(i)*golden)
		// 122 random bits per key: no two alike at the row counts tests use.
		return append(dst, guidFrom(h), fmt.Sprintf("%s %d", productNoun[h>>8%uint64(len(productNoun))], i+1),
			decode.Date(day20240101-int32(h>>32%1500)))
	}
}
