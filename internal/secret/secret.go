package secret

import (
	"fmt"
	"log/slog"
)

// redacted is what a non-empty Secret prints as, everywhere.
const redacted = "[REDACTED]"

// Secret is a credential (a password, an access token). It redacts itself
// in every way Go code usually prints a value: fmt verbs (%v %s %q %x %#v ...),
// String, GoString, JSON, text marshalling and slog. Only Reveal returns the
// value, so that a Secret reaching a log or an error message by accident
// prints "[REDACTED]" (an empty Secret prints as "" so that "not set" stays
// visible in diagnostics).
type Secret string

// Reveal returns the secret's value. Call it only where the value is put on
// the wire.
func (s Secret) Reveal() string { return string(s) }

// IsSet reports whether the secret is non-empty.
func (s Secret) IsSet() bool { return s != "" }

func (s Secret) shown() string {
	if s == "" {
		return ""
	}
	return redacted
}

// String implements fmt.Stringer.
func (s Secret) String() string { return s.shown() }

// GoString implements fmt.GoStringer (%#v).
func (s Secret) GoString() string { return fmt.Sprintf("secret.Secret(%q)", s.shown()) }

// Format implements fmt.Formatter so that no verb (not %x, not %q, not %d)
// can print the underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v':
		if f.Flag('#') {
			_, _ = f.Write([]byte(s.GoString()))
			return
		}
	case 'q':
		_, _ = fmt.Fprintf(f, "%q", s.shown())
		return
	}
	_, _ = f.Write([]byte(s.shown()))
}

// MarshalJSON implements json.Marshaler.
func (s Secret) MarshalJSON() ([]byte, error) {
	return []byte(`"` + s.shown() + `"`), nil
}

// MarshalText implements encoding.TextMarshaler (YAML, TOML, text encoders).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.shown()), nil }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }
