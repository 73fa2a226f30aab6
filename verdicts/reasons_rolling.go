package verdicts

// Rolling restarts (rolling-restart).
//
// The nodes a renewed hold depends on restart one after another, empty,
// each after the holder's next renewal saw the previous one; the other
// clients wait until the renewal after the last restart has answered. A
// lock that checks its renewal's answer (a majority of the nodes for a
// quorum lock; the key's owner on its one primary) says lost there, and
// the holder stops before its write; the violations come from renewals
// that count a minority, a missing key or another owner's key as renewed.
const (
	rollingPrimary = "its two replicas restart first (the primary keeps the key), then the primary restarts empty and the replicas copy its empty keyspace; the holder's next renewal (the others held back) finds the key gone, and Lost stops the holder before its write"
)
