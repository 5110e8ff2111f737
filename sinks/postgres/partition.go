package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/sinks"
)

// An extract that runs in several key-range parts, each on its own
// session and each possibly in another process or a later run, still
// reaches its target table all at once or not at all. Each part loads, in
// its own transaction, a staging table of its own (<table>__tdsx_pNNNN:
// dropped and created again in that transaction, so a part run twice
// leaves its rows once); its commit makes the part durable, which is what
// lets a killed run resume without loading finished parts again. When
// every part is in, Combine runs one transaction: the target prepared per
// mode (created, truncated, replaced or appended to), every staging
// table's rows inserted into it, the staging tables dropped, COMMIT.
// Readers see the target's old rows until that commit and all the new
// ones after it. The price is that every row is written twice on the
// PostgreSQL side; one transaction shared by all parts would write once,
// but would allow neither parallel sessions nor a resume after a crash.

// partPrefix names the staging tables of parts.
const partPrefix = "__tdsx_p"

// partStaging is the staging table of part (0-based) of table.
func partStaging(table string, part int) string {
	suffix := fmt.Sprintf("%s%04d", partPrefix, part+1)
	if len(table) > maxIdentLen-len(suffix) {
		table = FoldIdent(table[:maxIdentLen-len(suffix)], IdentPreserve)
	}
	return table + suffix
}

// preparePart creates the part's staging table afresh: in the part's
// transaction, so a failed part leaves the previous staging table (or
// none) as it was.
func (s *Sink) preparePart(targetExists bool) error {
	if s.cfg.Mode == ModeCreate && targetExists {
		return fmt.Errorf("postgres: table %s exists and mode is create: use mode append, truncate or replace, or drop it", s.target.QualifiedName())
	}
	q := QuoteIdent(s.schema) + "." + QuoteIdent(s.partTable)
	if _, err := s.conn.Exec(s.ctx, "DROP TABLE IF EXISTS "+q); err != nil {
		return fmt.Errorf("postgres: part staging: DROP TABLE %s: %w", q, err)
	}
	return s.createTable(q)
}

// Combine moves the staging tables of every part of info's extract into
// its target table in one transaction, per the configured mode. When no
// staging table is left and the target exists, an earlier Combine
// committed: it returns success without doing anything again.
func Combine(ctx context.Context, c Config, info sinks.ExtractInfo) (sinks.Stats, error) {
	s := &Sink{cfg: c, info: info, ctx: ctx}
	s.table = FoldIdent(expandTemplate(c.Table, &info), c.Identifiers)
	conn, err := Connect(ctx, c.Conn)
	if err != nil {
		return sinks.Stats{}, err
	}
	s.conn = conn
	defer s.close()
	if c.Schema != "" {
		s.schema = FoldIdent(expandTemplate(c.Schema, &info), c.Identifiers)
	} else if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&s.schema); err != nil {
		return sinks.Stats{}, fmt.Errorf("postgres: current_schema(): %w", err)
	}
	target := QuoteIdent(s.schema) + "." + QuoteIdent(s.table)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return sinks.Stats{}, fmt.Errorf("postgres: BEGIN: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	var parts []string
	var missing []int
	for i := range info.Parts {
		name := partStaging(s.table, i)
		k, err := s.relKind(name)
		if err != nil {
			return sinks.Stats{}, err
		}
		if k == 0 {
			missing = append(missing, i+1)
			continue
		}
		parts = append(parts, QuoteIdent(s.schema)+"."+QuoteIdent(name))
	}
	kind, err := s.relKind(s.table)
	if err != nil {
		return sinks.Stats{}, err
	}
	switch {
	case len(parts) == 0 && kind != 0:
		return sinks.Stats{}, nil // combined by an earlier call
	case len(missing) > 0:
		return sinks.Stats{}, fmt.Errorf("postgres: combining %s: the staging tables of part(s) %v are missing; run those parts again", target, missing)
	}
	cols, err := stagingColumns(ctx, tx, s.schema, partStaging(s.table, 0))
	if err != nil {
		return sinks.Stats{}, err
	}
	var stmts []string
	like := "CREATE TABLE " + target + " (LIKE " + parts[0] + ")"
	switch {
	case c.Mode == ModeCreate && kind != 0:
		return sinks.Stats{}, fmt.Errorf("postgres: table %s exists and mode is create: use mode append, truncate or replace, or drop it", target)
	case c.Mode == ModeReplace && kind != 0:
		stmts = append(stmts, "DROP TABLE "+target, like)
	case kind == 0:
		stmts = append(stmts, like)
	case c.Mode == ModeTruncate:
		stmts = append(stmts, "TRUNCATE "+target)
	}
	for _, q := range stmts {
		if _, err := tx.Exec(ctx, q); err != nil {
			return sinks.Stats{}, fmt.Errorf("postgres: combining: %s: %w", q, err)
		}
	}
	var st sinks.Stats
	for _, p := range parts {
		q := "INSERT INTO " + target + " (" + cols + ") SELECT " + cols + " FROM " + p
		tag, err := tx.Exec(ctx, q)
		if err != nil {
			return sinks.Stats{}, fmt.Errorf("postgres: combining: %s: %w", q, err)
		}
		st.Rows += tag.RowsAffected()
		if _, err := tx.Exec(ctx, "DROP TABLE "+p); err != nil {
			return sinks.Stats{}, fmt.Errorf("postgres: combining: DROP TABLE %s: %w", p, err)
		}
	}
	if h := c.BeforeCommit; h != nil {
		if err := h(ctx, conn, &Table{Schema: s.schema, Name: s.table}); err != nil {
			return sinks.Stats{}, fmt.Errorf("postgres: before commit: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return sinks.Stats{}, fmt.Errorf("postgres: COMMIT: %w", err)
	}
	return st, nil
}

// stagingColumns lists the columns of a staging table, quoted, in order.
func stagingColumns(ctx context.Context, tx pgx.Tx, schema, table string) (string, error) {
	rows, err := tx.Query(ctx, `SELECT a.attname FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, schema, table)
	if err != nil {
		return "", fmt.Errorf("postgres: columns of %s.%s: %w", QuoteIdent(schema), QuoteIdent(table), err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("postgres: columns of %s.%s: %w", QuoteIdent(schema), QuoteIdent(table), err)
	}
	if len(names) == 0 {
		return "", errors.New("postgres: staging table has no columns")
	}
	for i, n := range names {
		names[i] = QuoteIdent(n)
	}
	return strings.Join(names, ", "), nil
}
