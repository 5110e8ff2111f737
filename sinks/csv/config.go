package csv

import (
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/sinks"
)

// Config is the CSV sink's options (the `csv` section of a job's sink).
// Every field has a documented default; unknown keys are rejected.
type Config struct {
	// Path is the output: a directory (existing, or ending in "/") that gets
	// "<extract>.csv[.gz|.zst]", or a file template where "{extract}",
	// "{schema}" and "{table}" are replaced. Default "out/".
	Path string `mapstructure:"path"`
	// Header writes the column names as the first line of every file.
	// Default true.
	Header *bool `mapstructure:"header"`
	// Dialect is "rfc4180" (default) or "postgres": output that
	// PostgreSQL's COPY t FROM ... WITH (FORMAT csv, HEADER true) reads back
	// exactly (bytea as \x hex, vector as a {..} array literal, NULL an
	// unquoted empty field, the empty string a quoted "").
	Dialect string `mapstructure:"dialect"`
	// Delimiter is the one-byte field separator. Default ",".
	Delimiter string `mapstructure:"delimiter"`
	// Quote is the one-byte quote character; a quote inside a quoted field
	// is doubled (RFC 4180). Default "\"".
	Quote string `mapstructure:"quote"`
	// Null is the text written for NULL, unquoted. Default "": NULL is an
	// empty unquoted field and an empty string is written as a quoted "",
	// so the two stay distinguishable. A value equal to a non-empty Null
	// token (e.g. "\N") is quoted so it never reads back as NULL.
	Null string `mapstructure:"null"`
	// LineEnding is "\n" (default; also "lf") or "\r\n" (also "crlf").
	LineEnding string `mapstructure:"line_ending"`
	// BoolFormat is "true_false" (default: true/false) or "1_0" (1/0).
	BoolFormat string `mapstructure:"bool_format"`
	// BinaryFormat is "hex" (lower-case, default), "hex_prefixed" (\x then
	// hex, PostgreSQL bytea input) or "base64" (standard, padded). The
	// postgres dialect always uses "hex_prefixed".
	BinaryFormat string `mapstructure:"binary_format"`
	// Compression is "none" (default), "gzip" (.gz appended) or "zstd"
	// (.zst appended).
	Compression string `mapstructure:"compression"`
	// CompressionLevel is the gzip level 1..9 or the zstd level 1..4
	// (fastest..best); 0 picks the library default.
	CompressionLevel int `mapstructure:"compression_level"`
	// MaxRows splits the output into numbered files (name.0001.csv,
	// name.0002.csv, ...) of at most this many data rows. 0 = no limit.
	MaxRows int64 `mapstructure:"max_rows"`
	// MaxBytes splits the output into numbered files once a file holds at
	// least this many CSV bytes (counted before compression; files are cut
	// at row boundaries, so a file may exceed it by one row). 0 = no limit.
	MaxBytes int64 `mapstructure:"max_bytes"`
	// BufferSize is the size of the sink's line buffer, flushed to the file
	// (or compressor) when full. Default 256 KiB.
	BufferSize int `mapstructure:"buffer_size"`
}

// Defaults.
const (
	DefaultPath       = "out/"
	DefaultBufferSize = 256 << 10
)

// ParseConfig decodes options strictly and validates them, applying defaults.
func ParseConfig(options map[string]any) (Config, error) {
	var c Config
	if err := sinks.DecodeOptions(options, &c); err != nil {
		return c, fmt.Errorf("csv: %w", err)
	}
	c.applyDefaults()
	return c, c.Validate()
}

func (c *Config) applyDefaults() {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.Header == nil {
		t := true
		c.Header = &t
	}
	if c.Dialect == "" {
		c.Dialect = "rfc4180"
	}
	if c.Delimiter == "" {
		c.Delimiter = ","
	}
	if c.Quote == "" {
		c.Quote = `"`
	}
	switch strings.ToLower(c.LineEnding) {
	case "", "lf", "\n":
		c.LineEnding = "\n"
	case "crlf", "\r\n":
		c.LineEnding = "\r\n"
	}
	if c.BoolFormat == "" {
		c.BoolFormat = "true_false"
	}
	if c.Dialect == "postgres" {
		c.BinaryFormat = "hex_prefixed"
	}
	if c.BinaryFormat == "" {
		c.BinaryFormat = "hex"
	}
	if c.Compression == "" {
		c.Compression = "none"
	}
	if c.BufferSize == 0 {
		c.BufferSize = DefaultBufferSize
	}
}

// notSeparator lists bytes that appear in the text of typed values
// (numbers, dates, hex, base64): a delimiter or quote among them would make
// unquoted typed fields ambiguous.
const notSeparator = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+-.:/=\\ {}[]"

// Validate checks a config (after defaults).
func (c *Config) Validate() error {
	if c.Dialect != "rfc4180" && c.Dialect != "postgres" {
		return fmt.Errorf("csv: dialect %q: use \"rfc4180\" or \"postgres\"", c.Dialect)
	}
	if len(c.Delimiter) != 1 || strings.ContainsAny(c.Delimiter, notSeparator+"\r\n\x00") {
		return fmt.Errorf("csv: delimiter %q: use one byte that is not a letter, digit, space, newline or one of +-.:/=\\{}[]", c.Delimiter)
	}
	if len(c.Quote) != 1 || strings.ContainsAny(c.Quote, notSeparator+"\r\n\x00") {
		return fmt.Errorf("csv: quote %q: use one byte that is not a letter, digit, space, newline or one of +-.:/=\\{}[]", c.Quote)
	}
	if c.Quote == c.Delimiter {
		return fmt.Errorf("csv: quote and delimiter are both %q: they must differ", c.Quote)
	}
	if strings.ContainsAny(c.Null, c.Delimiter+c.Quote+"\r\n") {
		return fmt.Errorf("csv: null token %q contains the delimiter, the quote or a newline", c.Null)
	}
	if c.LineEnding != "\n" && c.LineEnding != "\r\n" {
		return fmt.Errorf("csv: line_ending %q: use \"\\n\" (lf) or \"\\r\\n\" (crlf)", c.LineEnding)
	}
	if c.BoolFormat != "true_false" && c.BoolFormat != "1_0" {
		return fmt.Errorf("csv: bool_format %q: use \"true_false\" or \"1_0\"", c.BoolFormat)
	}
	switch c.BinaryFormat {
	case "hex", "hex_prefixed", "base64":
	default:
		return fmt.Errorf("csv: binary_format %q: use \"hex\", \"hex_prefixed\" or \"base64\"", c.BinaryFormat)
	}
	switch c.Compression {
	case "none":
	case "gzip":
		if c.CompressionLevel < 0 || c.CompressionLevel > 9 {
			return fmt.Errorf("csv: compression_level %d: gzip takes 1..9 (0 = default)", c.CompressionLevel)
		}
	case "zstd":
		if c.CompressionLevel < 0 || c.CompressionLevel > 4 {
			return fmt.Errorf("csv: compression_level %d: zstd takes 1..4 (0 = default)", c.CompressionLevel)
		}
	default:
		return fmt.Errorf("csv: compression %q: use \"none\", \"gzip\" or \"zstd\"", c.Compression)
	}
	if c.MaxRows < 0 || c.MaxBytes < 0 {
		return fmt.Errorf("csv: max_rows and max_bytes must be >= 0 (0 = no split)")
	}
	if c.BufferSize < 4<<10 || c.BufferSize > 64<<20 {
		return fmt.Errorf("csv: buffer_size %d: use 4 KiB .. 64 MiB", c.BufferSize)
	}
	return nil
}

// ext is the file extension for the configured compression.
func (c *Config) ext() string {
	switch c.Compression {
	case "gzip":
		return ".csv.gz"
	case "zstd":
		return ".csv.zst"
	}
	return ".csv"
}
