package verdicts

// Lost replies (lost-reply, lost-reply-release, lost-reply-extend,
// lost-reply-reentrant).
//
// The command reaches the server and runs; its reply is dropped and the
// client sees its connection close, so the outcome is unknown to it
// (Jepsen's indeterminate operations). A correct lock reports it so and
// the key it may have set expires by its TTL: an orphan, a liveness
// figure, not a second owner. The violations come from locks that treat
// the unknown as a "no" and act on it: a second command that never comes
// (naive's PEXPIRE), a retry that does not look for its own token, a
// reentrant count taken twice.
const (
	orphanExpires = "the acquire ran (the key holds the client's token) but its reply was lost: the client reports the outcome unknown, and the key is an orphan that expires by its TTL; others wait up to a TTL (a liveness figure, not a violation)"
	releaseRan    = "the release ran (the key is gone) but its reply was lost: the client reports the outcome unknown and holds nothing; the next owner is granted a free key"
	extendRan     = "the renewal ran (the TTL was extended) but its reply was lost: the outcome is unknown, the next renewal TTL/3 later goes on, and Lost fires only after a TTL without a successful one"
	quorumOrphans = "every node ran the SET NX and lost its reply, so no node counts and the acquire fails; the unlock the client then sends to every node (redis.io distlock) deletes the orphans"
	quorumRelease = "every node ran the release and lost its reply: the client reports the outcome unknown and holds nothing; the keys are gone"
)
