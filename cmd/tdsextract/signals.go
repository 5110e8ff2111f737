package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// interrupted is the cause of a run's cancellation by a signal.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string {
	name := i.sig.String()
	switch i.sig {
	case os.Interrupt:
		name = "SIGINT"
	case syscall.SIGTERM:
		name = "SIGTERM"
	}
	return fmt.Sprintf("interrupted (%s): nothing was published", name)
}

// runMain is main without os.Exit: the first SIGINT or SIGTERM cancels
// the run (the sinks abort and remove their temporary files; nothing is
// published) and the process exits 128+signal, 130 for Ctrl-C, as shells
// report it, so a scheduler tells an interrupted run from a failed one. A
// second signal ends the process at once.
func runMain(args []string, stdout, stderr *os.File) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if s, ok := <-sigs; ok {
			signal.Stop(sigs) // the next one takes the default action
			cancel(interrupted{s})
		}
	}()
	code := execute(ctx, args, stdout, stderr)
	signal.Stop(sigs)
	if in, ok := context.Cause(ctx).(interrupted); ok && code != exitOK {
		if n, ok := in.sig.(syscall.Signal); ok {
			return 128 + int(n) // the error, printed, says why
		}
	}
	return code
}
