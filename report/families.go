package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/checker"
	"github.com/lockbench/lockbench/results"
)

// This file compares the families of locks scenario by scenario: the
// Redis locks against those on etcd and on ZooKeeper, one sentence each,
// from the runs' verdicts alone. A sentence states a difference only when
// the counts show one (a family that lost the lock in some runs, another
// in none); otherwise it says the families did alike.

// comparison is one sentence's scope: the scenarios whose runs count for
// the Redis family and those for the consensus families (the same
// scenario for a client fault; for a server fault each family's own).
type comparison struct {
	label            string
	redis, consensus []string
}

// comparisons lists the scopes in report order: the shared scenarios,
// then the server faults each family has its own form of.
var comparisons = []comparison{
	{"baseline", []string{"baseline"}, []string{"baseline"}},
	{"long-cs", []string{"long-cs"}, []string{"long-cs"}},
	{"gc-pause", []string{"gc-pause"}, []string{"gc-pause"}},
	{"crash-between", []string{"crash-between"}, []string{"crash-between"}},
	{"failover (Redis: failover-lost-write, sentinel-failover; etcd and ZooKeeper: leader-kill)",
		[]string{"failover-lost-write", "sentinel-failover"}, []string{"leader-kill"}},
	{"a paused server (Redis: node-pause; etcd and ZooKeeper: leader-pause)", []string{"node-pause"}, []string{"leader-pause"}},
	{"a lost majority (Redis: redlock-majority-down; etcd and ZooKeeper: quorum-loss)", []string{"redlock-majority-down"}, []string{"quorum-loss"}},
}

// familyCount is what one family's runs of a comparison showed.
type familyCount struct {
	name          string
	runs, broke   int      // runs with a decided exclusion verdict; of them, violated
	lost          int      // runs with lost updates (resource violated)
	brokeStrategy []string // strategies with a violated run, in order met
}

// familyOf is the family of a strategy: "Redis", "etcd" or "ZooKeeper",
// from its Server; in a file that predates that field, a strategy of the
// consensus group is placed by its name (etcd-*, zk-*).
func familyOf(in results.StrategyInfo) string {
	server := in.Server
	if server == "" && in.Group == "consensus locks" {
		switch {
		case strings.HasPrefix(in.Name, "etcd-"):
			server = "etcd"
		case strings.HasPrefix(in.Name, "zk-"):
			server = "zookeeper"
		}
	}
	switch server {
	case "etcd":
		return "etcd"
	case "zookeeper":
		return "ZooKeeper"
	}
	return "Redis"
}

// FamilyComparisons returns one sentence per comparison that at least two
// families ran, e.g. "failover (…): Redis lost the lock, etcd never did:
// exclusion broke in Redis 20 of 20 runs (token-lua; 20 with lost
// updates), etcd 0 of 20." Runs whose exclusion check
// was inconclusive or skipped are not counted.
func FamilyComparisons(f *results.File) []string {
	infos := map[string]results.StrategyInfo{}
	for _, in := range f.Strategies {
		infos[in.Name] = in
	}
	var out []string
	for _, c := range comparisons {
		counts := map[string]*familyCount{}
		var order []string
		for _, r := range f.Runs {
			fam := familyOf(infos[r.Strategy])
			scope := c.redis
			if fam != "Redis" {
				scope = c.consensus
			}
			if !slices.Contains(scope, r.Scenario) {
				continue
			}
			ex := r.Verdict.Exclusion
			if ex != checker.OK && ex != checker.Violated {
				continue
			}
			fc := counts[fam]
			if fc == nil {
				fc = &familyCount{name: fam}
				counts[fam] = fc
				order = append(order, fam)
			}
			fc.runs++
			if ex == checker.Violated {
				fc.broke++
				if !slices.Contains(fc.brokeStrategy, r.Strategy) {
					fc.brokeStrategy = append(fc.brokeStrategy, r.Strategy)
				}
			}
			if r.Verdict.Resource == checker.Violated {
				fc.lost++
			}
		}
		if len(order) < 2 {
			continue
		}
		slices.SortFunc(order, func(a, b string) int { return familyRank(a) - familyRank(b) })
		out = append(out, c.label+": "+compareSentence(order, counts))
	}
	return out
}

// familyRank orders families Redis, etcd, ZooKeeper.
func familyRank(f string) int {
	return slices.Index([]string{"Redis", "etcd", "ZooKeeper"}, f)
}

// compareSentence words the counts of the families in order.
func compareSentence(order []string, counts map[string]*familyCount) string {
	broke, held := 0, 0
	for _, f := range order {
		if counts[f].broke > 0 {
			broke++
		} else {
			held++
		}
	}
	part := func(i int, fc *familyCount) string {
		s := fmt.Sprintf("%s %d of %d", fc.name, fc.broke, fc.runs)
		if i == 0 {
			s += " runs"
		}
		var why []string
		if fc.broke > 0 {
			why = append(why, strings.Join(fc.brokeStrategy, ", "))
		}
		if fc.lost > 0 {
			why = append(why, fmt.Sprintf("%d with lost updates", fc.lost))
		}
		if len(why) > 0 {
			s += " (" + strings.Join(why, "; ") + ")"
		}
		return s
	}
	var parts []string
	for i, f := range order {
		parts = append(parts, part(i, counts[f]))
	}
	list := "exclusion broke in " + strings.Join(parts, ", ")
	switch {
	case broke == 0:
		return "no family lost the lock: " + list + "."
	case held == 0:
		return "every family lost the lock in some runs: " + list + "."
	}
	var lost, kept []string
	for _, f := range order {
		if counts[f].broke > 0 {
			lost = append(lost, f)
		} else {
			kept = append(kept, f)
		}
	}
	return fmt.Sprintf("%s lost the lock, %s never did: %s.", strings.Join(lost, " and "), strings.Join(kept, " and "), list)
}
