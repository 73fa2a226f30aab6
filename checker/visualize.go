package checker

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/lockbench/lockbench/checker/witness"
	"github.com/lockbench/lockbench/history"
)

// visualize re-runs porcupine with linearization info on pops and writes its
// HTML to path, annotated with the history's nemesis windows, the crashes and
// lost leases on the keys keep accepts (all if keep is nil), and extra. It
// returns path, or an error naming it.
//
// Porcupine draws one row per ClientId from 0 to the largest, and streams
// are numbered over the whole run, so the streams shown are renumbered
// 0..n-1 in order; operation labels name the client ("c3").
func visualize(model porcupine.Model, pops []porcupine.Operation, ops []history.Operation, keep func(key string) bool, extra []porcupine.Annotation, path string, timeout time.Duration) (string, error) {
	row := map[int]int{}
	var streams []int
	for _, op := range pops {
		if _, ok := row[op.ClientId]; !ok {
			row[op.ClientId] = 0
			streams = append(streams, op.ClientId)
		}
	}
	sort.Ints(streams)
	for i, s := range streams {
		row[s] = i
	}
	shown := make([]porcupine.Operation, len(pops))
	for i, op := range pops {
		op.ClientId = row[op.ClientId]
		shown[i] = op
	}
	var notes []porcupine.Annotation
	for _, a := range append(annotations(ops, keep), extra...) {
		if a.Tag == "" {
			r, ok := row[a.ClientId]
			if !ok {
				continue // a client event on a stream not shown
			}
			a.ClientId = r
		}
		notes = append(notes, a)
	}
	_, info := porcupine.CheckOperationsVerbose(model, shown, timeout)
	info.AddAnnotations(notes)
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("checker: visualization folder: %w", err)
		}
	}
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		return "", fmt.Errorf("checker: write visualization %s: %w", path, err)
	}
	return path, nil
}

// annotations turns nemesis windows into annotations on a "nemesis" row, and
// crashes and lost leases on kept keys into point annotations on the
// client's stream row.
func annotations(ops []history.Operation, keep func(key string) bool) []porcupine.Annotation {
	var as []porcupine.Annotation
	for _, op := range ops {
		switch op.Kind {
		case history.Nemesis:
			desc := op.Note
			if desc == "" {
				desc = "fault"
			}
			as = append(as, porcupine.Annotation{
				Tag:             "nemesis",
				Start:           op.Invoke,
				End:             op.Complete,
				Description:     desc,
				Details:         fmt.Sprintf("%s from %s to %s ms", desc, ms(op.Invoke), ms(op.Complete)),
				BackgroundColor: "#fde2a7",
			})
		case history.Crash, history.Lost:
			if keep != nil && !keep(op.Key) {
				continue
			}
			desc := "lease lost"
			if op.Kind == history.Crash {
				desc = strings.TrimSpace("crash " + op.Note)
			}
			as = append(as, porcupine.Annotation{
				ClientId:        op.Stream,
				Start:           op.Invoke,
				End:             op.Complete,
				Description:     desc,
				Details:         fmt.Sprintf("c%d h%d %s %s at %s ms", op.Client, op.Hold, desc, op.Key, ms(op.Invoke)),
				BackgroundColor: "#d9d9d9",
			})
		}
	}
	return as
}

// resourcePath is where the resource visualisation goes: path with
// "-resource" inserted before its extension, ".html" if it has none.
func resourcePath(path string) string {
	ext := filepath.Ext(path)
	if ext == "" {
		return path + "-resource.html"
	}
	return strings.TrimSuffix(path, ext) + "-resource" + ext
}

// span is an operation's metadata for the visualisation: what the interval
// is and its bounds in ns since run start.
type span struct {
	what      string
	call, ret int64
}

// withSpans returns a copy of ops with each operation's Metadata set to its
// span (what names it; "" leaves none), for a visualisation. The checks
// themselves run without Metadata.
func withSpans(ops []porcupine.Operation, what func(porcupine.Operation) string) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		if w := what(op); w != "" {
			op.Metadata = span{w, op.Call, op.Return}
		}
		out[i] = op
	}
	return out
}

// describeSpan is porcupine's DescribeOperationMetadata: the interval in ms.
func describeSpan(meta interface{}) string {
	s, ok := meta.(span)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s [%s, %s] ms since run start", s.what, ms(s.call), ms(s.ret))
}

// overlapAnnotation marks an exclusion witness on porcupine's
// visualisation: the interval where both holds certainly held the key, on
// an "overlap KEY" row.
func overlapAnnotation(o witness.Overlap) porcupine.Annotation {
	return porcupine.Annotation{
		Tag:             "overlap " + o.Key,
		Start:           o.BothFromNs,
		End:             o.BothToNs,
		Description:     fmt.Sprintf("h%d ∩ h%d", o.A.Hold, o.B.Hold),
		Details:         o.String(),
		BackgroundColor: "#f4a6a6",
	}
}

// resourceAnnotation marks a resource witness on porcupine's visualisation:
// the accepted write (or the stretch porcupine rejects), on a row named
// after the witness's kind and key.
func resourceAnnotation(w witness.ResourceWitness) porcupine.Annotation {
	desc := string(w.Kind)
	if w.Write != nil {
		desc = fmt.Sprintf("%s c%d h%d", w.Kind, w.Write.Client, w.Write.Hold)
	}
	return porcupine.Annotation{
		Tag:             string(w.Kind) + " " + w.Key,
		Start:           w.FromNs,
		End:             w.ToNs,
		Description:     desc,
		Details:         w.String(),
		BackgroundColor: "#f4a6a6",
	}
}
