package figures

import (
	"cmp"
	"math"
	"slices"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/stats"
)

// CapacityPoint is one client count of a strategy's capacity curve
// (CapacityOf): its uncontended cost runs (File.Cost) at that many
// clients, each client on a key of its own, so nobody waits for the lock
// and the lock service itself is what the clients load.
type CapacityPoint struct {
	// Clients is the number of clients, and of keys.
	Clients int
	// GrantsPerS is grants per second: the median with its 95% interval
	// over the time windows of the point's runs (Estimate); runs without
	// windows give the median of their whole-run rate, without interval.
	GrantsPerS stats.Estimate
	// ServerCmdsPerGrant is the median over the point's runs of the
	// commands the servers executed per grant (Run.RoundTripsPerGrant:
	// INFO commandstats, Lua's inner commands included); 0 when no run
	// has it (etcd and ZooKeeper report no such count to lockbench, and a
	// Redis node that restarted loses it).
	ServerCmdsPerGrant float64
	// ClientCmdsPerGrant is the median over the point's runs of the
	// commands the clients sent per grant (Run.ClientCommandsPerGrant); 0
	// when unknown (locks on etcd and ZooKeeper).
	ClientCmdsPerGrant float64
	// Busy is true when a run of the point was measured on a busy machine
	// (Run.Busy): its grants/s then says more about the machine.
	Busy bool
}

// Capacity is a strategy's throughput against the number of clients with
// a key per client (no contention): its Points by increasing client
// count, the Peak and the Knee, both indexes into Points.
type Capacity struct {
	// Strategy is the strategy's name.
	Strategy string
	// Points holds one point per client count, fewest clients first.
	Points []CapacityPoint
	// Peak is the index of the point with the highest median grants/s
	// (the fewest clients on a tie).
	Peak int
	// Knee is the index of the fewest clients whose median grants/s
	// reaches 90% of the peak's (kneeShare): where adding clients stops
	// adding grants. -1 when no point before the last reaches it: the
	// curve may still be rising at the most clients measured (or only one
	// point was measured), so no knee was seen.
	Knee int
}

// kneeShare is the share of the peak's grants/s at which the curve counts
// as flat (Capacity.Knee).
const kneeShare = 0.9

// CapacityOf returns the capacity curve of every strategy among cost
// (File.Cost: uncontended runs, a key per client), in order of each
// strategy's first run; runs that could not complete (Error set) are left
// out, and a strategy with none has no curve.
func CapacityOf(cost []results.Run) []Capacity {
	type key struct {
		strategy string
		clients  int
	}
	var order []string
	byKey := map[key][]results.Run{}
	for _, r := range cost {
		if r.Error != "" {
			continue
		}
		if !slices.Contains(order, r.Strategy) {
			order = append(order, r.Strategy)
		}
		k := key{r.Strategy, r.Config.Clients}
		byKey[k] = append(byKey[k], r)
	}
	var out []Capacity
	for _, st := range order {
		c := Capacity{Strategy: st}
		for k, rs := range byKey {
			if k.strategy == st {
				c.Points = append(c.Points, capacityPoint(k.clients, rs))
			}
		}
		slices.SortFunc(c.Points, func(a, b CapacityPoint) int { return cmp.Compare(a.Clients, b.Clients) })
		c.Peak, c.Knee = peakAndKnee(c.Points)
		out = append(out, c)
	}
	return out
}

// capacityPoint is the point of runs, all at clients clients.
func capacityPoint(clients int, runs []results.Run) CapacityPoint {
	p := CapacityPoint{Clients: clients, GrantsPerS: stats.EstimateOf(SamplesOf(runs, FigureGrantsPerS))}
	var rates, server, client []float64
	for _, r := range runs {
		rates = append(rates, r.ThroughputPerS)
		if r.RoundTripsPerGrant > 0 {
			server = append(server, r.RoundTripsPerGrant)
		}
		if r.ClientCommandsPerGrant > 0 {
			client = append(client, r.ClientCommandsPerGrant)
		}
		p.Busy = p.Busy || r.Busy()
	}
	if p.GrantsPerS.N == 0 {
		p.GrantsPerS = stats.Estimate{Median: stats.SpreadOf(rates).Median, Low: math.Inf(-1), High: math.Inf(1), N: len(rates)}
	}
	if len(server) > 0 {
		p.ServerCmdsPerGrant = stats.SpreadOf(server).Median
	}
	if len(client) > 0 {
		p.ClientCmdsPerGrant = stats.SpreadOf(client).Median
	}
	return p
}

// peakAndKnee returns the indexes of the peak and the knee of points
// (Capacity.Peak, Capacity.Knee); 0 and -1 without points.
func peakAndKnee(points []CapacityPoint) (peak, knee int) {
	if len(points) == 0 {
		return 0, -1
	}
	for i, p := range points {
		if p.GrantsPerS.Median > points[peak].GrantsPerS.Median {
			peak = i
		}
	}
	knee = -1
	for i, p := range points[:len(points)-1] {
		if p.GrantsPerS.Median >= kneeShare*points[peak].GrantsPerS.Median {
			knee = i
			break
		}
	}
	return peak, knee
}
