package checker

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/anishathalye/porcupine"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/history/measure"
)

// Fencing modes of the protected resource (history.Header.Fencing).
const (
	fencingOff    = "off"
	fencingWrites = "writes"
	fencingAll    = "all"
)

// Resource checks the protected resource's operations (Read and Write, every
// key) one by one with porcupine, partitioned per key since each key guards
// its own resource value, which starts at 0 (long keys are cut into pieces
// at points where the cut is exact, see resourcePieces). A critical section is not
// atomic, so it is never modelled as one operation.
//
// The model's state is (value, highest fencing token seen):
//
//   - A Read with result ok is legal iff it returned the current value.
//   - A Write carries the value its CS read (Prev), the new value (Value) and
//     its fencing token (Fence). With fencing mode "writes" or "all"
//     (h.Fencing) it must be rejected (result fail) iff Fence < highest;
//     otherwise accepted (ok). An accepted write whose Prev is not the
//     current value is illegal: a lost update. It sets the value and raises
//     highest to Fence.
//   - With fencing "all", reads carry a Fence too and are rejected iff below
//     highest (a rejected read returns nothing); an accepted read raises
//     highest to its Fence, as the resource has then seen that token. This
//     is what lets "all" prevent the lost update that "writes" allows when
//     the stale holder writes before the new holder does.
//   - An operation with unknown outcome (info) may or may not have taken
//     effect: porcupine gives it an unbounded return time, and the model
//     applies it as the resource would have, so placing it last is the same
//     as it never happening.
//
// The status comes from porcupine: Violated when it finds no linearization,
// OK when it finds one; a porcupine timeout is Inconclusive. Skipped when
// the history has no resource operations.
//
// On a violation the witnesses (witness.ResourceWitness) are:
//
//   - lost updates, found by replaying each key's accepted writes in
//     completion order (the resource is linearizable by construction in
//     the harness, so completion order is its order of application unless
//     writes overlap): a write whose Prev is not the value left by the
//     previous one, with the write it overwrote and the read it computed
//     from; an info write whose value a later write read is taken as
//     applied;
//   - stale writes (fencing writes or all): accepted writes whose token is
//     below that of an accepted fenced operation completed before the
//     write was invoked (a lost update that is also one is one witness,
//     with FencedBy set);
//   - if neither finds anything (e.g. a stale read, or a rejection the
//     model forbids), the stretches of operations porcupine rejects (up to
//     10).
//
// Result.Violations is the number of witnesses (at least 1); the first
// witness.MaxWitnesses are kept, by key, then by the end of what they mark.
//
// On a violation, porcupine's visualisation of the pieces it rejects (up to
// 10) is written next to o.VisualizationPath (see Options), with the
// history's nemesis windows and the witnesses (up to 20) as annotations.
func Resource(h history.Header, ops []history.Operation, o Options) Result {
	r, _ := resource(h, ops, o)
	return r
}

// resInput is a resource operation's input; resOutput its outcome. An init
// input starts a piece (see resourcePieces) in state init.
type resInput struct {
	op    *history.Operation // into the checked history (a pointer keeps the boxed input small)
	piece int
	start bool
	init  resState
}

func (in resInput) pieceOf() int { return in.piece }

type resOutput struct {
	result history.Result
	value  int64 // for an accepted read: the value read
}

// resState is the resource model's state.
type resState struct {
	value, highest int64
}

// resModel is the resource model for one fencing mode.
type resModel struct {
	mode string
}

// fenced reports whether the resource checks the fencing token of op.
func (m resModel) fenced(op history.Operation) bool {
	return m.mode == fencingAll || m.mode == fencingWrites && op.Kind == history.Write
}

func (m resModel) step(s resState, in resInput, out resOutput) (bool, resState) {
	if in.start {
		return true, in.init
	}
	op := in.op
	fenced := m.fenced(*op)
	stale := fenced && op.Fence < s.highest
	switch out.result {
	case history.Fail:
		return stale, s
	case history.Info:
		if stale {
			return true, s
		}
	default: // ok
		if stale {
			return false, s
		}
		if op.Kind == history.Read && out.value != s.value || op.Kind == history.Write && op.Prev != s.value {
			return false, s
		}
	}
	if op.Kind == history.Write {
		s.value = op.Value
	}
	if fenced {
		s.highest = max(s.highest, op.Fence)
	}
	return true, s
}

func (m resModel) porcupine() porcupine.Model {
	return porcupine.Model{
		Partition: partitionByPiece,
		Init:      func() interface{} { return resState{} },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			ok, next := m.step(state.(resState), input.(resInput), output.(resOutput))
			return ok, next
		},
		Hash: func(state interface{}) uint64 {
			s := state.(resState)
			return uint64(s.value)*0x9e3779b97f4a7c15 ^ uint64(s.highest)
		},
		DescribeOperation: func(input, output interface{}) string {
			in, out := input.(resInput), output.(resOutput)
			op := *in.op
			if in.start {
				return fmt.Sprintf("%s continues: value=%d highest=%d", op.Key, in.init.value, in.init.highest)
			}
			fence := ""
			if m.fenced(op) || op.Fence != 0 {
				fence = fmt.Sprintf(" fence=%d", op.Fence)
			}
			res := "?"
			switch {
			case out.result == history.Fail:
				res = "rejected"
			case out.result == history.OK && op.Kind == history.Read:
				res = fmt.Sprint(out.value)
			case out.result == history.OK:
				res = "ok"
			}
			if op.Kind == history.Read {
				return fmt.Sprintf("c%d h%d read %s%s -> %s", op.Client, op.Hold, op.Key, fence, res)
			}
			return fmt.Sprintf("c%d h%d write %s %d→%d%s -> %s", op.Client, op.Hold, op.Key, op.Prev, op.Value, fence, res)
		},
		DescribeOperationMetadata: describeSpan,
		DescribeState: func(state interface{}) string {
			s := state.(resState)
			if m.mode == fencingOff {
				return fmt.Sprintf("value=%d", s.value)
			}
			return fmt.Sprintf("value=%d highest=%d", s.value, s.highest)
		},
	}
}

// resourcePieces turns the history's resource operations into porcupine
// operations (info operations never return), cut into pieces (see
// pieces.go) per key, keys in sorted order. With operations in invoke
// order, a new piece starts at operation X once the current piece has at
// least minOps operations, every operation so far has returned before X was
// invoked, and the state at that point is determined: highest is the
// largest token of the accepted fenced operations so far (a maximum does not
// depend on order), and the value is the one written by the piece's last
// accepted write if every other accepted write of the piece returned before
// it was invoked (it is then last in every linearization), or the value the
// piece started with if it has no accepted write. The new piece starts with
// a synthetic operation that sets that state. The cut is exact: every
// linearization orders the pieces one after the other, and if the pieces
// before a cut are linearizable they end in that state.
func (m resModel) resourcePieces(ops []history.Operation, minOps int) [][]porcupine.Operation {
	byKey := map[string][]int{}
	var keys []string
	for i, op := range ops {
		if op.Kind != history.Read && op.Kind != history.Write {
			continue
		}
		if _, ok := byKey[op.Key]; !ok {
			keys = append(keys, op.Key)
		}
		byKey[op.Key] = append(byKey[op.Key], i)
	}
	sort.Strings(keys)
	var pieces [][]porcupine.Operation
	for _, k := range keys {
		idx := byKey[k]
		sortIndexStable(idx, func(i int) int64 { return ops[i].Invoke })
		var (
			cur        []porcupine.Operation
			lastReturn int64 = -1 // latest return in the piece
			highest    int64      // highest accepted fenced token so far
			value      int64      // value at the start of the piece
			last       *history.Operation
			othersDone int64 = -1 // latest completion of the piece's other accepted writes
		)
		for _, i := range idx {
			op := ops[i]
			determined := last == nil || othersDone < last.Invoke
			if len(cur) >= minOps && lastReturn < op.Invoke && determined {
				if last != nil {
					value = last.Value
				}
				pieces = append(pieces, cur)
				cur = []porcupine.Operation{{
					ClientId: op.Stream,
					Input:    resInput{op: &history.Operation{Key: k}, piece: len(pieces), start: true, init: resState{value: value, highest: highest}},
					Output:   resOutput{result: history.OK},
					Call:     lastReturn, Return: lastReturn,
				}}
				last, othersDone = nil, -1
			}
			out := resOutput{result: op.Result}
			if op.Kind == history.Read && op.Result == history.OK {
				out.value = op.Value
			}
			ret := op.Complete
			if op.Result == history.Info {
				ret = measure.Inf
			}
			cur = append(cur, porcupine.Operation{ClientId: op.Stream, Input: resInput{op: &ops[i], piece: len(pieces)},
				Call: op.Invoke, Output: out, Return: ret})
			lastReturn = max(lastReturn, ret)
			if op.Result == history.OK && m.fenced(op) {
				highest = max(highest, op.Fence)
			}
			if op.Kind == history.Write && op.Result == history.OK {
				if last != nil {
					othersDone = max(othersDone, last.Complete)
				}
				last = &ops[i]
			}
		}
		if len(cur) > 0 {
			pieces = append(pieces, cur)
		}
	}
	return pieces
}

// resSpan names the interval of a resource operation for withSpans ("" for
// the synthetic start of a piece: no span).
func resSpan(op porcupine.Operation) string {
	in := op.Input.(resInput)
	if in.start {
		return ""
	}
	return string(in.op.Kind)
}

// replayLostUpdates replays each key's accepted writes in completion order
// (then invoke order) and returns the lost updates as witnesses (without
// their reads: see withReads), keys in sorted order. An accepted write whose
// Prev is not the value left by the write before it is a lost update, unless
// an info write of that value invoked before it completed explains it (taken
// as applied, once).
func replayLostUpdates(ops []history.Operation) []witness.ResourceWitness {
	writes := map[string][]int{} // indexes into ops
	infos := map[string][]int{}
	var keys []string
	for i := range ops {
		op := &ops[i]
		if op.Kind != history.Write {
			continue
		}
		ws, ok := writes[op.Key]
		if !ok {
			keys = append(keys, op.Key)
		}
		switch op.Result {
		case history.OK:
			writes[op.Key] = append(ws, i)
		case history.Info:
			infos[op.Key] = append(infos[op.Key], i)
			if !ok {
				writes[op.Key] = nil
			}
		default:
			if !ok {
				writes[op.Key] = nil
			}
		}
	}
	sort.Strings(keys)
	var lost []witness.ResourceWitness
	for _, k := range keys {
		ws := writes[k]
		slices.SortFunc(ws, func(i, j int) int { // stable: file order breaks ties
			a, b := &ops[i], &ops[j]
			if a.Complete != b.Complete {
				return cmp.Compare(a.Complete, b.Complete)
			}
			if a.Invoke != b.Invoke {
				return cmp.Compare(a.Invoke, b.Invoke)
			}
			return cmp.Compare(i, j)
		})
		pending := infos[k]
		var value int64
		last := -1 // the write that set value; -1: the initial value
		for _, wi := range ws {
			w := &ops[wi]
			if w.Prev != value {
				landed := -1
				for i, ii := range pending {
					if iw := &ops[ii]; iw.Invoke <= w.Complete && iw.Value == w.Prev {
						landed = i
						break
					}
				}
				if landed >= 0 {
					pending = append(pending[:landed:landed], pending[landed+1:]...)
				} else {
					var overwrote *history.Operation
					if last >= 0 {
						overwrote = opRef(ops[last])
					}
					lost = append(lost, witness.ResourceWitness{Key: k, Kind: witness.LostUpdate, Write: opRef(*w), Overwrote: overwrote,
						Current: value, FromNs: w.Invoke, ToNs: w.Complete})
				}
			}
			value = w.Value
			last = wi
		}
	}
	return lost
}

// staleWrites returns, per key in key order and in order of completion,
// the accepted writes that the fencing check (mode writes or all) had to
// reject: a write whose fencing token is below that of an accepted fenced
// operation that completed before the write was invoked. Such an operation
// is ordered before the write in every linearization and raised the highest
// token the resource has seen above the write's, so these are certain
// violations of the model. Info operations, which may not have taken
// effect, raise nothing here.
func (m resModel) staleWrites(ops []history.Operation) []witness.ResourceWitness {
	if m.mode == fencingOff {
		return nil
	}
	byKey := map[string][]int{}
	var keys []string
	for i, op := range ops {
		if (op.Kind == history.Read || op.Kind == history.Write) && op.Result == history.OK && m.fenced(op) {
			if _, ok := byKey[op.Key]; !ok {
				keys = append(keys, op.Key)
			}
			byKey[op.Key] = append(byKey[op.Key], i)
		}
	}
	sort.Strings(keys)
	var out []witness.ResourceWitness
	for _, k := range keys {
		done := append([]int(nil), byKey[k]...) // accepted fenced ops by completion
		sortIndexStable(done, func(i int) int64 { return ops[i].Complete })
		var writes []int // accepted writes by invoke
		for _, i := range byKey[k] {
			if ops[i].Kind == history.Write {
				writes = append(writes, i)
			}
		}
		sortIndexStable(writes, func(i int) int64 { return ops[i].Invoke })
		var found []witness.ResourceWitness
		next, top := 0, -1 // top: the highest token among done[:next]
		for _, w := range writes {
			for next < len(done) && ops[done[next]].Complete < ops[w].Invoke {
				if top < 0 || ops[done[next]].Fence > ops[top].Fence {
					top = done[next]
				}
				next++
			}
			if top >= 0 && ops[w].Fence < ops[top].Fence {
				found = append(found, witness.ResourceWitness{Key: k, Kind: witness.StaleWrite, Write: opRef(ops[w]), FencedBy: opRef(ops[top]),
					FromNs: ops[w].Invoke, ToNs: ops[w].Complete})
			}
		}
		sort.SliceStable(found, func(x, y int) bool { return found[x].Write.Complete < found[y].Write.Complete })
		out = append(out, found...)
	}
	return out
}

// mergeStale appends to lost the stale writes that are not lost updates
// too; a lost update that is also a stale write gets the stale write's
// FencedBy, so each bad write is one witness.
func mergeStale(lost, stale []witness.ResourceWitness) []witness.ResourceWitness {
	type id struct {
		client           int
		hold             int64
		invoke, complete int64
	}
	idOf := func(op *history.Operation) id { return id{op.Client, op.Hold, op.Invoke, op.Complete} }
	at := make(map[id]int, len(lost))
	for i, w := range lost {
		at[idOf(w.Write)] = i
	}
	out := lost
	for _, w := range stale {
		if i, ok := at[idOf(w.Write)]; ok {
			out[i].FencedBy = w.FencedBy
			continue
		}
		out = append(out, w)
	}
	return out
}

// withReads sets each witness's Read: the latest accepted read of the
// write's hold that completed by the write's invoke.
func withReads(ws []witness.ResourceWitness, ops []history.Operation) {
	holds := map[int64]bool{}
	for _, w := range ws {
		if w.Write != nil && w.Write.Hold != 0 {
			holds[w.Write.Hold] = true
		}
	}
	if len(holds) == 0 {
		return
	}
	reads := map[int64][]int{}
	for i, op := range ops {
		if op.Kind == history.Read && op.Result == history.OK && holds[op.Hold] {
			reads[op.Hold] = append(reads[op.Hold], i)
		}
	}
	for j, w := range ws {
		if w.Write == nil {
			continue
		}
		best := -1
		for _, i := range reads[w.Write.Hold] {
			if ops[i].Complete <= w.Write.Invoke && (best < 0 || ops[i].Complete > ops[best].Complete) {
				best = i
			}
		}
		if best >= 0 {
			ws[j].Read = opRef(ops[best])
		}
	}
}

// unexplained turns pieces porcupine rejects into not-linearizable
// witnesses: the piece's key, its number of operations, its first invoke
// and last finite completion.
func unexplained(pieces [][]porcupine.Operation, bad []int) []witness.ResourceWitness {
	var out []witness.ResourceWitness
	for _, p := range bad {
		w := witness.ResourceWitness{Kind: witness.NotLinearizable, FromNs: measure.Inf, ToNs: -1}
		for _, op := range pieces[p] {
			in := op.Input.(resInput)
			if in.start {
				continue
			}
			w.Key = in.op.Key
			w.Ops++
			w.FromNs = min(w.FromNs, op.Call)
			w.ToNs = max(w.ToNs, op.Call)
			if op.Return != measure.Inf {
				w.ToNs = max(w.ToNs, op.Return)
			}
		}
		if w.Ops > 0 {
			out = append(out, w)
		}
	}
	return out
}

// sortResourceWitnesses orders witnesses by key, then by the end of what
// they mark, lost updates before stale writes at equal times.
func sortResourceWitnesses(ws []witness.ResourceWitness) {
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := ws[i], ws[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.ToNs != b.ToNs {
			return a.ToNs < b.ToNs
		}
		return a.Kind < b.Kind
	})
}

func resource(h history.Header, ops []history.Operation, o Options) (Result, string) {
	mode := h.Fencing
	if mode == "" {
		mode = fencingOff
	}
	if mode != fencingOff && mode != fencingWrites && mode != fencingAll {
		return Result{Status: Inconclusive, Message: fmt.Sprintf("unknown fencing mode %q in the header (want off, writes or all)", h.Fencing)}, ""
	}
	var reads, writes, rejected, unknown int
	keys := map[string]bool{}
	for _, op := range ops {
		if op.Kind != history.Read && op.Kind != history.Write {
			continue
		}
		keys[op.Key] = true
		if op.Kind == history.Read {
			reads++
		} else {
			writes++
		}
		switch op.Result {
		case history.Fail:
			rejected++
		case history.Info:
			unknown++
		}
	}
	if reads+writes == 0 {
		return Result{Status: Skipped, Message: "no resource operations"}, ""
	}
	m := resModel{mode: mode}
	model := m.porcupine()
	pieces := m.resourcePieces(ops, o.minPieceOps())
	porc := checkPieces(model, pieces, o.timeout())

	counts := fmt.Sprintf("%d reads and %d writes on %s (fencing %s; %d rejected, %d unknown)", reads, writes, keysOf(len(keys)), mode, rejected, unknown)
	var r Result
	switch porc {
	case porcupine.Ok:
		r.Status = OK
		r.Message = counts + ": linearizable, no lost update"
		return r, ""
	case porcupine.Unknown:
		r.Status, r.TimedOut = Inconclusive, true
		r.Message = fmt.Sprintf("porcupine timed out after %s on %s; completion-order replay finds %d lost update(s)", o.timeout(), counts, len(replayLostUpdates(ops)))
		return r, ""
	}
	r.Status = Violated
	lost := replayLostUpdates(ops)
	stale := m.staleWrites(ops)
	found := mergeStale(lost, stale)
	var bad []int // pieces porcupine rejects, when computed
	if len(found) == 0 {
		bad = illegalPieces(model, pieces, o.timeout(), maxVizPieces)
		found = unexplained(pieces, bad)
	}
	sortResourceWitnesses(found)
	total := len(found)
	found = keep(found)
	withReads(found, ops)
	r.Violations = max(total, 1)
	r.Witnesses = witness.Witnesses{Resource: found, Total: witness.WitnessCounts{Resource: total}}
	r.Details = detailsOf(found, total)
	badKeys := map[string]bool{}
	for _, w := range found {
		badKeys[w.Key] = true
	}
	switch {
	case len(lost) > 0 && len(stale) > 0:
		r.Message = fmt.Sprintf("%d lost update(s) and %d stale write(s) accepted despite fencing on %d of %d keys: %s", len(lost), len(stale), len(badKeys), len(keys), counts)
	case len(lost) > 0:
		r.Message = fmt.Sprintf("%d lost update(s) on %d of %d keys: %s", len(lost), len(badKeys), len(keys), counts)
	case len(stale) > 0:
		r.Message = fmt.Sprintf("%d stale write(s) accepted despite fencing on %d of %d keys: %s", len(stale), len(badKeys), len(keys), counts)
	default:
		r.Message = "not linearizable (a stale read or a fencing decision the model forbids; no lost update in completion order): " + counts
	}
	if o.VisualizationPath == "" {
		return r, ""
	}
	// Show the pieces porcupine rejects.
	if bad == nil {
		bad = illegalPieces(model, pieces, o.timeout(), maxVizPieces)
	}
	var vops [][]porcupine.Operation
	shownKeys := map[string]bool{}
	for _, p := range bad {
		vops = append(vops, withSpans(pieces[p], resSpan))
		shownKeys[pieces[p][0].Input.(resInput).op.Key] = true
	}
	if len(vops) == 0 {
		for _, p := range pieces {
			vops = append(vops, withSpans(p, resSpan))
		}
	}
	keep := func(k string) bool { return len(shownKeys) == 0 || shownKeys[k] }
	var notes []porcupine.Annotation
	for _, w := range found {
		if keep(w.Key) && len(notes) < maxDetails {
			notes = append(notes, resourceAnnotation(w))
		}
	}
	path, err := visualize(model, flatten(vops), ops, keep, notes, resourcePath(o.VisualizationPath), o.timeout())
	if err != nil {
		r.Message += "; visualization not written: " + err.Error()
		return r, ""
	}
	return r, path
}
