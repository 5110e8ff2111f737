// Package partition splits a table extract into key ranges that run as
// independent units: on the table's clustered key (auto) or a named
// column, into a given number of ranges between the column's MIN and MAX
// (engine/catalog reads them: two seeks on an indexed column), or as a
// list of predicates the user writes.
//
// Every range is a predicate whose bounds are sp_executesql parameters
// (@tdsx_lo, @tdsx_hi), never text formatted into the SQL: the statement
// text is the same for every range, so SQL Server compiles one plan, and no
// value can change the statement. The first range is open below and the
// last open above, so rows inserted beyond the extremes after planning are
// still in a range; a nullable column gets one more range, "IS NULL",
// because NULL satisfies no comparison and would otherwise be lost. No
// range needs an ORDER BY.
//
// Integer and date/time keys are cut evenly over their value span.
// uniqueidentifier keys are cut evenly over the most significant 8 bytes
// of SQL Server's own order (decode.GUID.SQLServerOrderKey), since a cut in
// text or RFC byte order would give ranges that interleave on the server.
//
// Character keys (char, varchar, nchar, nvarchar) have no span to cut, and
// their order is the collation's, which the client cannot reproduce (a
// case-insensitive collation holds 'abc' and 'ABC' equal, every collation
// ignores trailing blanks, and Windows collations sort linguistically).
// They are always cut at sampled quantiles, and the server does the
// ordering (ordered.go): the sample is read grouped and sorted on the key,
// one row per value equal under the collation with its row count, so the
// bounds are strictly increasing in the server's own order and no two
// compare equal there; the client only counts. Each bound goes out in the
// column's own type and collation, so the server compares it as it
// compares the column's values and seeks the column's index; a char or
// varchar bound beyond ASCII is kept only when the column's code page is
// the database's, since SQL Server converts the text of a varchar
// parameter to the database's code page, and a bound the client could not
// decode exactly (U+FFFD in its text) is dropped. Decimal keys
// with a scale or more than 18 digits are cut the same way (their bounds
// are decimal parameters of the column's precision and scale).
//
// Even cuts are uneven parts on a skewed key. With Boundaries sample
// (sample.go) the cuts are quantiles of a sample of the key read with
// TABLESAMPLE (or of every key, when the table is no larger than the
// sample), sorted client-side in the same order; the bounds are sampled
// values, equal quantiles collapse into one bound, and a bound is never
// the smallest key sampled, so no part of a plan from every key is empty.
// Whatever the sample, every row is in exactly one part: the parts are
// the server's own comparisons against non-decreasing bounds.
package partition
