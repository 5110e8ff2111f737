package migrate

import (
	"fmt"
	"io"
	"strings"
)

// Write prints the whole plan as a SQL script a reader can check: every
// statement in the order a run executes them (the data steps as comments
// naming the SELECT and the identity restart), then every lossy mapping,
// everything not translated with its original text, and the notes.
func (p *Plan) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "-- tdsextract migrate plan: %d tables, %d steps; identifiers %s, case-insensitive keys %s\n",
		len(p.Tables), len(p.Steps), p.Options.Identifiers, p.Options.CaseInsensitive)
	byTarget := map[string]*TablePlan{}
	for _, tp := range p.Tables {
		byTarget[tp.Target()] = tp
	}
	phase := Phase(255)
	for _, s := range p.Steps {
		if s.Phase != phase {
			phase = s.Phase
			fmt.Fprintf(&b, "\n-- %s\n", phase)
		}
		if s.Phase == PhaseData {
			tp := byTarget[s.Table]
			how := "truncated and loaded in one transaction"
			where := ""
			if s.Range != nil {
				how, where = "a key range, appended in its own transaction", s.Range.String()
			}
			fmt.Fprintf(&b, "-- %s <- %s (binary COPY, %s)\n", s.Object, tp.Load.SQL(where), how)
			if tp.Restart != "" {
				fmt.Fprintf(&b, "%s;\n", tp.Restart)
			}
			continue
		}
		for _, q := range s.SQL {
			fmt.Fprintf(&b, "%s;\n", q)
		}
	}
	section := func(title string, items []Item) {
		fmt.Fprintf(&b, "\n-- %s: %d\n", title, len(items))
		for _, it := range items {
			fmt.Fprintf(&b, "--   %s %s: %s\n", it.What, it.Object, it.Detail)
			if it.Original != "" {
				fmt.Fprintf(&b, "--     source: %s\n", strings.ReplaceAll(strings.TrimSpace(it.Original), "\n", "\n--             "))
			}
		}
	}
	section("lossy mappings", p.Lossy)
	section("not translated", p.Untranslated)
	section("notes", p.Notes)
	_, err := io.WriteString(w, b.String())
	return err
}
