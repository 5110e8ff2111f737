package csv

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tdsextract/tdsextract/sinks"
	"github.com/tdsextract/tdsextract/sinks/internal/outfile"
)

// Config is the CSV sink's options (the `csv` section of a job's sink).
// Each field is the option of its tag, documented (with its default and
// allowed values) in Spec, the one declaration of them; a zero field is
// the option's default. Unknown keys are rejected.
type Config struct {
	Path string `mapstructure:"path"`
	// Header is a pointer so that false, unlike nil, is an explicit
	// choice in a Config built in Go.
	Header    *bool  `mapstructure:"header"`
	Dialect   string `mapstructure:"dialect"`
	Delimiter string `mapstructure:"delimiter"`
	Quote     string `mapstructure:"quote"`
	// Null "" (the default) keeps NULL (an empty unquoted field) and the
	// empty string (a quoted "") distinguishable.
	Null string `mapstructure:"null"`
	// LineEnding is given as lf or crlf (or as the bytes); a resolved
	// Config holds the bytes.
	LineEnding   string `mapstructure:"line_ending"`
	BoolFormat   string `mapstructure:"bool_format"`
	BinaryFormat string `mapstructure:"binary_format"`
	Compression  string `mapstructure:"compression"`
	// CompressionLevel's range depends on Compression (check).
	CompressionLevel int   `mapstructure:"compression_level"`
	MaxRows          int64 `mapstructure:"max_rows"`
	// MaxBytes counts CSV bytes before compression; files are cut at row
	// boundaries, so a file may exceed it by one row.
	MaxBytes   int64 `mapstructure:"max_bytes"`
	BufferSize int   `mapstructure:"buffer_size"`
	// IfExists: replace, skip or fail (outfile.IfExistsOption).
	IfExists string `mapstructure:"if_exists"`
}

// StdoutPath as the path writes the CSV to standard output (one extract,
// never split): the rows stream as they arrive, so a failed run may have
// written some of them, and only the exit status says it failed.
const StdoutPath = "-"

// Defaults.
const (
	DefaultPath       = "out/"
	DefaultBufferSize = 256 << 10
)

// Spec declares the csv sink's options: from it come the resolution of a
// job's options (types, allowed values, ranges, defaults), `tdsextract
// sinks csv` and the README's option table. What one option implies for
// another is checked by Config.check.
var Spec = sinks.Spec{
	{Name: "path", Type: sinks.String, Default: DefaultPath,
		Doc: "Output: a directory (existing, or ending in `/`) that gets `<extract>.csv` (`.csv.gz`, `.csv.zst`), or a file template where `{extract}`, `{schema}` and `{table}` are replaced; `-` is standard output (streamed, never split, not atomic)."},
	{Name: "header", Type: sinks.Bool, Default: true, Doc: "Write the column names as the first line of every file."},
	{Name: "dialect", Type: sinks.Enum, Values: []string{"rfc4180", "postgres"}, Default: "rfc4180",
		Doc: "`rfc4180`: NULL is an unquoted empty field, the empty string a quoted `\"\"`. `postgres`: exactly what `COPY ... WITH (FORMAT csv, HEADER true)` reads back (bytea as `\\x` hex, vector as a `{..}` array literal)."},
	{Name: "delimiter", Type: sinks.String, Default: ",",
		Doc: "The field separator: one byte that is not a letter, digit, space, newline or one of `+-.:/=\\{}[]`."},
	{Name: "quote", Type: sinks.String, Default: `"`,
		Doc: "The quote character, one byte like the delimiter and not the same; a quote inside a quoted field is doubled."},
	{Name: "null", Type: sinks.String, Default: "",
		Doc: "The text of NULL, unquoted; a value equal to a non-empty token (e.g. `\\N`) is quoted so it never reads back as NULL."},
	{Name: "line_ending", Type: sinks.Enum, Values: []string{"lf", "crlf"}, Aliases: map[string]string{"\n": "lf", "\r\n": "crlf"},
		Default: "lf", Doc: "Line ending: `lf` (`\\n`) or `crlf` (`\\r\\n`)."},
	{Name: "bool_format", Type: sinks.Enum, Values: []string{"true_false", "1_0"}, Default: "true_false", Doc: "bit as `true`/`false` or as `1`/`0`."},
	{Name: "binary_format", Type: sinks.Enum, Values: []string{"hex", "hex_prefixed", "base64"}, Default: "hex",
		DefaultDoc: "`hex`; `hex_prefixed` in the postgres dialect",
		Doc:        "Binary values as lower-case hex, as `\\x` then hex (PostgreSQL bytea input; always so in the postgres dialect) or as padded standard base64."},
	{Name: "compression", Type: sinks.Enum, Values: []string{"none", "gzip", "zstd"}, Default: "none",
		Doc: "Compress the files; `.gz` or `.zst` is appended to their names."},
	{Name: "compression_level", Type: sinks.Int, Default: int64(0), Range: &sinks.Range{Min: 0, Max: 9},
		Doc: "gzip 1..9 or zstd 1..4 (fastest..best); 0 is the library's default."},
	{Name: "max_rows", Type: sinks.Int, Default: int64(0), Range: &sinks.Range{Min: 0, Max: 1<<63 - 1},
		Doc: "Split into numbered files (`name.0001.csv`, ...) of at most this many data rows; 0 for no limit."},
	{Name: "max_bytes", Type: sinks.Size, Default: int64(0), Range: &sinks.Range{Min: 0, Max: 1<<63 - 1},
		Doc: "Start the next numbered file once a file holds this many CSV bytes (before compression, cut at a row boundary); 0 for no limit."},
	{Name: "buffer_size", Type: sinks.Size, Default: int64(DefaultBufferSize), Range: &sinks.Range{Min: 4 << 10, Max: 64 << 20},
		Doc: "The line buffer, written to the file or compressor when full."},
	outfile.IfExistsOption,
}

// ParseConfig resolves options against Spec (every problem reported, each
// naming its key), decodes them into a Config and checks what one option
// implies for another.
func ParseConfig(options map[string]any) (Config, error) {
	resolved, err := Spec.Resolve(options)
	if err != nil {
		return Config{}, err
	}
	var c Config
	if err := sinks.DecodeOptions(resolved, &c); err != nil {
		return Config{}, fmt.Errorf("csv: %w", err)
	}
	c.normalise()
	return c, c.check()
}

// normalise applies the rules that follow from resolved options: the
// line ending as its bytes, and the postgres dialect's bytea format.
func (c *Config) normalise() {
	switch c.LineEnding {
	case "lf":
		c.LineEnding = "\n"
	case "crlf":
		c.LineEnding = "\r\n"
	}
	if c.Dialect == "postgres" {
		c.BinaryFormat = "hex_prefixed"
	}
}

// notSeparator lists bytes that appear in the text of typed values
// (numbers, dates, hex, base64): a delimiter or quote among them would make
// unquoted typed fields ambiguous.
const notSeparator = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+-.:/=\\ {}[]"

// check checks what the spec cannot, one option against another; each
// problem is an *sinks.OptionError naming the key.
func (c *Config) check() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, &sinks.OptionError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	separator := func(key, v string) {
		if len(v) != 1 || strings.ContainsAny(v, notSeparator+"\r\n\x00") {
			bad(key, "%q: use one byte that is not a letter, digit, space, newline or one of +-.:/=\\{}[]", v)
		}
	}
	separator("delimiter", c.Delimiter)
	separator("quote", c.Quote)
	if c.Quote == c.Delimiter {
		bad("quote", "%q is also the delimiter: they must differ", c.Quote)
	}
	if strings.ContainsAny(c.Null, c.Delimiter+c.Quote+"\r\n") {
		bad("null", "%q contains the delimiter, the quote or a newline", c.Null)
	}
	if c.Compression == "zstd" && c.CompressionLevel > 4 {
		bad("compression_level", "%d: zstd takes 1..4 (0 = default)", c.CompressionLevel)
	}
	if c.Path == StdoutPath && (c.MaxRows > 0 || c.MaxBytes > 0) {
		key := "max_rows"
		if c.MaxRows == 0 {
			key = "max_bytes"
		}
		bad(key, "standard output (path %q) is one stream: it cannot be split into numbered files", StdoutPath)
	}
	return errors.Join(errs...)
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
