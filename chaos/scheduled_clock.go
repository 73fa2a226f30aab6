package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/chaos/fault"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/impl/adapterclient"
	"github.com/lockbench/lockbench/workload"
)

// openClockStep is a client-clock-step step of a schedule whose window
// closes at the struck client's release of the struck hold (or when the
// run heals), as client-clock-step's own windows do.
type openClockStep struct {
	r      *stepRun
	ev     workload.Event
	since  int64 // the grant count at the step (cycles.mark)
	start  int64 // run clock, ns
	clock  adapterclient.ClockStepper
	offset time.Duration
	note   string
}

// clockStep plays a client-clock-step step at ev on the client's own
// goroutine: the wall clock of the client's adapter process steps back
// Size TTLs (the clock-offset preload; its monotonic clock stays). The
// offset stays for the rest of the run, as in the scenario; the step's
// window lasts until the struck hold's release and lands when another
// client was granted the key meanwhile. A client whose lock runs in no
// adapter process the preload reaches is a missed step, not an error.
func (m *scheduled) clockStep(ctx context.Context, r *stepRun, ev workload.Event) {
	start := m.env.Clock.Now()
	clock, ok := ev.Process.(adapterclient.ClockStepper)
	if !ok || ev.Hold == 0 {
		recordWindow(m.env, start, start, history.Missed, fmt.Sprintf("%s: %s: not injected: client %d holds no lease in an adapter process whose wall clock the clock-offset preload steps", r.name(), r.st, ev.Client))
		return
	}
	since := m.seen.mark()
	f := &fault.ClientClockStep{Clock: clock, Client: ev.Client, Process: ev.Process, Step: -m.ttls(r.st.Size)}
	evidence, err := fault.Inject(context.WithoutCancel(ctx), f)
	if err != nil {
		recordWindow(m.env, start, m.env.Clock.Now(), history.Missed, fmt.Sprintf("%s: %s: not injected: %v", r.name(), r.st, err))
		return
	}
	m.mu.Lock()
	m.clockSteps[ev.Client] = &openClockStep{r: r, ev: ev, since: since, start: start, clock: clock, offset: f.Offset,
		note: fmt.Sprintf("%s: %s: %s; struck client %d (hold %d on %s)", r.name(), r.st, evidence, ev.Client, ev.Hold, ev.Key)}
	m.mu.Unlock()
}

// closeClockStep records the window of client's open clock step if it
// struck hold (hold 0: whatever it struck), ending now; when says what
// ended it.
func (m *scheduled) closeClockStep(client int, hold int64, when string) {
	m.mu.Lock()
	s := m.clockSteps[client]
	if s == nil || (hold != 0 && s.ev.Hold != hold) {
		m.mu.Unlock()
		return
	}
	delete(m.clockSteps, client)
	m.mu.Unlock()
	other := m.seen.has(client, s.ev.Key, s.since, false)
	recordWindow(m.env, s.start, m.env.Clock.Now(), landing(other), fmt.Sprintf("%s; %s (until %s); %s", s.note, grantedNote(other, "step's window"), when, clockSeenNote(s.clock, s.offset, when)))
}

// healClockSteps closes every clock step's window still open (its client
// never released again: it crashed, or the run ended).
func (m *scheduled) healClockSteps() {
	m.mu.Lock()
	var clients []int
	for c := range m.clockSteps {
		clients = append(clients, c)
	}
	m.mu.Unlock()
	for _, c := range clients {
		m.closeClockStep(c, 0, "the end of the run")
	}
}
