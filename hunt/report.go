package hunt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/lockbench/lockbench/chaos/schedule"
	"github.com/lockbench/lockbench/history"
	"github.com/lockbench/lockbench/outdir"
)

// File names of a hunt's folder.
const (
	ReportJSON     = "hunt.json"
	ReportMarkdown = "report.md"
	ReportHTML     = "report.html"
)

// Report is a hunt's outcome, written as hunt.json (WriteReport).
type Report struct {
	Tool     string `json:"tool"`
	Commit   string `json:"commit"`
	Command  string `json:"command"`
	Strategy string `json:"strategy"`
	Seed     int64  `json:"seed"`
	// Budget is the hunt's wall-clock budget; Elapsed what it took, in s.
	Budget   string  `json:"budget"`
	ElapsedS float64 `json:"elapsed_s"`
	Started  string  `json:"started"`
	Finished string  `json:"finished"`
	// Ended says why the hunt ended: "budget spent", "interrupted", or
	// the error that stopped it.
	Ended string `json:"ended"`
	// Workload is the base workload of every run: clients, keys, TTL and
	// duration in ms (a schedule may raise the TTL and the duration: each
	// run's results say so).
	Workload Workload `json:"workload"`
	// Primitives are the primitives drawn from; Left those left out, with
	// the reason; Events the lock events the lock reaches.
	Primitives []string          `json:"primitives"`
	Left       map[string]string `json:"left_out,omitempty"`
	Events     []string          `json:"events"`
	// Schedules counts the schedules drawn and run; Runs every run made
	// (shrinking and reproductions included).
	Schedules int `json:"schedules"`
	Runs      int `json:"runs"`
	// Steps counts the steps drawn per primitive.
	Steps map[string]int `json:"steps_drawn"`
	// Coverage is, per primitive and lock event, how many steps were
	// drawn, struck (their event came) and landed.
	Coverage []Cell `json:"coverage"`
	// Predicted counts the violations the lock's expectation predicted,
	// per class ("exclusion | client-pause"): not surprises.
	Predicted map[string]int `json:"predicted,omitempty"`
	// Clean, Inconclusive and Failed count the search runs with no
	// violation, with a gated check short of evidence, and those that
	// could not be judged (an overloaded harness, a fault that failed to
	// heal).
	Clean        int `json:"clean"`
	Inconclusive int `json:"inconclusive"`
	Failed       int `json:"failed"`
	// Surprises are the surprises found, each shrunk.
	Surprises []Surprise `json:"surprises"`
	// Tried lists every schedule run, in order, with its outcome.
	Tried []Tried `json:"tried"`

	stoppedAfter int // Options.StopAfter, when it ended the hunt
	stoppedAt    int // Options.MaxSchedules, when it ended the hunt
}

// Workload is the base workload of a hunt's runs.
type Workload struct {
	Clients    int     `json:"clients"`
	Keys       int     `json:"keys"`
	TTLMs      float64 `json:"ttl_ms"`
	DurationMs float64 `json:"duration_ms"`
}

// Cell is one (primitive, lock event) pair of the fault space.
type Cell struct {
	Primitive string `json:"primitive"`
	On        string `json:"on"`
	Drawn     int    `json:"drawn"`
	Struck    int    `json:"struck"`
	Landed    int    `json:"landed"`
}

// Tried is one search run: its schedule and outcome.
type Tried struct {
	Schedule schedule.Schedule `json:"schedule"`
	Outcome  Outcome           `json:"outcome"`
}

// Surprise is one surprise, shrunk.
type Surprise struct {
	N int `json:"n"`
	// Check is the check that had to hold and failed; Class its class
	// (check | primitives).
	Check string `json:"check"`
	Class string `json:"class"`
	// Expectation is why the check had to hold (the run's reason).
	Expectation string `json:"expectation"`
	// Found is the schedule it was found with, FoundSeed its seed,
	// FoundCase the whole case.
	Found     string `json:"found"`
	FoundSeed int64  `json:"found_seed"`
	FoundCase Case   `json:"found_case"`
	// SeenAgain counts later search runs of the same class.
	SeenAgain int `json:"seen_again"`
	// Minimal is the smallest case that still failed the check; Shrunk
	// the simplifications taken; Candidates how many were tested;
	// ShrinkStopped says the budget cut the shrink short.
	Minimal       Case     `json:"minimal"`
	Shrunk        []string `json:"shrunk"`
	Candidates    int      `json:"candidates"`
	ShrinkStopped bool     `json:"shrink_stopped,omitempty"`
	// Tally is how many seeds of the minimal case failed the check;
	// NotShrunk says the found case did not reproduce in the hunt's need
	// of seeds, so it was not shrunk (Minimal is the found case): a
	// one-off, reported with its witness but not counted for exit 1.
	NotShrunk bool `json:"not_shrunk,omitempty"`
	// Reproduces is Tally ≥ the hunt's need.
	Tally      Tally `json:"tally"`
	Reproduces bool  `json:"reproduces"`
	// ScheduleFile, Folder and Timelines are relative to the hunt's
	// folder: the minimal schedule, the reproduction runs' results
	// (report.md, index.html), their timeline plots.
	ScheduleFile string   `json:"schedule_file"`
	Folder       string   `json:"folder,omitempty"`
	Timelines    []string `json:"timelines,omitempty"`
	// Command replays the minimal case (lockbench run --schedule).
	Command string `json:"command,omitempty"`
	// Unexpected is the failing run's verdict line; Witness its witness.
	Unexpected string   `json:"unexpected,omitempty"`
	Witness    []string `json:"witness,omitempty"`
}

// newReport starts a hunt's report.
func newReport(o Options, sp Space, clients, keys int, ttl, d time.Duration) *Report {
	return &Report{Tool: "lockbench " + bench.Version, Commit: bench.Commit(), Command: o.Command, Strategy: o.Spec.Strategy, Seed: o.Seed,
		Budget: o.Budget.String(), Started: time.Now().UTC().Format(time.RFC3339),
		Workload:   Workload{Clients: clients, Keys: keys, TTLMs: float64(ttl) / 1e6, DurationMs: float64(d) / 1e6},
		Primitives: sp.Names(), Left: sp.Left, Events: sp.Events, Steps: map[string]int{}, Predicted: map[string]int{}}
}

// record adds a search run of schedule s to the report.
func (r *Report) record(s schedule.Schedule, o Outcome) {
	r.Schedules++
	r.Tried = append(r.Tried, Tried{s, o})
	for i, st := range s.Steps {
		r.Steps[st.Fault]++
		c := r.cell(st.Fault, st.On)
		c.Drawn++
		if l, ok := o.Fired[i+1]; ok {
			c.Struck++
			if l == history.Landed {
				c.Landed++
			}
		}
	}
	switch {
	case o.Error != "":
		r.Failed++
	case o.Surprised():
	case len(o.Predicted) > 0:
		for _, check := range o.Predicted {
			r.Predicted[classOf(check, s)]++
		}
	case o.Inconclusive:
		r.Inconclusive++
	default:
		r.Clean++
	}
	if o.Surprised() {
		for _, check := range o.Predicted {
			r.Predicted[classOf(check, s)]++
		}
	}
}

// cell returns the coverage cell of (primitive, on), added if new.
func (r *Report) cell(p, on string) *Cell {
	for i := range r.Coverage {
		if r.Coverage[i].Primitive == p && r.Coverage[i].On == on {
			return &r.Coverage[i]
		}
	}
	r.Coverage = append(r.Coverage, Cell{Primitive: p, On: on})
	return &r.Coverage[len(r.Coverage)-1]
}

// alike returns the surprise a new one of check under schedule s (of
// class) is most likely the same as: one of the same class, or of the
// same check whose minimal schedule's primitives s all has (the extra
// faults of s were not needed there); nil if none.
func (r *Report) alike(check string, s schedule.Schedule, class string) *Surprise {
	for i := range r.Surprises {
		x := &r.Surprises[i]
		if x.Class == class {
			return x
		}
		if x.Check != check {
			continue
		}
		all := true
		for _, f := range x.Minimal.Schedule.Faults() {
			all = all && slices.Contains(s.Faults(), f)
		}
		if all {
			return x
		}
	}
	return nil
}

// finish closes the report: the time taken, why it ended, the runs.
func (r *Report) finish(h *hunter, err error) {
	r.Finished = time.Now().UTC().Format(time.RFC3339)
	r.ElapsedS = time.Since(h.start).Seconds()
	r.Runs = h.r.runs
	switch {
	case err == nil && r.stoppedAfter > 0:
		r.Ended = fmt.Sprintf("stopped after %d surprise(s) (--stop-after)", r.stoppedAfter)
	case err == nil && r.stoppedAt > 0:
		r.Ended = fmt.Sprintf("stopped after %d schedules (--schedules)", r.stoppedAt)
	case err == nil:
		r.Ended = "budget spent"
	case errors.Is(err, context.Canceled):
		r.Ended = "interrupted"
	default:
		r.Ended = err.Error()
	}
	sort.Slice(r.Coverage, func(i, j int) bool {
		if r.Coverage[i].Primitive != r.Coverage[j].Primitive {
			return r.Coverage[i].Primitive < r.Coverage[j].Primitive
		}
		return r.Coverage[i].On < r.Coverage[j].On
	})
}

// Reproduced reports whether a surprise reproduced (exit 1).
func (r *Report) Reproduced() bool { return r.reproduced() > 0 }

// reproduced counts the surprises that reproduced.
func (r *Report) reproduced() int {
	n := 0
	for _, s := range r.Surprises {
		if s.Reproduces {
			n++
		}
	}
	return n
}

// Covered says in one sentence what the budget covered: schedules and
// runs, the primitives drawn and how many (primitive, event) pairs
// struck.
func (r *Report) Covered() string {
	struck, pairs := 0, 0
	for _, c := range r.Coverage {
		pairs++
		if c.Struck > 0 {
			struck++
		}
	}
	return fmt.Sprintf("%d schedules (%d runs with shrinking) in %.0fs of a %s budget, over %d primitives; %d of the %d (primitive, lock event) pairs drawn struck at least once",
		r.Schedules, r.Runs, r.ElapsedS, r.Budget, len(r.Primitives), struck, pairs)
}

// WriteReport writes hunt.json, report.md and report.html into dir.
func WriteReport(dir string, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	var md bytes.Buffer
	Markdown(&md, r)
	var html bytes.Buffer
	if err := reportHTML.Execute(&html, struct {
		R  *Report
		MD string
	}{r, md.String()}); err != nil {
		return err
	}
	for name, data := range map[string][]byte{ReportJSON: append(b, '\n'), ReportMarkdown: md.Bytes(), ReportHTML: html.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return outdir.OutDirError(dir, err)
		}
	}
	return nil
}

// LoadReport reads a hunt.json.
func LoadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Text writes the report's summary for a terminal: what the budget
// covered, each surprise with its minimal schedule, tally, witness and
// replay command, the predicted violations by class.
func Text(w io.Writer, r *Report, dir string) {
	fmt.Fprintf(w, "hunt %s seed %d: %s\n", r.Strategy, r.Seed, r.Covered())
	if len(r.Surprises) == 0 {
		fmt.Fprintf(w, "no surprise: no run violated a check its expectation says must hold under its faults (%d clean, %d with predicted violations only, %d inconclusive, %d not judged)\n",
			r.Clean, predictedRuns(r), r.Inconclusive, r.Failed)
	}
	for _, s := range r.Surprises {
		fmt.Fprintf(w, "SURPRISE %d: %s must hold (%s) but was violated\n", s.N, s.Check, firstClause(s.Expectation))
		fmt.Fprintf(w, "  found: schedule %s, seed %d: %s\n", s.Found, s.FoundSeed, s.FoundCase)
		fmt.Fprintf(w, "  minimal: %s\n", s.Minimal)
		fmt.Fprintf(w, "  shrunk: %s (%d candidates tested%s)\n", takenText(s.Shrunk), s.Candidates, stoppedText(s.ShrinkStopped))
		fmt.Fprintf(w, "  reproduced in %s seeds %v%s\n", s.Tally, s.Tally.Seeds, oneOffText(s))
		for _, l := range s.Witness {
			fmt.Fprintf(w, "  witness: %s\n", l)
		}
		if s.Command != "" {
			fmt.Fprintf(w, "  replay: %s\n", s.Command)
		}
		for _, t := range s.Timelines {
			fmt.Fprintf(w, "  timeline: %s\n", filepath.Join(dir, t))
		}
	}
	if len(r.Predicted) > 0 {
		fmt.Fprintf(w, "predicted violations (counted, not surprises): %s\n", predictedText(r.Predicted))
	}
	fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, ReportMarkdown))
}

// predictedRuns counts search runs whose only violations were predicted.
func predictedRuns(r *Report) int {
	n := 0
	for _, t := range r.Tried {
		if !t.Outcome.Surprised() && len(t.Outcome.Predicted) > 0 && t.Outcome.Error == "" {
			n++
		}
	}
	return n
}

// predictedText is "exclusion | client-pause ×3, ..." by count.
func predictedText(m map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var kvs []kv
	for k, n := range m {
		kvs = append(kvs, kv{k, n})
	}
	sort.Slice(kvs, func(i, j int) bool { return kvs[i].n > kvs[j].n || kvs[i].n == kvs[j].n && kvs[i].k < kvs[j].k })
	out := make([]string, len(kvs))
	for i, x := range kvs {
		out[i] = fmt.Sprintf("%s ×%d", x.k, x.n)
	}
	return strings.Join(out, ", ")
}

// oneOffText notes a surprise that did not reproduce.
func oneOffText(s Surprise) string {
	switch {
	case s.NotShrunk:
		return ": a one-off, not shrunk and not counted for the exit code (its witness is the search run's)"
	case !s.Reproduces:
		return ": the minimal case did not reproduce in enough seeds; not counted for the exit code"
	}
	return ""
}

// stoppedText notes a shrink the budget cut short.
func stoppedText(stopped bool) string {
	if stopped {
		return "; cut short by the budget"
	}
	return ""
}

// firstClause is the text up to the first ';' (a reason's gist).
func firstClause(s string) string {
	if i := strings.Index(s, ";"); i > 0 {
		return s[:i]
	}
	return s
}

// Markdown writes the report as Markdown.
func Markdown(w io.Writer, r *Report) {
	fmt.Fprintf(w, "# lockbench hunt: %s\n\n", r.Strategy)
	fmt.Fprintf(w, "`%s`\n\n", r.Command)
	fmt.Fprintf(w, "%s. Ended: %s. Base workload: %d clients, %d keys, TTL %gms, %gms runs; seed %d; %s, commit %s.\n\n",
		r.Covered(), r.Ended, r.Workload.Clients, r.Workload.Keys, r.Workload.TTLMs, r.Workload.DurationMs, r.Seed, r.Tool, r.Commit)
	fmt.Fprintf(w, "## Surprises\n\n")
	if len(r.Surprises) == 0 {
		fmt.Fprintf(w, "None: no run violated a check its expectation says must hold under its faults. Runs: %d clean, %d with predicted violations only, %d inconclusive, %d not judged.\n\n",
			r.Clean, predictedRuns(r), r.Inconclusive, r.Failed)
	}
	for _, s := range r.Surprises {
		fmt.Fprintf(w, "### %d. %s must hold, violated\n\n", s.N, s.Check)
		fmt.Fprintf(w, "- why it must hold: %s\n", s.Expectation)
		fmt.Fprintf(w, "- found: schedule %s, seed %d: %s\n", s.Found, s.FoundSeed, s.FoundCase)
		if s.SeenAgain > 0 {
			fmt.Fprintf(w, "- seen again in %d later schedules of the same class (%s)\n", s.SeenAgain, s.Class)
		}
		fmt.Fprintf(w, "- **minimal**: %s\n", s.Minimal)
		fmt.Fprintf(w, "- shrunk: %s (%d candidates tested%s)\n", takenText(s.Shrunk), s.Candidates, stoppedText(s.ShrinkStopped))
		fmt.Fprintf(w, "- reproduced in **%s** seeds (%v)%s\n", s.Tally, s.Tally.Seeds, oneOffText(s))
		fmt.Fprintf(w, "- schedule file: [%s](%s)", s.ScheduleFile, s.ScheduleFile)
		if s.Folder != "" {
			fmt.Fprintf(w, "; runs: [%s/report.md](%s/report.md)", s.Folder, s.Folder)
		}
		fmt.Fprintln(w)
		if s.Unexpected != "" {
			fmt.Fprintf(w, "- verdict: %s\n", s.Unexpected)
		}
		for _, l := range s.Witness {
			fmt.Fprintf(w, "- witness: %s\n", l)
		}
		if s.Command != "" {
			fmt.Fprintf(w, "\n```sh\n%s\n```\n", s.Command)
		}
		for _, t := range s.Timelines {
			fmt.Fprintf(w, "\n![timeline](%s)\n", t)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Predicted violations (counted, not reported)\n\n")
	if len(r.Predicted) == 0 {
		fmt.Fprintf(w, "None.\n\n")
	} else {
		fmt.Fprintf(w, "| class (check \\| primitives) | runs |\n|---|---|\n")
		for _, x := range strings.Split(predictedText(r.Predicted), ", ") {
			i := strings.LastIndex(x, " ×")
			fmt.Fprintf(w, "| %s | %s |\n", strings.ReplaceAll(x[:i], "|", "\\|"), x[i+len(" ×"):])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Coverage of the fault space\n\n")
	fmt.Fprintf(w, "Primitives drawn: %s. Lock events the lock reaches: %s.\n\n", strings.Join(r.Primitives, ", "), strings.Join(r.Events, ", "))
	fmt.Fprintf(w, "| primitive | lock event | steps drawn | struck | landed |\n|---|---|---|---|---|\n")
	for _, c := range r.Coverage {
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d |\n", c.Primitive, c.On, c.Drawn, c.Struck, c.Landed)
	}
	fmt.Fprintln(w)
	if len(r.Left) > 0 {
		fmt.Fprintf(w, "Left out:\n\n")
		var names []string
		for n := range r.Left {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "- %s: %s\n", n, r.Left[n])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Schedules tried\n\n| schedule | seed | steps | struck | outcome |\n|---|---|---|---|---|\n")
	for _, t := range r.Tried {
		fmt.Fprintf(w, "| %s | %d | %s | %d of %d | %s |\n", t.Schedule.Name, t.Outcome.Seed, strings.ReplaceAll(t.Schedule.String(), "|", "\\|"),
			len(t.Outcome.Fired), len(t.Schedule.Steps), outcomeText(t.Outcome))
	}
}

// outcomeText is a search run's outcome in a few words.
func outcomeText(o Outcome) string {
	switch {
	case o.Error != "":
		return "not judged: " + firstClause(o.Error)
	case o.Surprised():
		return "**surprise**: " + strings.Join(o.Surprise, ", ")
	case len(o.Predicted) > 0:
		return "predicted: " + strings.Join(o.Predicted, ", ")
	case o.Inconclusive:
		return "inconclusive"
	}
	return "clean"
}

// reportHTML renders report.md in a page: the Markdown is shown as
// preformatted text next to links (no Markdown renderer is linked in).
var reportHTML = htmltemplate.Must(htmltemplate.New("hunt").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>lockbench hunt: {{.R.Strategy}}</title>
<style>body{font-family:sans-serif;max-width:72em;margin:2em auto}pre{white-space:pre-wrap}img{max-width:100%}</style></head>
<body><h1>lockbench hunt: {{.R.Strategy}}</h1>
<p>{{.R.Covered}}. Ended: {{.R.Ended}}.</p>
{{range .R.Surprises}}<h2>Surprise {{.N}}: {{.Check}} must hold, violated</h2>
<p>Reproduced in {{.Tally}} seeds. <a href="{{.ScheduleFile}}">schedule file</a>{{if .Folder}}, <a href="{{.Folder}}/index.html">runs</a>{{end}}</p>
{{if .Command}}<pre>{{.Command}}</pre>{{end}}
{{range .Timelines}}<img src="{{.}}" alt="timeline">{{end}}
{{end}}<h2>Report</h2><pre>{{.MD}}</pre></body></html>
`))
