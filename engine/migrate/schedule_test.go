package migrate

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The scheduler's conflict table is held to PostgreSQL's own: two
// sessions take the modes on one table, the second with NOWAIT.
func TestLockConflictsMatchPostgres(t *testing.T) {
	url, ctl := freshDB(t, "sched_locks")
	ctx := context.Background()
	if _, err := ctl.Exec(ctx, "CREATE TABLE locked (id int)"); err != nil {
		t.Fatal(err)
	}
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	names := map[lockMode]string{lockRowShare: "ROW SHARE", lockShareUpdateExclusive: "SHARE UPDATE EXCLUSIVE",
		lockShare: "SHARE", lockShareRowExclusive: "SHARE ROW EXCLUSIVE", lockAccessExclusive: "ACCESS EXCLUSIVE"}
	for a, an := range names {
		for b, bn := range names {
			tx, err := ctl.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "LOCK TABLE locked IN "+an+" MODE"); err != nil {
				t.Fatal(err)
			}
			tx2, err := other.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tx2.Exec(ctx, "LOCK TABLE locked IN "+bn+" MODE NOWAIT")
			pgConflicts := err != nil
			_ = tx2.Rollback(ctx)
			_ = tx.Rollback(ctx)
			if got := a.conflicts(b); got != pgConflicts {
				t.Errorf("%s against %s: conflicts() = %v, PostgreSQL says %v (%v)", an, bn, got, pgConflicts, err)
			}
		}
	}
	// lockKey is SHARE that ends in ACCESS EXCLUSIVE: beside index builds,
	// never beside another key, a validation or anything stronger.
	for m, want := range map[lockMode]bool{lockShare: false, lockKey: true, lockRowShare: true,
		lockShareUpdateExclusive: true, lockShareRowExclusive: true, lockAccessExclusive: true, lockNone: false} {
		if got := lockKey.conflicts(m); got != want || m.conflicts(lockKey) != want {
			t.Errorf("lockKey against %d: %v, want %v", m, got, want)
		}
	}
}

// Two tables, a references b and b references a; a's steps weigh more.
func schedulePlan() []*Step {
	return []*Step{
		{Phase: PhaseData, Object: "s.a#1/2", Table: "s.a"},
		{Phase: PhaseData, Object: "s.a#2/2", Table: "s.a"},
		{Phase: PhaseData, Object: "s.b", Table: "s.b"},
		{Phase: PhaseKey, Object: "s.pk_a", Table: "s.a", lock: lockKey},
		{Phase: PhaseKey, Object: "s.uq_a", Table: "s.a", lock: lockKey},
		{Phase: PhaseKey, Object: "s.pk_b", Table: "s.b", lock: lockKey},
		{Phase: PhaseIndex, Object: "s.ix_a1", Table: "s.a", lock: lockShare},
		{Phase: PhaseIndex, Object: "s.ix_a2", Table: "s.a", lock: lockShare},
		{Phase: PhaseCheck, Object: "s.a.ck", Table: "s.a", lock: lockAccessExclusive},
		{Phase: PhaseForeignKey, Object: "s.a.fk_ab", Table: "s.a", Refs: []string{"s.b"}, lock: lockShareRowExclusive},
		{Phase: PhaseForeignKey, Object: "s.b.fk_ba", Table: "s.b", Refs: []string{"s.a"}, lock: lockShareRowExclusive},
		{Phase: PhaseValidate, Object: "s.a.fk_ab", Table: "s.a", Refs: []string{"s.b"}, lock: lockShareUpdateExclusive},
		{Phase: PhaseValidate, Object: "s.b.fk_ba", Table: "s.b", Refs: []string{"s.a"}, lock: lockShareUpdateExclusive},
	}
}

func TestRunTasks(t *testing.T) {
	steps := schedulePlan()
	byKey := map[string]*Step{}
	for _, s := range steps {
		byKey[s.Key()] = s
	}
	tasks, data := planTasks(steps, func(table string) int64 { return map[string]int64{"s.a": 100, "s.b": 10}[table] })
	if len(data) != 3 {
		t.Fatalf("%d data steps, want 3", len(data))
	}
	type span struct{ start, end int }
	var mu sync.Mutex
	clock, running, most := 0, 0, 0
	spans := map[string]*span{}
	// The two indexes of a meet: each waits for the other to start, so
	// the run fails (instead of passing slowly) if they are serialised.
	met := map[string]chan struct{}{"index:s.ix_a1": make(chan struct{}), "index:s.ix_a2": make(chan struct{})}
	const parallel = 3
	runTasks(tasks, parallel, func(tk *task) {
		k := tk.step.Key()
		mu.Lock()
		clock++
		if spans[k] != nil {
			t.Errorf("%s ran twice", k)
		}
		spans[k] = &span{start: clock}
		running++
		most = max(most, running)
		mu.Unlock()
		if ch, ok := met[k]; ok {
			close(ch)
			for o, other := range met {
				if o != k {
					select {
					case <-other:
					case <-time.After(10 * time.Second):
						t.Errorf("%s waited for %s to start beside it: the indexes of a table were not built together", k, o)
					}
				}
			}
		}
		mu.Lock()
		clock++
		spans[k].end = clock
		running--
		mu.Unlock()
	})
	if len(spans) != len(steps) {
		t.Fatalf("%d steps ran, want %d", len(spans), len(steps))
	}
	if most > parallel {
		t.Errorf("%d steps ran at once, at most %d allowed", most, parallel)
	}
	before := func(a, b string) {
		t.Helper()
		if spans[a].end > spans[b].start {
			t.Errorf("%s started before %s ended", b, a)
		}
	}
	for _, post := range []string{"key:s.pk_a", "key:s.uq_a", "index:s.ix_a1", "index:s.ix_a2", "check:s.a.ck"} {
		before("data:s.a#1/2", post)
		before("data:s.a#2/2", post)
		for _, fk := range []string{"foreign key:s.a.fk_ab", "foreign key:s.b.fk_ba"} {
			before(post, fk)
		}
	}
	before("data:s.b", "key:s.pk_b")
	before("key:s.pk_b", "foreign key:s.a.fk_ab")
	before("foreign key:s.a.fk_ab", "validate:s.a.fk_ab")
	before("foreign key:s.b.fk_ba", "validate:s.b.fk_ba")
	// No two steps whose locks conflict on a table overlap.
	for ka, a := range spans {
		for kb, b := range spans {
			if ka >= kb || a.end < b.start || b.end < a.start {
				continue
			}
			for _, la := range byKey[ka].locks() {
				for _, lb := range byKey[kb].locks() {
					if la.table == lb.table && la.mode.conflicts(lb.mode) {
						t.Errorf("%s and %s ran at once with conflicting locks on %s", ka, kb, la.table)
					}
				}
			}
		}
	}
}

// One at a time, the order is the priority alone: the heavier table's
// rows, then its keys, indexes and check (they end the longer chain),
// then the lighter table, then foreign keys as they become possible.
func TestRunTasksOrder(t *testing.T) {
	tasks, _ := planTasks(schedulePlan(), func(table string) int64 { return map[string]int64{"s.a": 100, "s.b": 10}[table] })
	var order []string
	runTasks(tasks, 1, func(tk *task) { order = append(order, tk.step.Key()) })
	want := []string{"data:s.a#1/2", "data:s.a#2/2", "key:s.pk_a", "key:s.uq_a", "index:s.ix_a1", "index:s.ix_a2", "check:s.a.ck",
		"data:s.b", "key:s.pk_b", "foreign key:s.a.fk_ab", "validate:s.a.fk_ab", "foreign key:s.b.fk_ba", "validate:s.b.fk_ba"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("order\n%v\nwant\n%v", order, want)
	}
}
