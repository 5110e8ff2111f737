package sqlexec

import (
	"os"
	"testing"
)

// fuzzTrace names a file that receives each input before it runs (to
// find an input that stalls): SQLEXEC_FUZZ_TRACE=/tmp/in.sql.
var fuzzTrace = os.Getenv("SQLEXEC_FUZZ_TRACE")

// FuzzExec runs arbitrary batches: no panic, no unbounded work. Row
// budgets are lowered so every input finishes quickly; each result is
// drained for a bounded number of calls.
func FuzzExec(f *testing.F) {
	seeds := []string{
		"SELECT 1", "select @@spid spid", "set textsize 4096 ", "SELECT @@VERSION", "SELECT DB_NAME()",
		"SET FMTONLY ON SELECT * FROM dbo.poc48 SET FMTONLY OFF",
		"SELECT TOP (5) * FROM dbo.poc48 WHERE id >= 10 AND id < 20 ORDER BY id DESC",
		"SELECT COUNT_BIG(*) FROM poc48 WHERE id IN (1, 5, 9) OR id BETWEEN 100 AND 200",
		"SELECT MIN(id), MAX(id) FROM dbo.odbc5 WHERE NOT id > 100",
		"SELECT id, name FROM odbc5 WHERE id < 50 AND name LIKE '%a_[b-d]%' ORDER BY name",
		"SELECT convert(varchar(30), ts, 126), convert(varchar(35), tso, 127), cast(id as numeric(20)) FROM dbo.temporal WHERE id < 5",
		"SELECT [c_geography].STAsBinary(), [c_hierarchyid].ToString() FROM dbo.type_matrix",
		"SELECT CAST('2024-01-01' AS date), CAST(1.5 AS int), 1/0, 'a' + 1",
		"SELECT * FROM nosuch", "EXEC sp_executesql N'SELECT @a', N'@a int', @a = 1", "USE master; USE sample",
		"SELECT a.name, COUNT(*) FROM sys.tables a JOIN sys.columns b ON a.object_id = b.object_id GROUP BY a.name",
		"SELECT DISTINCT TOP 3 country FROM sales.customers ORDER BY 1 DESC",
		pgloaderSetup, pgloaderColumnsQuery, pgloaderIndexesQuery, pgloaderFKeysQuery,
		"SELECT 'unterminated", "SELECT [x", "/* x", "SELECT CASE WHEN", "SELECT ((((1))))",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	db := sampleDB()
	f.Fuzz(func(t *testing.T, sql string) {
		if len(sql) > 4096 {
			return
		}
		if fuzzTrace != "" {
			_ = os.WriteFile(fuzzTrace, []byte(sql), 0o644)
		}
		s := NewSession(db)
		s.ScanLimit = 20_000
		results, _ := s.Exec(sql, []Param{{Name: "p1", Value: int64(3)}, {Name: "@s", Value: "x"}})
		for _, r := range results {
			if r.Rows == nil {
				continue
			}
			var buf []byte
			for calls := 0; calls < 20; calls++ {
				var done bool
				buf, _, done = r.Rows.AppendRows(buf[:0], 50, calls%2 == 0)
				if done {
					break
				}
			}
		}
	})
}
