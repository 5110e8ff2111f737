package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// pluginOutput takes what a plugin process writes to stderr and stdout
// and logs it line by line with the plugin's name, keeping the last lines
// for the error that reports a crash ("its last output: panic: ...").
type pluginOutput struct {
	log  *slog.Logger
	name string

	mu    sync.Mutex
	last  []string // the last lastLines lines, oldest first
	panic []string // a Go panic's first lines, which say what happened
}

const lastLines = 3

// stream returns a writer for one of the plugin's output streams.
func (o *pluginOutput) stream(name string) *outputStream {
	return &outputStream{o: o, name: name}
}

// lastOutput is what the error of a crashed plugin quotes: the first
// lines of its panic, else its last lines.
func (o *pluginOutput) lastOutput() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.panic) > 0 {
		return strings.Join(o.panic, " | ")
	}
	return strings.Join(o.last, " | ")
}

func (o *pluginOutput) line(stream string, b []byte) {
	s := strings.TrimRight(string(b), "\r")
	if s == "" {
		return
	}
	lvl, msg, attrs := slog.LevelInfo, s, []any{"plugin", o.name, "stream", stream}
	// go-plugin's own logger in the plugin writes hclog JSON lines.
	if len(s) > 0 && s[0] == '{' {
		var e map[string]any
		if json.Unmarshal(b, &e) == nil {
			if m, ok := e["@message"].(string); ok {
				msg = m
				switch e["@level"] {
				case "error":
					lvl = slog.LevelError
				case "warn":
					lvl = slog.LevelWarn
				case "debug", "trace":
					lvl = slog.LevelDebug
				}
				for k, v := range e {
					if !strings.HasPrefix(k, "@") {
						attrs = append(attrs, k, v)
					}
				}
			}
		}
	}
	o.mu.Lock()
	switch {
	case strings.HasPrefix(s, "panic: ") || strings.HasPrefix(s, "fatal error: "):
		lvl = slog.LevelError
		o.panic = append(o.panic[:0], s)
	case len(o.panic) == 1 && strings.HasPrefix(s, "\t"): // panic: x [recovered]\n\tpanic: y
		o.panic = append(o.panic, strings.TrimSpace(s))
	}
	if len(o.last) == lastLines {
		copy(o.last, o.last[1:])
		o.last = o.last[:lastLines-1]
	}
	o.last = append(o.last, msg)
	o.mu.Unlock()
	o.log.Log(context.Background(), lvl, msg, attrs...)
}

// outputStream splits one stream into lines.
type outputStream struct {
	o    *pluginOutput
	name string
	mu   sync.Mutex
	buf  []byte
}

func (w *outputStream) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.o.line(w.name, w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // a line without end: log it in pieces
		w.o.line(w.name, w.buf)
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// flush logs a last line without a newline.
func (w *outputStream) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.o.line(w.name, w.buf)
		w.buf = nil
	}
}
