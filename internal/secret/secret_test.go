package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestSecretRedacts(t *testing.T) {
	const pw = "hunter2;@#"
	s := Secret(pw)
	type wrapper struct {
		User     string
		Password Secret
	}
	w := wrapper{"sa", s}
	outs := []string{
		s.String(), s.GoString(),
		fmt.Sprint(s), fmt.Sprintf("%v|%s|%q|%x|%X|%#v|%+v|%d|%10s", s, s, s, s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", w, w, w), fmt.Sprintf("%v", &w),
	}
	js, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(js))
	var buf bytes.Buffer
	lg := slog.New(slog.NewJSONHandler(&buf, nil))
	lg.Info("x", "password", s, "cfg", w)
	lg2 := slog.New(slog.NewTextHandler(&buf, nil))
	lg2.Info("x", "password", s)
	outs = append(outs, buf.String())
	for _, o := range outs {
		if strings.Contains(o, "hunter") || strings.Contains(o, "68756e74") || strings.Contains(o, "68756E74") {
			t.Errorf("secret leaked: %s", o)
		}
		if !strings.Contains(o, redacted) {
			t.Errorf("no redaction marker: %s", o)
		}
	}
	if s.Reveal() != pw {
		t.Fatal("Reveal")
	}
	if Secret("").String() != "" || fmt.Sprint(Secret("")) != "" {
		t.Fatal("empty secret should print empty")
	}
}
