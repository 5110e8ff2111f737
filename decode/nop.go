package decode

// Nop is a CellSink that takes every call and keeps nothing: every column
// is delivered as values (Columns leaves the modes as they are) and
// Reserve declines, so variable-length values arrive as borrowed Writes.
// Embed it in a sink that wants only some of the calls.
type Nop struct{}

var _ CellSink = Nop{}

func (Nop) Columns([]Column, []Mode) error     { return nil }
func (Nop) Null(int)                           {}
func (Nop) Bool(int, bool)                     {}
func (Nop) Int(int, int64)                     {}
func (Nop) Float32(int, float32)               {}
func (Nop) Float64(int, float64)               {}
func (Nop) Decimal(int, Decimal)               {}
func (Nop) Money(int, int64)                   {}
func (Nop) Date(int, int32)                    {}
func (Nop) Time(int, int64)                    {}
func (Nop) DateTime(int, DateTime)             {}
func (Nop) DateTimeOffset(int, DateTimeOffset) {}
func (Nop) GUID(int, GUID)                     {}
func (Nop) Variant(int, *TypeInfo)             {}
func (Nop) BeginValue(int, int64)              {}
func (Nop) Reserve(int, int) []byte            { return nil }
func (Nop) Commit(int, int)                    {}
func (Nop) Write(int, []byte)                  {}
func (Nop) EndValue(int)                       {}
func (Nop) EndRow() error                      { return nil }

// Discard is a CellSink that asks the decoder to skip every column: no
// cell calls at all, one EndRow per row. It drains a response (a login's,
// a cancelled request's) at the decoder's skipping speed.
type Discard struct{ Nop }

// Columns sets every column to ModeSkip.
func (Discard) Columns(_ []Column, modes []Mode) error {
	for i := range modes {
		modes[i] = ModeSkip
	}
	return nil
}
