// Package catalog is what tdsextract knows of a SQL Server database before
// it reads rows: how a table's columns are described, which columns are
// exported through a default conversion (spatial types as WKB, hierarchyid
// as text), and the SELECT and COUNT a table extract runs. It asks the
// server over an engine/session connection and knows nothing of sinks.
package catalog
