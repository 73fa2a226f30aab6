package diff

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/lockbench/lockbench/results"
)

// Headline is the diff's answer in one line: how many gated differences
// (B worse than A), or "no difference shown at N runs".
func (r Report) Headline() string {
	if r.Gated > 0 {
		worst := r.Findings[0]
		return fmt.Sprintf("B is worse than A: %d gated difference(s); worst: %s: %s", r.Gated, worst.Scenario, worst.Figure)
	}
	better := 0
	for _, f := range r.Findings {
		if f.Significant && f.Better {
			better++
		}
	}
	s := fmt.Sprintf("no difference shown at %d runs a side: B is not significantly worse than A on any figure", r.Runs)
	if better > 0 {
		s += fmt.Sprintf(" (%d figure(s) significantly better)", better)
	}
	return s
}

// WriteText writes the report: the locks, the headline, the worst
// difference first with its witnesses from both sides, then every
// figure compared, scenario by scenario, and the notes.
func (r Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "lockbench diff\n  A: %s\n  B: %s\n", r.A, r.B)
	fmt.Fprintf(w, "%d scenario(s) × %d runs a side, interleaved (A then B, seed by seed); %d runs of A and %d of B completed; alpha %.2f, --max-regression %.0f%%\n",
		len(r.Scenarios), r.Runs, r.RunsA, r.RunsB, r.Alpha, 100*r.MaxRegression)
	fmt.Fprintln(w, r.Headline())
	for _, f := range r.Findings {
		if !f.Gated {
			break
		}
		fmt.Fprintf(w, "\nGATED %s / %s (%s)\n  A: %s\n  B: %s\n  %s; %s\n", f.Scenario, f.Figure, f.Class, f.A, f.B, f.Test, f.Verdict)
		writeWitnesses(w, "A", f.WitnessesA)
		writeWitnesses(w, "B", f.WitnessesB)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFIGURE\tA\tB\tVERDICT")
	for _, f := range r.Findings {
		v := f.Verdict
		if f.Gated {
			v = "GATED: " + v
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Scenario, f.Figure, f.A, f.B, v)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

func writeWitnesses(w io.Writer, side string, ws []string) {
	if len(ws) == 0 {
		fmt.Fprintf(w, "  witnesses %s: none\n", side)
		return
	}
	for _, x := range ws {
		fmt.Fprintf(w, "  witness %s: %s\n", side, x)
	}
}

// Section is the report's first section: the headline, then every figure
// worst first, then the witnesses of the gated ones.
func (r Report) Section() results.Section {
	s := results.Section{ID: "diff", Title: "Differences: B against A",
		Lead: []string{
			"A: " + r.A,
			"B: " + r.B,
			fmt.Sprintf("%d scenario(s) × %d runs a side, interleaved (A then B, seed by seed); tests: %s on the runs that show an event, %s on per-run and per-window figures; alpha %.2f; cost gated beyond --max-regression %.0f%%.",
				len(r.Scenarios), r.Runs, TestFisher, TestMannWhitney, r.Alpha, 100*r.MaxRegression),
			r.Headline(),
		},
		Header: []string{"scenario", "figure", "class", "A", "B", "verdict"},
	}
	for _, f := range r.Findings {
		v := f.Verdict
		if f.Gated {
			v = "GATED: " + v
		}
		s.Rows = append(s.Rows, []string{f.Scenario, f.Figure, f.Class, f.A, f.B, v})
		if f.Gated {
			for _, x := range f.WitnessesA {
				s.Notes = append(s.Notes, fmt.Sprintf("%s / %s, witness of A: %s", f.Scenario, f.Figure, x))
			}
			for _, x := range f.WitnessesB {
				s.Notes = append(s.Notes, fmt.Sprintf("%s / %s, witness of B: %s", f.Scenario, f.Figure, x))
			}
		}
	}
	s.Notes = append(s.Notes, r.Notes...)
	return s
}
