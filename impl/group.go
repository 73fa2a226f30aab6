package impl

// Groups of strategies in reports, in the order reports list them. A
// strategy's group follows from its Info (see Info.Group), so a strategy
// of a new kind lands in its group without a change to the report.
const (
	// GroupRedisSingle: a home-made lock on one Redis node (or a primary
	// with replicas).
	GroupRedisSingle = "Redis single-node"
	// GroupRedisQuorum: a home-made lock on a majority of independent
	// Redis nodes (Redlock).
	GroupRedisQuorum = "Redis quorum"
	// GroupFenced: a home-made lock whose grants carry fencing tokens.
	GroupFenced = "fenced"
	// GroupLibraries: an adapter around a published Redis lock library.
	GroupLibraries = "libraries"
	// GroupConsensus: a lock on a consensus store (etcd, ZooKeeper).
	GroupConsensus = "consensus locks"
)

// Group is the report group of the strategy i describes: GroupConsensus
// when its lock lives on a server other than Redis (Server), else
// GroupLibraries for a library adapter (Library), else GroupFenced when
// it issues fencing tokens, GroupRedisQuorum when it needs a quorum, and
// GroupRedisSingle otherwise.
func (i Info) Group() string {
	switch {
	case i.Server != ServerRedis:
		return GroupConsensus
	case i.Library != "":
		return GroupLibraries
	case i.Claims.Fencing:
		return GroupFenced
	case i.Claims.Quorum:
		return GroupRedisQuorum
	}
	return GroupRedisSingle
}
