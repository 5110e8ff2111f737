package parquet

import (
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/outfile"
)

// Config is the Parquet sink's options. Unknown keys are rejected.
type Config struct {
	// Path is the output: a directory (existing, or ending in "/") that gets
	// "<extract>.parquet", or a file template where "{extract}", "{schema}"
	// and "{table}" are replaced. Default "out/".
	Path string `mapstructure:"path"`
	// RowGroupBytes ends a row group once the sink's batch holds this many
	// bytes (values as held in memory: 8 bytes per fixed-width value plus
	// the bytes of variable-length values). Default 32 MiB: small enough
	// that decoding the next row group overlaps encoding this one (128 MiB
	// left lineitem and poc48 of 500,000 rows in one or two row groups, so
	// the two barely overlapped), large enough that a dictionary per row
	// group costs little (lineitem: 1.7% larger than at 128 MiB).
	RowGroupBytes int64 `mapstructure:"row_group_bytes"`
	// RowGroupRows also ends a row group after this many rows. 0 = no limit.
	RowGroupRows int64 `mapstructure:"row_group_rows"`
	// PageBytes is the target size of a data page before compression.
	// Default 256 KiB.
	PageBytes int `mapstructure:"page_bytes"`
	// Compression is "zstd" (default), "snappy", "gzip" or "none".
	Compression string `mapstructure:"compression"`
	// CompressionLevel is the zstd level 1..4 (fastest..best; 0 = 1, see
	// zstdCodec) or the gzip level 1..9 (0 = the library default).
	CompressionLevel int `mapstructure:"compression_level"`
	// Dictionary is "auto" (default: every column gets the encoding that
	// comes out smallest after compression on a sample of the first row
	// group, a dictionary among the candidates; see choose.go), "all" (as
	// auto, but every string and binary column gets a dictionary) or
	// "none" (as auto without dictionaries).
	Dictionary string `mapstructure:"dictionary"`
	// PageStatistics writes min/max statistics in every data page header
	// (they cost about half the uncompressed throughput; column chunk
	// statistics and the page index are written either way). Default false.
	PageStatistics bool `mapstructure:"page_statistics"`
	// OffsetColumn adds, after each datetimeoffset column, an INT16 column
	// "<name>__offset_minutes" holding the value's original offset, so
	// the local time can be rebuilt from the UTC-adjusted TIMESTAMP.
	// Default true.
	OffsetColumn *bool `mapstructure:"offset_column"`
	// VariantTypeColumn adds, after each sql_variant column, a STRING
	// column "<name>__type" holding the base type of each value as T-SQL
	// spells it (e.g. "int", "nvarchar(20)", "datetime2(7)"); the value
	// itself is stored as text. Default true.
	VariantTypeColumn *bool `mapstructure:"variant_type_column"`
	// TimestampUnit is the unit of datetime2 and datetimeoffset TIMESTAMPs:
	// "micros" (default) covers every SQL Server date and is what Spark,
	// BigQuery, DuckDB, pyarrow and Polars read; scale 7 loses its 100 ns
	// digit, truncated (never rounded, which could carry 9999-12-31
	// 23:59:59.9999999 into year 10000) and reported lossy by the mapping.
	// "nanos" keeps the digit but covers only 1677-09-21 .. 2262-04-11: a
	// value outside fails the run with an error naming column and row.
	TimestampUnit string `mapstructure:"timestamp_unit"`
	// MaxRows splits the output into numbered files (name.0001.parquet, ...)
	// of at most this many rows. 0 = no limit.
	MaxRows int64 `mapstructure:"max_rows"`
	// MaxBytes starts a new numbered file once a file's committed row groups
	// reach this many (compressed) bytes; files are cut at row-group
	// boundaries, so choose row_group_bytes well below it. 0 = no limit.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// Parallel is how many row groups are encoded and compressed at the same
	// time, each by its own goroutine, while decoding fills the next batch.
	// Memory is about (parallel+1) × row_group_bytes plus the compressed
	// row groups in flight. Default: 1 on machines with up to 2 CPUs, else 2.
	Parallel int `mapstructure:"parallel"`
	// PartitionBy writes hive-style partitions: each row goes to a file
	// <root>/<col>=<value>/.../part-0001.parquet, where <root> is
	// "<path>/<extract>" when path is a directory (existing, or ending in
	// "/") and the templated path itself otherwise. Values are written as
	// Hive writes them: integers and strings as text, bit as true/false,
	// date as YYYY-MM-DD, uniqueidentifier canonical; characters Hive
	// escapes become %XX; NULL and the empty string become
	// __HIVE_DEFAULT_PARTITION__. Partition columns must be bit, integer,
	// date, uniqueidentifier or non-LOB char/varchar/nchar/nvarchar.
	PartitionBy []string `mapstructure:"partition_by"`
	// PartitionColumnsInFile also stores the partition columns in the
	// files. Default false: Hive, Spark, Trino and DuckDB (hive
	// partitioning) rebuild them from the directory names.
	PartitionColumnsInFile bool `mapstructure:"partition_columns_in_file"`
	// MaxOpenPartitions caps the partitions with an open file and a
	// buffer; a row for another partition first closes the least recently
	// used one (its rows so far are flushed and its file finished; a later
	// row for it starts the next numbered file, part-0002.parquet, ...).
	// Default 32.
	MaxOpenPartitions int `mapstructure:"max_open_partitions"`
	// PartitionBufferBytes caps the rows buffered across all open
	// partitions (counted like row_group_bytes); when exceeded, the
	// partition holding the most is written out as a row group. Default:
	// row_group_bytes.
	PartitionBufferBytes int64 `mapstructure:"partition_buffer_bytes"`
	// IfExists: replace, skip or fail (outfile.IfExistsOption), as for
	// csv; with partition_by the output is the partition root directory.
	IfExists string `mapstructure:"if_exists"`
}

// Defaults.
const (
	DefaultPath          = "out/"
	DefaultRowGroupBytes = 32 << 20
	DefaultPageBytes     = 256 << 10
	// DefaultMaxOpenPartitions is max_open_partitions' default.
	DefaultMaxOpenPartitions = 32
)

// options declares every option of the sink: the job file's validation,
// the defaults, `tdsextract sinks parquet` and the README's table come
// from it. Cross-field rules (partition options need partition_by, the
// compression level's range per codec) are checked by Config.Validate.
var options = sinks.Spec{
	{Name: "path", Type: sinks.String, Default: DefaultPath,
		Doc: "Output: a directory (existing, or ending in `/`) that gets `<extract>.parquet`, or a file template where `{extract}`, `{schema}` and `{table}` are replaced."},
	{Name: "compression", Type: sinks.Enum, Default: "zstd", Values: []string{"zstd", "snappy", "gzip", "none"},
		Doc: "Page compression codec."},
	{Name: "compression_level", Range: &sinks.Range{Min: 0, Max: 9}, Type: sinks.Int, DefaultDoc: "0 (zstd: 1; gzip: the library default)",
		Doc: "zstd 1..4 (fastest, default, better, best; literals are always entropy coded, so 1 already compresses integer pages to about 73%) or gzip 1..9; 0 takes the codec's default."},
	{Name: "dictionary", Type: sinks.Enum, Default: "auto", Values: []string{"auto", "all", "none"},
		Doc: "auto: every column gets the encoding (dictionary, delta, byte-stream-split or plain) that comes out smallest after compression on a sample of the first row group; all: as auto, but every string and binary column gets a dictionary; none: no dictionaries."},
	{Name: "row_group_bytes", Range: &sinks.Range{Min: 1 << 10, Max: 2 << 30}, Type: sinks.Size, Default: int64(DefaultRowGroupBytes),
		Doc: "A row group ends once the sink's batch holds this many bytes (8 per fixed-width value plus the bytes of variable-length values); wide tables get fewer rows per group, not more memory."},
	{Name: "row_group_rows", Range: &sinks.Range{Min: 0, Max: math.MaxInt64}, Type: sinks.Int, Default: int64(0),
		Doc: "A row group also ends after this many rows; 0 = no limit."},
	{Name: "page_bytes", Range: &sinks.Range{Min: 1 << 10, Max: 64 << 20}, Type: sinks.Size, Default: int64(DefaultPageBytes),
		Doc: "Target size of a data page before compression."},
	{Name: "page_statistics", Type: sinks.Bool, Default: false,
		Doc: "Write min/max statistics in every data page header too (column chunk statistics and the page index are written either way)."},
	{Name: "timestamp_unit", Type: sinks.Enum, Default: "micros", Values: []string{"micros", "nanos"},
		Doc: "Unit of datetime2 and datetimeoffset TIMESTAMPs. micros covers every SQL Server date (the 100 ns digit of scale 7 is truncated, reported lossy); nanos keeps it but covers only 1677-09-21..2262-04-11: a value outside fails the run, naming column and row."},
	{Name: "offset_column", Type: sinks.Bool, Default: true,
		Doc: "Add an INT16 column `<name>__offset_minutes` after each datetimeoffset column with the value's original UTC offset."},
	{Name: "variant_type_column", Type: sinks.Bool, Default: true,
		Doc: "Add a STRING column `<name>__type` after each sql_variant column with each value's base type as T-SQL spells it."},
	{Name: "max_rows", Range: &sinks.Range{Min: 0, Max: math.MaxInt64}, Type: sinks.Int, Default: int64(0),
		Doc: "Split the output into numbered files `name.0001.parquet`, ... of at most this many rows; 0 = no limit."},
	{Name: "max_bytes", Range: &sinks.Range{Min: 0, Max: math.MaxInt64}, Type: sinks.Size, Default: int64(0),
		Doc: "Start a new numbered file once a file's row groups reach this many compressed bytes (cut at row-group boundaries); 0 = no limit."},
	{Name: "parallel", Range: &sinks.Range{Min: 1, Max: 64}, Type: sinks.Int, DefaultDoc: "1 on up to 2 CPUs, else 2",
		Doc: "Row groups encoding at once (each by one goroutine per CPU) while decoding fills the next; memory is about (parallel+2) × row_group_bytes."},
	{Name: "partition_by", Type: sinks.List, Default: []string{},
		Doc: "Hive-style partitions `<root>/<col>=<value>/.../part-0001.parquet` by these columns (bit, integer, date, uniqueidentifier or non-LOB char/varchar/nchar/nvarchar)."},
	{Name: "partition_columns_in_file", Type: sinks.Bool, Default: false,
		Doc: "Also store the partition columns in the files (readers rebuild them from the directory names)."},
	{Name: "max_open_partitions", Range: &sinks.Range{Min: 1, Max: 100000}, Type: sinks.Int, DefaultDoc: "32 (with partition_by)",
		Doc: "Partitions with an open file and buffer; a row for another first closes the least recently used."},
	{Name: "partition_buffer_bytes", Range: &sinks.Range{Min: 1 << 10, Max: math.MaxInt64}, Type: sinks.Size, DefaultDoc: "row_group_bytes (with partition_by)",
		Doc: "Cap on the rows buffered across all open partitions; beyond it the largest is written out as a row group."},
	outfile.IfExistsOption,
}

// Options returns the declared options of the sink (a copy).
func Options() sinks.Spec { return append(sinks.Spec(nil), options...) }

// ParseConfig resolves options against the declared spec (unknown keys,
// wrong types and values outside an enum are errors naming the key),
// decodes them into a Config, applies the defaults that depend on other
// options or the machine, and validates.
func ParseConfig(opts map[string]any) (Config, error) {
	var c Config
	resolved, err := options.Resolve(opts)
	if err != nil {
		return c, fmt.Errorf("parquet: %w", err)
	}
	if err := sinks.DecodeOptions(resolved, &c); err != nil {
		return c, fmt.Errorf("parquet: %w", err)
	}
	c.applyDefaults()
	return c, c.Validate()
}

func (c *Config) applyDefaults() {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.RowGroupBytes == 0 {
		c.RowGroupBytes = DefaultRowGroupBytes
	}
	if c.PageBytes == 0 {
		c.PageBytes = DefaultPageBytes
	}
	c.Compression = strings.ToLower(c.Compression)
	if c.Compression == "" {
		c.Compression = "zstd"
	}
	if c.Dictionary == "" {
		c.Dictionary = "auto"
	}
	if c.OffsetColumn == nil {
		t := true
		c.OffsetColumn = &t
	}
	if c.VariantTypeColumn == nil {
		t := true
		c.VariantTypeColumn = &t
	}
	c.TimestampUnit = strings.ToLower(c.TimestampUnit)
	if c.TimestampUnit == "" {
		c.TimestampUnit = "micros"
	}
	if len(c.PartitionBy) > 0 {
		if c.MaxOpenPartitions == 0 {
			c.MaxOpenPartitions = DefaultMaxOpenPartitions
		}
		if c.PartitionBufferBytes == 0 {
			c.PartitionBufferBytes = c.RowGroupBytes
		}
	}
	if c.Parallel == 0 {
		c.Parallel = 1
		if runtime.GOMAXPROCS(0) > 2 {
			c.Parallel = 2
		}
	}
}

// Validate checks a config (after defaults).
func (c *Config) Validate() error {
	if c.RowGroupBytes < 1<<10 || c.RowGroupBytes > 2<<30 {
		return fmt.Errorf("parquet: row_group_bytes %d: use 1 KiB .. 2 GiB", c.RowGroupBytes)
	}
	if c.RowGroupRows < 0 || c.MaxRows < 0 || c.MaxBytes < 0 {
		return fmt.Errorf("parquet: row_group_rows, max_rows and max_bytes must be >= 0 (0 = no limit)")
	}
	if c.PageBytes < 1<<10 || c.PageBytes > 64<<20 {
		return fmt.Errorf("parquet: page_bytes %d: use 1 KiB .. 64 MiB", c.PageBytes)
	}
	switch c.Compression {
	case "zstd":
		if c.CompressionLevel < 0 || c.CompressionLevel > 4 {
			return fmt.Errorf("parquet: compression_level %d: zstd takes 1..4 (0 = default)", c.CompressionLevel)
		}
	case "gzip":
		if c.CompressionLevel < 0 || c.CompressionLevel > 9 {
			return fmt.Errorf("parquet: compression_level %d: gzip takes 1..9 (0 = default)", c.CompressionLevel)
		}
	case "snappy", "none":
	default:
		return fmt.Errorf("parquet: compression %q: use \"zstd\", \"snappy\", \"gzip\" or \"none\"", c.Compression)
	}
	switch c.TimestampUnit {
	case "micros", "nanos":
	default:
		return fmt.Errorf("parquet: timestamp_unit %q: use \"micros\" or \"nanos\"", c.TimestampUnit)
	}
	switch c.Dictionary {
	case "auto", "all", "none":
	default:
		return fmt.Errorf("parquet: dictionary %q: use \"auto\", \"all\" or \"none\"", c.Dictionary)
	}
	if c.Parallel < 1 || c.Parallel > 64 {
		return fmt.Errorf("parquet: parallel %d: use 1 .. 64", c.Parallel)
	}
	seen := map[string]bool{}
	for _, p := range c.PartitionBy {
		if p == "" {
			return fmt.Errorf("parquet: partition_by: empty column name")
		}
		if seen[strings.ToLower(p)] {
			return fmt.Errorf("parquet: partition_by: column %q listed twice", p)
		}
		seen[strings.ToLower(p)] = true
	}
	if len(c.PartitionBy) > 0 {
		if c.MaxOpenPartitions < 1 || c.MaxOpenPartitions > 100000 {
			return fmt.Errorf("parquet: max_open_partitions %d: use 1 .. 100000", c.MaxOpenPartitions)
		}
		if c.PartitionBufferBytes < 1<<10 {
			return fmt.Errorf("parquet: partition_buffer_bytes %d: use at least 1 KiB", c.PartitionBufferBytes)
		}
	} else if c.PartitionColumnsInFile || c.MaxOpenPartitions != 0 || c.PartitionBufferBytes != 0 {
		return fmt.Errorf("parquet: partition_columns_in_file, max_open_partitions and partition_buffer_bytes need partition_by")
	}
	return nil
}
