package main

import (
	"context"
	"os"
	"time"
)

// watchParent returns when the parent process goes away (getppid() changes: the orphan was
// re-parented to init or a subreaper) or when ctx ends. Polling rather than PR_SET_PDEATHSIG:
// that signal follows the parent *thread* that forked us, so a test driver that starts the
// proxy from a worker thread would lose it when that thread ends.
func watchParent(ctx context.Context, every time.Duration) {
	ppid := os.Getppid()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if os.Getppid() != ppid {
				return
			}
		}
	}
}
