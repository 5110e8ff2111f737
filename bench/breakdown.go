package main

import (
	"github.com/tdsextract/tdsextract/decode"
	"github.com/tdsextract/tdsextract/engine/session"
)

// The breakdown legs split tdsextract's time into what the engine costs and
// what delivering values costs, on the same session set-up as the
// tdsextract leg:
//
//   - tdsextract-walk skips every column (decode.ModeSkip): the socket (or
//     replay), packets, tokens and the row walk, with no value delivered.
//     It is the floor of any sink: no decoder of these bytes can be faster.
//   - tdsextract-discard decodes every value into a sink that drops it:
//     text is still transcoded into the sink's memory, numbers still
//     parsed, but nothing is kept or hashed.
//
// In memory mode, where the client is all there is, tdsextract minus
// discard is what the checksum sink costs (hashing, and gathering
// transcoded or chunked values before hashing them) and discard minus walk
// is the cost of decoding the values. Over loopback the three differ only
// where the client is the bottleneck: on shapes the test server or the
// socket limits (poc48, lineitem), the walk can come out slower than
// tdsextract itself and the differences are noise. Neither leg computes a
// checksum, so they are held to the tdsextract leg's row count only.

// discardSink takes every value and keeps nothing; unlike decode.Nop it
// lends the decoder a destination, as a real sink does.
type discardSink struct {
	decode.Nop
	buf  []byte
	rows int64
	skip bool // every column ModeSkip (the walk leg)
}

var (
	_ decode.CellSink  = (*discardSink)(nil)
	_ decode.BytesSink = (*discardSink)(nil)
)

func (s *discardSink) Columns(_ []decode.Column, modes []decode.Mode) error {
	if s.skip {
		for i := range modes {
			modes[i] = decode.ModeSkip
		}
	}
	return nil
}

func (s *discardSink) Reserve(_ int, n int) []byte { return reserve(&s.buf, n) }
func (s *discardSink) Bytes(int, []byte)           {}
func (s *discardSink) EndRow() error               { s.rows++; return nil }

// rowsOnly is the checksum field of a leg that computes none.
const rowsOnly = "rows only"

// breakdownLegs are the walk and discard legs over sessions from connect.
func breakdownLegs(connect func() (*session.Conn, error), query string) []leg {
	mk := func(name string, skip bool) leg {
		return leg{name: name, rowsOnly: true, run: func() (sample, error) {
			s := &discardSink{skip: skip}
			smp, err := timedQuery(connect, query, s)
			return smp.of(s.rows, rowsOnly), err
		}}
	}
	return []leg{mk("tdsextract-walk", true), mk("tdsextract-discard", false)}
}
