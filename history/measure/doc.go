// Package measure measures a recorded lockbench history, judging nothing:
// its holds (Holds: who believed it held which key, from when to when),
// grants and acquire latencies (Grants, AcquireLatencies, GrantCalls),
// the cost of a hold's lock calls and the idle time between holders
// (HoldCalls, Handoffs), fault windows and what the clients' calls came to
// inside them (FaultWindows, AvailabilityOf, ...Faults), the clients'
// outcomes (Outcomes), and the evidence a check's verdict rests on
// (EvidenceOf: holds, chances to overlap, outcomes, faults that landed).
//
// The checks (package checker) judge a history on these measurements; the
// cost figures, the reports and the plots draw them. They read the history
// alone, so a run and `lockbench check` of its saved history report the
// same figures. All times in a history are nanoseconds since the run
// started.
package measure
