package witness

import (
	"fmt"

	"github.com/lockbench/lockbench/history"
)

// ExtendWitness is an extends check witness: a renewal of a lease invoked
// after the release of that lease had completed ok (renewal outliving
// release: it may extend a key that is now another owner's).
type ExtendWitness struct {
	Key string `json:"key"`
	// Release is the release (ok, outermost) of the lease's token; Extend
	// the extend of the same token invoked after it completed.
	Release *history.Operation `json:"release"`
	Extend  *history.Operation `json:"extend"`
}

// String is the witness in one line, times in ms since run start.
func (w ExtendWitness) String() string {
	r, e := w.Release, w.Extend
	return fmt.Sprintf("%s: c%d extended token %q at [%s, %s] ms (%s), after its release completed ok at %s ms: renewal outlived release",
		w.Key, e.Client, e.Token, ms(e.Invoke), ms(e.Complete), e.Result, ms(r.Complete))
}
