package decode

// SQL Server does not order uniqueidentifier values by their text or by
// their RFC 4122 bytes. It compares the 16 bytes as stored (the wire's
// mixed-endian order: the first three groups little-endian) in this order
// of significance: bytes 10-15 first, then 8-9, then 6-7, then 4-5, then
// 0-3, each group left to right. In the canonical text form
// aabbccdd-eeff-gghh-iijj-kkllmmnnoopp that is kk ll mm nn oo pp (the last
// group) first, then ii jj, then hh gg, then ff ee, then dd cc bb aa. A key
// range on a uniqueidentifier column (a partition of a table clustered on
// one) must be cut in this order, or its pieces overlap and miss rows.

// guidOrder lists, most significant first, the indexes into a GUID (RFC
// 4122 byte order, as decode.GUID holds it) that SQL Server compares.
var guidOrder = [16]int{10, 11, 12, 13, 14, 15, 8, 9, 7, 6, 5, 4, 3, 2, 1, 0}

// SQLServerOrderKey returns g's bytes in the order of significance SQL
// Server sorts uniqueidentifier values by, so that comparing two keys as
// byte strings (bytes.Compare) compares the GUIDs as SQL Server does.
func (g GUID) SQLServerOrderKey() [16]byte {
	var k [16]byte
	for i, j := range guidOrder {
		k[i] = g[j]
	}
	return k
}

// GUIDFromSQLServerOrderKey is the inverse of GUID.SQLServerOrderKey.
func GUIDFromSQLServerOrderKey(k [16]byte) GUID {
	var g GUID
	for i, j := range guidOrder {
		g[j] = k[i]
	}
	return g
}

// CompareGUID compares a and b as SQL Server orders uniqueidentifier
// values: -1, 0 or +1.
func CompareGUID(a, b GUID) int {
	for _, j := range guidOrder {
		switch {
		case a[j] < b[j]:
			return -1
		case a[j] > b[j]:
			return 1
		}
	}
	return 0
}
