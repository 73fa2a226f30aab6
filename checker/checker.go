// Package checker checks a recorded lockbench history and returns data, not
// bools: one Result per check (exclusion, protected resource, fencing tokens,
// reentrancy, liveness), each with a status, a violation count, a one-line
// message, the witnesses of its violations (see witness.Witnesses: the overlapping
// holds and the interval where both held, the lost update with its
// operations, ...) and a few lines of text derived from them; and the
// evidence the verdicts rest on (see measure.Evidence: holds, chances to overlap,
// outcomes, faults that landed).
//
// The contract is the "Checkers" section of docs/design.md. In short:
//
//   - Exclusion: per key, no two holds overlap. A hold (see measure.Holds) runs from
//     its acquire to the end of its use. Porcupine
//     (github.com/anishathalye/porcupine, a linearizability checker on the
//     Wing–Gong–Lowe search, as in Jepsen's Knossos) checks a mutex model
//     in which every hold is an Enter operation over [acquire invoke,
//     acquire complete] and an Exit operation over [end of use, release
//     complete or +inf]; a sweep-line over the same intervals runs beside it
//     and counts the overlapping pairs. The two must agree.
//   - Resource: porcupine checks the protected resource's reads and writes
//     one by one against a register with a fencing check; an accepted write
//     whose read value is not the current value is a lost update.
//   - Fencing: fencing tokens strictly increase across grants of a key.
//   - Reentrancy: reported counts match the nesting depth.
//   - Liveness: the harness's post-run probes find every key acquirable and
//     none left without a TTL; figures describe availability during the run.
//
// A porcupine timeout is reported as Inconclusive, never as a pass. On an
// exclusion or resource violation, porcupine's HTML visualisation is written
// when Options.VisualizationPath is set, with the nemesis windows of the
// history and the witnesses as annotations.
//
// All times in a history are nanoseconds since the run started; Details and
// messages print them as milliseconds since the run started.
package checker

import (
	"time"

	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// Status is a check's outcome, a string so that reports and results.json can
// carry it as is.
type Status string

// Statuses.
const (
	// OK: the check ran to the end and found no violation.
	OK Status = "ok"
	// Violated: the check found at least one violation; Details name them.
	Violated Status = "violated"
	// Inconclusive: the check could not decide (porcupine timed out, or the
	// checker disagreed with itself). Never a pass.
	Inconclusive Status = "inconclusive"
	// Skipped: the check does not apply to this history (e.g. no resource
	// operations, a non-reentrant strategy, no fencing tokens, no probes).
	Skipped Status = "skipped"
)

// defaultTimeout is the porcupine time limit per check when Options.Timeout is 0.
const defaultTimeout = 10 * time.Second

// maxDetails bounds Result.Details; a last line says how many were left out.
const maxDetails = 20

// Result is the outcome of one check.
type Result struct {
	// Status is ok, violated, inconclusive or skipped.
	Status Status
	// Violations counts what went wrong, one per witness found:
	// overlapping pairs of holds (exclusion), lost updates, stale writes and
	// stretches with no linearization (resource; at least 1 when violated),
	// grants whose fencing token does not increase (fencing), operations
	// with a wrong count (reentrancy), deadlocked or unacquirable keys
	// (liveness).
	Violations int
	// Message is one line for a report.
	Message string
	// Details are up to 20 lines naming the holds and operations involved
	// (clients, hold ids, times in ms since run start), one per witness
	// (the String of each), the last saying how many were left out.
	Details []string
	// TimedOut is true when Status is Inconclusive because porcupine ran
	// out of time (Options.Timeout): more time, not another run, would
	// decide it. Other inconclusive results are a disagreement between
	// the checker's own two methods (a bug) or a header it cannot read.
	TimedOut bool
	// Witnesses are the violations found, as data: only this check's list
	// and its Total are set, and only when Status is Violated (at most
	// witness.MaxWitnesses kept; Total counts all, and equals Violations).
	Witnesses witness.Witnesses
}

// Options tunes the porcupine-backed checks (Exclusion and Resource). The
// zero value is ready to use.
type Options struct {
	// Timeout bounds each porcupine check; a check that runs out of time is
	// Inconclusive. Default (0): defaultTimeout (10 s). Negative values are
	// treated as 0.
	Timeout time.Duration
	// VisualizationPath is where porcupine's HTML visualisation of a violated
	// exclusion check is written; a violated resource check writes to the
	// same path with "-resource" inserted before the extension (".html"
	// appended if the path has none). Default (""): nothing is written. The
	// history's nemesis windows, crashes and lost leases are added as
	// annotations, and the check's witnesses (up to 20): the intervals
	// both held, the accepted writes of lost updates and stale writes.
	VisualizationPath string

	// Renewal configures the renewal-liveness check (the faults' reach).
	Renewal RenewalOptions

	// pieceHolds and pieceOps override minPieceHolds and minPieceOps (tests).
	pieceHolds, pieceOps int
}

func (o Options) minPieceHolds() int {
	if o.pieceHolds > 0 {
		return o.pieceHolds
	}
	return minPieceHolds
}

func (o Options) minPieceOps() int {
	if o.pieceOps > 0 {
		return o.pieceOps
	}
	return minPieceOps
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return defaultTimeout
	}
	return o.Timeout
}

// Report is the outcome of every check on one history.
type Report struct {
	Exclusion  Result
	Resource   Result
	Fencing    Result
	Reentrancy Result
	Liveness   Result
	// Renewal is renewal liveness (Renewal): leases lost with no fault
	// while their holder ran. Gated for locks that claim renewal.
	Renewal Result
	// Orphans, Reasons, Lost and Extends are the contract checks every
	// lock must pass in every scenario (see Orphans, Reasons, Lost,
	// Extends). Reasons holds the reasons of failed releases and extends
	// against the server state.
	Orphans Result
	Reasons Result
	Lost    Result
	Extends Result
	// Figures are the liveness figures (see LivenessFigures).
	Figures LivenessFigures
	// Evidence counts what the verdicts rest on (see measure.EvidenceOf), with the
	// observer's and the reasons check's counts.
	Evidence measure.Evidence
	// Visualization is the path of the porcupine HTML written: the exclusion
	// one if exclusion was violated, else the resource one; "" if none.
	Visualization string
}

// Check runs every check on a history and collects the results. Exclusion
// and Resource each run porcupine once (twice on a violation when a
// visualisation is asked for), each bounded by o.Timeout.
func Check(h history.Header, ops []history.Operation, o Options) Report {
	var r Report
	var excPath, resPath string
	hs := measure.Holds(ops) // shared, read only, by the checks that take it
	r.Exclusion, excPath = exclusionOf(h, ops, hs, o)
	r.Resource, resPath = resource(h, ops, o)
	r.Fencing = fencingOf(h, hs)
	r.Reentrancy = Reentrancy(h, ops)
	r.Liveness, r.Figures = livenessOf(h, ops, hs)
	r.Renewal = renewalWith(h, ops, hs, o.Renewal)
	r.Orphans, r.Figures.OrphanFigures = Orphans(h, ops)
	r.Lost = lostWith(h, ops, hs)
	r.Extends = Extends(h, ops)
	var rf ReasonFigures
	r.Reasons, rf = Reasons(h, ops)
	r.Evidence = measure.EvidenceOf(ops, hs)
	observedEvidence(&r.Evidence, h, ops)
	r.Evidence.ReasonsStated, r.Evidence.ReasonsJudged = rf.Stated, rf.Judged
	r.Visualization = excPath
	if r.Visualization == "" {
		r.Visualization = resPath
	}
	return r
}
