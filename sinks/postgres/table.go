package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tdsextract/tdsextract/decode"
)

// All or nothing per table: the sink runs the whole load in one
// transaction (BEGIN in Open; CREATE, TRUNCATE or the staging table of
// replace; the COPY; COMMIT in Publish). PostgreSQL's DDL is
// transactional, so a failed, cancelled or killed load leaves the target
// exactly as it was, and readers see the old rows until the commit and the
// new ones after it, never a part. A staging table with a rename at the end
// (outside a transaction) would have to be cleaned up after a crash; inside
// the transaction there is nothing to clean. replace still loads into a
// new table and swaps it in at Publish, so the old table stays readable
// (no ACCESS EXCLUSIVE lock) for the whole load; truncate keeps the
// table's definition and so takes that lock at its start.

// Rows that go into a table created or truncated in the load's own
// transaction are copied with FREEZE (unless the freeze option is off):
// PostgreSQL writes them already frozen and marked committed, as no other
// transaction can see the table before the commit. Without it every page
// is written once by the COPY, dirtied again by the first reader that
// sets the rows' hint bits (the index builds of a migration are such
// readers), and rewritten once more by the VACUUM that freezes them
// before the transaction counter wraps around. The price is the one that
// TRUNCATE already has: a transaction whose snapshot is older than the
// load sees the new rows after the commit, not the old ones.

// prepareTable makes the target ready for the COPY, per mode.
func (s *Sink) prepareTable() error {
	ctx := s.ctx
	t := s.target
	kind, err := s.relKind(s.table)
	if err != nil {
		return err
	}
	exists := kind != 0
	if exists && kind != 'r' && kind != 'p' {
		return fmt.Errorf("postgres: %s is not a table (relkind %q); choose another table name", t.QualifiedName(), kind)
	}
	if s.partTable != "" {
		return s.preparePart(exists)
	}
	switch s.cfg.Mode {
	case ModeCreate:
		if exists {
			return fmt.Errorf("postgres: table %s exists and mode is create: use mode append, truncate or replace, or drop it", t.QualifiedName())
		}
		return s.createTable(t.QualifiedName())
	case ModeAppend:
		if !exists {
			return s.createTable(t.QualifiedName())
		}
		return s.adopt()
	case ModeTruncate:
		if !exists {
			return s.createTable(t.QualifiedName())
		}
		if err := s.adopt(); err != nil {
			return err
		}
		if _, err := s.conn.Exec(ctx, "TRUNCATE "+t.QualifiedName()); err != nil {
			return fmt.Errorf("postgres: TRUNCATE %s: %w", t.QualifiedName(), err)
		}
		// PostgreSQL refuses COPY FREEZE into a partitioned table.
		s.fresh = kind == 'r'
		return nil
	case ModeReplace:
		if !exists {
			return s.createTable(t.QualifiedName())
		}
		if err := s.checkDependents(); err != nil {
			return err
		}
		s.staging = FoldIdent(s.table, IdentPreserve)
		if len(s.staging) > maxIdentLen-len(stagingSuffix) {
			s.staging = FoldIdent(s.staging[:maxIdentLen-len(stagingSuffix)], IdentPreserve)
		}
		s.staging += stagingSuffix
		k, err := s.relKind(s.staging)
		if err != nil {
			return err
		}
		if k != 0 {
			return fmt.Errorf("postgres: replace loads into %s.%s and renames it, but a relation of that name exists", QuoteIdent(s.schema), QuoteIdent(s.staging))
		}
		return s.createTable(QuoteIdent(s.schema) + "." + QuoteIdent(s.staging))
	}
	return fmt.Errorf("postgres: mode %q", s.cfg.Mode)
}

// stagingSuffix names the table replace loads before swapping it in; it
// exists only inside the load's transaction.
const stagingSuffix = "__tdsx_load"

// relKind is pg_class.relkind of schema.name, 0 when there is none.
func (s *Sink) relKind(name string) (byte, error) {
	var kind *string
	err := s.conn.QueryRow(s.ctx, `SELECT c.relkind::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, s.schema, name).Scan(&kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: looking up %s.%s: %w", QuoteIdent(s.schema), QuoteIdent(name), err)
	}
	return (*kind)[0], nil
}

func (s *Sink) createTable(qname string) error {
	ddl := createSQL(qname, s.target.Columns)
	if _, err := s.conn.Exec(s.ctx, ddl); err != nil {
		return fmt.Errorf("postgres: %s: %w", ddl, err)
	}
	s.created, s.fresh = true, true
	return nil
}

// ensureSchema creates the target schema when it is missing, before the
// load's transaction and committed at once: inside it, parallel loads
// into one new schema would each create it and all but one fail (or wait
// for the first load to end). A failed load can so leave an empty schema
// behind, never a table or a row.
func (s *Sink) ensureSchema() error {
	var has bool
	if err := s.conn.QueryRow(s.ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)", s.schema).Scan(&has); err != nil {
		return fmt.Errorf("postgres: looking up schema %s: %w", QuoteIdent(s.schema), err)
	}
	if has {
		return nil
	}
	_, err := s.conn.Exec(s.ctx, "CREATE SCHEMA IF NOT EXISTS "+QuoteIdent(s.schema))
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P06") {
		err = nil // created at the same moment by a parallel load
	}
	if err != nil {
		return fmt.Errorf("postgres: CREATE SCHEMA %s: %w", QuoteIdent(s.schema), err)
	}
	return nil
}

// checkDependents refuses replace when views or foreign keys depend on
// the table: dropping it at the end would fail after the whole load.
func (s *Sink) checkDependents() error {
	rows, err := s.conn.Query(s.ctx, `SELECT DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)
		FROM pg_catalog.pg_depend d
		WHERE d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjid = $1::regclass AND d.deptype = 'n'`, s.target.QualifiedName())
	if err != nil {
		return fmt.Errorf("postgres: looking up what depends on %s: %w", s.target.QualifiedName(), err)
	}
	deps, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("postgres: looking up what depends on %s: %w", s.target.QualifiedName(), err)
	}
	if len(deps) > 0 {
		return fmt.Errorf("postgres: mode replace drops %s, but %s depend on it: use mode truncate (keeps the table and what depends on it)", s.target.QualifiedName(), strings.Join(deps, ", "))
	}
	return nil
}

// existingColumn is a column of a table the sink loads into as it is.
type existingColumn struct {
	name                string
	oid                 uint32
	typmod              int32
	sql                 string
	notNull, hasDefault bool
	// citext is set for the citext extension's type, whose OID each
	// database assigns when the extension is created: it is recognised
	// by its extension, never by a number.
	citext bool
}

// adopt checks an existing table against the mapping: every mapped column
// must exist with a type the sink can write the source values into
// exactly; its columns outside the mapping must be nullable or have a
// default. The mapping takes the existing types (a bigint target for an
// int source, a shorter varchar checked per value).
func (s *Sink) adopt() error {
	t := s.target
	rows, err := s.conn.Query(s.ctx, `SELECT a.attname, COALESCE(NULLIF(ty.typbasetype, 0), a.atttypid)::oid,
			CASE WHEN ty.typbasetype <> 0 THEN ty.typtypmod ELSE a.atttypmod END,
			pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull, a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '',
			EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension x ON x.oid = d.refobjid
				WHERE d.classid = 'pg_catalog.pg_type'::regclass AND d.objid = COALESCE(NULLIF(ty.typbasetype, 0), a.atttypid)
				AND d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.deptype = 'e' AND x.extname = 'citext')
		FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
		WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, t.QualifiedName())
	if err != nil {
		return fmt.Errorf("postgres: reading the columns of %s: %w", t.QualifiedName(), err)
	}
	defer rows.Close()
	have := map[string]*existingColumn{}
	var order []string
	for rows.Next() {
		var c existingColumn
		if err := rows.Scan(&c.name, &c.oid, &c.typmod, &c.sql, &c.notNull, &c.hasDefault, &c.citext); err != nil {
			return fmt.Errorf("postgres: reading the columns of %s: %w", t.QualifiedName(), err)
		}
		have[c.name] = &c
		order = append(order, c.name)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: reading the columns of %s: %w", t.QualifiedName(), err)
	}
	var problems []string
	used := map[string]bool{}
	for i := range t.Columns {
		m := &t.Columns[i]
		e, ok := have[m.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("it has no column %s (for %s)", QuoteIdent(m.Name), describeTarget(m)))
			continue
		}
		used[m.Name] = true
		et := Type{OID: e.oid, Typmod: e.typmod, SQL: e.sql}
		src := &s.srcCols[m.Source]
		switch m.Companion {
		case "offset":
			switch e.oid {
			case oidInt2, oidInt4, oidInt8:
				m.enc = map[uint32]encoding{oidInt2: encInt2, oidInt4: encInt4, oidInt8: encInt8}[e.oid]
			default:
				problems = append(problems, fmt.Sprintf("column %s is %s, the offset in minutes needs an integer type", QuoteIdent(m.Name), e.sql))
			}
		case "type":
			if e.oid != oidText && e.oid != oidVarchar {
				problems = append(problems, fmt.Sprintf("column %s is %s, the variant's base type needs text", QuoteIdent(m.Name), e.sql))
			}
		default:
			wt := et
			if e.citext { // citext's binary input and output are text's
				wt = Type{OID: oidText, Typmod: -1, SQL: e.sql}
			}
			enc, err := encodingFor(src, wt)
			if err != nil {
				problems = append(problems, fmt.Sprintf("column %s: %v", QuoteIdent(m.Name), err))
				continue
			}
			m.enc = enc
			if (e.oid == oidVarchar || e.oid == oidBpchar) && e.typmod >= 4 {
				if n := int(e.typmod - 4); sourceChars(src) > n {
					m.maxChars = n
				}
			}
		}
		m.Type = et
	}
	for _, n := range order {
		if e := have[n]; !used[n] && e.notNull && !e.hasDefault {
			problems = append(problems, fmt.Sprintf("its column %s is NOT NULL without a default and the source has no column for it", QuoteIdent(n)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("postgres: mode %s loads into the existing table %s, but %s; fix the table, rename columns with columns: [...], or use mode replace", s.cfg.Mode, t.QualifiedName(), strings.Join(problems, "; "))
	}
	return nil
}

// sourceChars is the most characters a source column's values can hold
// (a large number for (max) and non-text types).
func sourceChars(c *decode.Column) int {
	ti := &c.Type
	if !c.Kind().IsText() || ti.Size == decode.MaxVarLen || c.Kind() == decode.KindText || c.Kind() == decode.KindNText || c.Kind() == decode.KindXML || c.Kind() == decode.KindJSON {
		return 1 << 30
	}
	if c.Kind().IsUnicode() {
		return int(ti.Size / 2)
	}
	return int(ti.Size)
}
