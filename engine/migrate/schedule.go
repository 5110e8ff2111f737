package migrate

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tdsextract/tdsextract/sinks/postgres"
)

// lockMode is a PostgreSQL table lock mode, as far as the steps of a
// migration take them, plus lockKey (see below).
type lockMode uint8

const (
	lockNone lockMode = iota
	// lockRowShare: VALIDATE CONSTRAINT on the referenced table.
	lockRowShare
	// lockShareUpdateExclusive: VALIDATE CONSTRAINT on its own table.
	lockShareUpdateExclusive
	// lockShare: CREATE INDEX.
	lockShare
	// lockKey: CREATE UNIQUE INDEX (SHARE), then ADD CONSTRAINT ... USING
	// INDEX in the same transaction, which asks for ACCESS EXCLUSIVE. The
	// upgrade waits in the server for the table's other index builds,
	// which hold SHARE and ask for nothing more, so it cannot deadlock
	// with them; two such upgrades on one table would (each holds SHARE
	// and waits for the other's), so lockKey conflicts with itself.
	lockKey
	// lockShareRowExclusive: ADD FOREIGN KEY, on both tables.
	lockShareRowExclusive
	// lockAccessExclusive: ADD CHECK.
	lockAccessExclusive
)

// conflicts reports whether locks a and b on one table exclude each
// other: PostgreSQL's table of conflicting lock modes, for these modes.
func (a lockMode) conflicts(b lockMode) bool {
	if a == lockNone || b == lockNone {
		return false
	}
	if a > b {
		a, b = b, a
	}
	switch a {
	case lockRowShare:
		// ROW SHARE conflicts only with ACCESS EXCLUSIVE, which a key
		// step asks for at its end.
		return b == lockKey || b == lockAccessExclusive
	case lockShareUpdateExclusive:
		return true // with itself, SHARE and everything stronger
	case lockShare:
		return b != lockShare && b != lockKey
	}
	return true // lockKey with itself and stronger; SRE with itself; AE
}

// tableLock is a lock a step takes.
type tableLock struct {
	table string
	mode  lockMode
}

// locks are the locks the step takes: its own on its table, and on the
// tables it references the mode its phase implies.
func (s *Step) locks() []tableLock {
	l := []tableLock{{s.Table, s.lock}}
	ref := lockNone
	switch s.Phase {
	case PhaseForeignKey:
		ref = lockShareRowExclusive
	case PhaseValidate:
		ref = lockRowShare
	}
	for _, t := range s.Refs {
		l = append(l, tableLock{t, ref})
	}
	return l
}

// task is one step as the scheduler sees it.
type task struct {
	step   *Step
	order  int   // position in the plan: the tie-break
	weight int64 // the rows of its table: the longer chain goes first
	data   int   // index among the data steps, -1 for DDL
	wait   int   // unfinished steps it needs
	then   []*task
}

// schedule runs the data, key, index, check and foreign key steps on
// Parallel sessions, each step as soon as what it needs is done and the
// locks it takes are free: a table's keys and indexes build while other
// tables still load, the indexes of one table build side by side, and
// the foreign keys of different tables validate at once. Of the steps
// ready, those of bigger tables go first, as they end the longest chains
// (rows, then keys, then foreign keys). Locks are kept apart here rather
// than left to the server, so that no session waits in PostgreSQL while
// a step it could run instead is ready, and no two steps can deadlock.
func (r *runner) schedule(ctx context.Context, steps []*Step) {
	byTarget := map[string]*TablePlan{}
	for _, tp := range r.plan.Tables {
		byTarget[tp.Target()] = tp
	}
	tasks, data := planTasks(steps, func(table string) int64 {
		if tp := byTarget[table]; tp != nil {
			return tp.Source.RowCount
		}
		return 0
	})
	results := make([]TableSummary, len(data))
	started := make([]time.Time, len(data))
	conns := make(chan *pgx.Conn, r.c.parallel())
	defer func() {
		close(conns)
		for c := range conns {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	runTasks(tasks, r.c.parallel(), func(t *task) {
		if t.data >= 0 {
			r.loadStep(ctx, t.step, byTarget[t.step.Table], &results[t.data], &started[t.data])
		} else {
			r.ddlOnPool(ctx, conns, t.step)
		}
	})
	r.sum.Tables = mergeParts(data, results, started)
}

// planTasks makes a task of every step, with what it waits for: a
// table's keys, indexes and checks wait for all its rows; a foreign key
// for the rows, keys and indexes of both its tables; a validation for its
// foreign key; an ANALYZE for the table's rows, keys, indexes and checks
// (statistics of expression indexes come from it too). rows weighs a
// table. data are the data steps, in order.
func planTasks(steps []*Step, rows func(table string) int64) (tasks []*task, data []*Step) {
	tasks = make([]*task, len(steps))
	dataOf := map[string][]*task{} // table -> its data tasks
	postOf := map[string][]*task{} // table -> its key, index and check tasks
	added := map[string]*task{}    // foreign key object -> its ADD task
	for i, s := range steps {
		t := &task{step: s, order: i, data: -1, weight: rows(s.Table)}
		switch {
		case s.Phase == PhaseData:
			t.data = len(data)
			data = append(data, s)
			dataOf[s.Table] = append(dataOf[s.Table], t)
		case s.Phase < PhaseForeignKey:
			postOf[s.Table] = append(postOf[s.Table], t)
		case s.Phase == PhaseForeignKey:
			added[s.Object] = t
		}
		tasks[i] = t
	}
	need := func(t *task, before []*task) {
		for _, b := range before {
			b.then = append(b.then, t)
			t.wait++
		}
	}
	for _, t := range tasks {
		s := t.step
		switch {
		case s.Phase == PhaseData:
		case s.Phase < PhaseForeignKey:
			need(t, dataOf[s.Table])
		case s.Phase == PhaseForeignKey:
			for _, tab := range append([]string{s.Table}, s.Refs...) {
				need(t, dataOf[tab])
				need(t, postOf[tab])
			}
		case s.Phase == PhaseValidate:
			if a := added[s.Object]; a != nil {
				need(t, []*task{a})
			}
		case s.Phase == PhaseAnalyze:
			need(t, dataOf[s.Table])
			need(t, postOf[s.Table])
		}
	}
	return tasks, data
}

// runTasks runs the tasks, at most parallel at once, each by exec once
// what it waits for is done and its locks are free; of those, the
// heaviest first, then in plan order.
func runTasks(tasks []*task, parallel int, exec func(*task)) {
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var ready []*task
	for _, t := range tasks {
		if t.wait == 0 {
			ready = append(ready, t)
		}
	}
	held := map[string][]lockMode{} // table -> the locks running tasks hold
	free := func(t *task) bool {
		for _, l := range t.step.locks() {
			for _, h := range held[l.table] {
				if h.conflicts(l.mode) {
					return false
				}
			}
		}
		return true
	}
	take := func(t *task) {
		for _, l := range t.step.locks() {
			held[l.table] = append(held[l.table], l.mode)
		}
	}
	release := func(t *task) {
		for _, l := range t.step.locks() {
			h := held[l.table]
			for i, m := range h {
				if m == l.mode {
					held[l.table] = append(h[:i], h[i+1:]...)
					break
				}
			}
		}
	}
	running, left := 0, len(tasks)
	var wg sync.WaitGroup
	mu.Lock()
	for left > 0 {
		sort.SliceStable(ready, func(i, j int) bool {
			a, b := ready[i], ready[j]
			if a.weight != b.weight {
				return a.weight > b.weight
			}
			return a.order < b.order
		})
		next := -1
		if running < parallel {
			for i, t := range ready {
				if free(t) {
					next = i
					break
				}
			}
		}
		if next < 0 {
			cond.Wait()
			continue
		}
		t := ready[next]
		ready = append(ready[:next], ready[next+1:]...)
		take(t)
		running++
		wg.Add(1)
		go func() {
			defer wg.Done()
			exec(t)
			mu.Lock()
			release(t)
			running--
			left--
			for _, n := range t.then {
				if n.wait--; n.wait == 0 {
					ready = append(ready, n)
				}
			}
			cond.Broadcast()
			mu.Unlock()
		}()
	}
	mu.Unlock()
	wg.Wait()
}

// ddlOnPool runs one DDL step on a connection of the pool, opening one
// when none is idle.
func (r *runner) ddlOnPool(ctx context.Context, conns chan *pgx.Conn, s *Step) {
	var conn *pgx.Conn
	select {
	case conn = <-conns:
	default:
		c, err := postgres.Connect(ctx, r.c.Target)
		if err != nil {
			r.record(s, StepFailed, err)
			r.fail(&ConnectError{err})
			return
		}
		for _, q := range r.c.buildSettings() {
			if _, err := c.Exec(ctx, q); err != nil {
				c.Close(context.WithoutCancel(ctx))
				r.record(s, StepFailed, err)
				r.fail(fmt.Errorf("%s: %w", q, err))
				return
			}
		}
		conn = c
	}
	r.ddl(ctx, conn, s)
	select {
	case conns <- conn:
	default:
		conn.Close(context.WithoutCancel(ctx))
	}
}
