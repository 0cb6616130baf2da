package capture

import (
	"context"
	"time"
)

// readWatch makes the end of a Read's context interrupt a read blocked on a
// pollable input (pipe, FIFO, socket, terminal, character device), through a
// read deadline. It registers once per context, so a loop of Reads under one
// context does not allocate.
type readWatch struct {
	done <-chan struct{} // Done channel of the watched context
	stop func()          // ends the watch; see watch
}

// watch watches ctx for reads of dl, first clearing the deadline an earlier
// context's end may have set.
func (w *readWatch) watch(ctx context.Context, dl deadliner) {
	done := ctx.Done()
	if done == w.done && w.stop != nil || done == nil && w.done == nil {
		return
	}
	w.unwatch()
	w.done = done
	_ = dl.SetReadDeadline(time.Time{}) // regular files have no deadlines
	if done == nil {
		return
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { _ = dl.SetReadDeadline(time.Now()); close(fired) })
	w.stop = func() {
		if !stop() {
			// It ran or is running: let it finish, or its deadline would
			// land after the next watch cleared it and time out a read
			// under a live context.
			<-fired
		}
	}
}

// unwatch ends the current watch, if any.
func (w *readWatch) unwatch() {
	if w.stop != nil {
		w.stop()
		w.stop = nil
	}
}
