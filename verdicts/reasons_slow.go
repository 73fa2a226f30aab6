package verdicts

// One node slow to answer one acquire (slow-node).
//
// The SET runs at once and its reply reaches the client 1.5×TTL later:
// on a one-node lock the key has expired by then, on a quorum lock the
// per-node timeout gave up on the slow node and the other four made the
// quorum. The struck holder is kept in its critical section until another
// client was granted the key and released it, then writes. A lock that
// counts its validity from the call's start sees none left (one node:
// the acquire fails; quorum: the check before the write stops it); a
// lock that trusts the late grant, or counts its validity from the end
// of the call, writes over the next owner.
const (
	slowTrusted  = "n1 answers the struck acquire 1.5×TTL late: the grant reaches the client after its key expired, nothing checks a validity, and kept in its critical section until another client was granted the key and released it, the holder writes over that owner's write"
	slowRenewal  = "n1 answers the struck acquire 1.5×TTL late, after its key expired: the first renewal (TTL/3 after the grant) finds the key gone or another's and Lost stops the holder, unless the next owner is granted and done before it: seed-dependent"
	slowValidity = "the validity counted from the call's start had run out when n1's late reply came"
)
