package report

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/results"
)

// maxContractWitnessLines bounds the contract witnesses a report shows per
// check of a run; results.json keeps up to witness.MaxWitnesses.
const maxContractWitnessLines = 5

// contractVerdicts lists a run's contract checks (verdicts.ContractChecks)
// with their verdicts, in report order.
func contractVerdicts(r results.Run) []struct {
	name   string
	status checker.Status
} {
	return []struct {
		name   string
		status checker.Status
	}{{"orphans", r.Verdict.Orphans}, {"lost", r.Verdict.Lost}, {"extends", r.Verdict.Extends}, {"reasons", r.Verdict.Reasons}}
}

// ContractSummary sums up a run's contract checks in a few words: "ok"
// when every one that ran held, else each check that did not hold with
// its verdict ("orphans violated"), "" when none was recorded (a file
// that predates them), "skipped" when none applied.
func ContractSummary(r results.Run) string {
	var bad []string
	ran, recorded := false, false
	for _, c := range contractVerdicts(r) {
		switch c.status {
		case "":
			continue
		case checker.OK:
			ran = true
		case checker.Skipped:
		default:
			ran = true
			bad = append(bad, c.name+" "+string(c.status))
		}
		recorded = true
	}
	switch {
	case !recorded:
		return ""
	case len(bad) > 0:
		return strings.Join(bad, ", ")
	case !ran:
		return string(checker.Skipped)
	}
	return string(checker.OK)
}

// ContractWitnessLines returns the lines of a run's contract witnesses,
// each prefixed by its check's name, at most most per check, with a line
// saying how many more results.json holds or the checker found.
func ContractWitnessLines(r results.Run, most int) []string {
	var out []string
	add := func(name string, lines []string, total int) {
		for i, l := range lines {
			if i == most {
				break
			}
			out = append(out, name+": "+l)
		}
		if total > min(len(lines), most) {
			out = append(out, fmt.Sprintf("%s: %d more", name, total-min(len(lines), most)))
		}
	}
	w := r.Witnesses
	add("orphans", lines(w.Orphans), w.Total.Orphans)
	add("lost", lines(w.Lost), w.Total.Lost)
	add("extends", lines(w.Extends), w.Total.Extends)
	add("reasons", lines(w.Reasons), w.Total.Reasons)
	return out
}

// lines is the String of each witness.
func lines[W fmt.Stringer](ws []W) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}
