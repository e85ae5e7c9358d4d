package command

import (
	"io"
	"os"
	"os/signal"

	"github.com/rackform/rackform/cmd/rackform/internal/command/views/applyview"
)

// followResize tells the live view the terminal's new width whenever the
// terminal is resized (SIGWINCH), so a redraw moves the cursor back over
// exactly the rows the last picture took. The returned func stops it.
// Where there is no resize signal (Windows), the width read at start
// stays.
func followResize(view *applyview.View, w io.Writer, getenv func(string) string) func() {
	if len(resizeSignals) == 0 {
		return func() {}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, resizeSignals...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				view.SetWidth(termWidth(w, getenv))
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
