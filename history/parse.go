package history

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	segjson "github.com/segmentio/encoding/json"
)

// How Parse reads a history (docs/performance.md, "Checker"): the whole
// file in memory, its operation lines cut into one part per core and
// decoded side by side, each into its own slot of one exactly sized slice.
// A line is decoded by github.com/segmentio/encoding/json, without copying
// its strings, when it is plain ASCII without escapes or control
// characters (every line lockbench writes, short of an error text with a
// quote in it); any other line, and any line that decoder refuses, goes
// to encoding/json, whose verdict and error message are the file
// format's (TestFastDecodeMatchesJSON holds the two to the same results).
// The strings of an operation are then moved out of the file's memory:
// the few distinct kinds, results, keys, nodes, errors, reasons and notes
// are interned, the tokens copied into shared blocks, so the file's
// memory is freed once read and a million operations cost a few
// thousand allocations, not millions.

// parallelFrom is the file size from which Parse decodes on every core.
const parallelFrom = 1 << 20

// arenaBlock is the size of the blocks the decoded tokens are copied into.
const arenaBlock = 64 << 10

// maxInterned bounds each part's table of interned strings; strings past
// it are copied (a history whose error texts are all different).
const maxInterned = 1 << 14

// fastFlags make segmentio's decoder behave as encoding/json's Decoder
// with DisallowUnknownFields, strings pointing into the line.
const fastFlags = segjson.DontCopyString | segjson.DisallowUnknownFields

// parseBytes parses a whole history file held in data; readErr is the
// error that ended reading it (nil at EOF), reported after the lines read.
func parseBytes(data []byte, readErr error) (Header, []Operation, error) {
	var h Header
	first, rest, hasRest := bytes.Cut(data, []byte{'\n'})
	total := bytes.Count(data, []byte{'\n'}) // lines, as bufio.Scanner counts them
	if len(data) > 0 && data[len(data)-1] != '\n' {
		total++
	}
	if len(data) > 0 {
		if len(first) >= maxLine {
			return h, nil, tooLong(1)
		}
		if b := bytes.TrimSpace(first); len(b) > 0 {
			if err := parseHeader(b, &h); err != nil {
				return h, nil, err
			}
		}
	}
	if !hasRest {
		rest = nil
	}
	parts := splitLines(rest, 2)
	ops := make([]Operation, max(total-1, 0))
	if len(parts) == 1 {
		parts[0].parse(ops)
	} else {
		var wg sync.WaitGroup
		for i := range parts {
			wg.Go(func() { parts[i].parse(ops) })
		}
		wg.Wait()
	}
	ended, read := int64(-1), int64(0) // the end line's count (-1: none yet); operations read
	for i := range parts {
		p := &parts[i]
		if ended >= 0 && p.firstLine > 0 {
			return h, nil, fmt.Errorf("%w: line %d: an operation after the end line", ErrCorrupt, p.firstLine)
		}
		if p.err != nil {
			return h, nil, p.err
		}
		if p.ended {
			ended = p.end.EndOperations
			h.Interrupted, h.Incomplete, h.ClockAfter, h.MaxStallNs = p.end.Interrupted, p.end.Incomplete, p.end.Clock, p.end.MaxStallNs
		}
		read += p.n
	}
	if readErr != nil {
		return h, nil, fmt.Errorf("%w: after line %d: %v", ErrCorrupt, total, readErr)
	}
	if total == 0 {
		return h, nil, fmt.Errorf("%w: empty file (line 1 must be the header)", ErrCorrupt)
	}
	switch {
	case h.EndLine && ended < 0:
		return h, nil, fmt.Errorf("%w: cut short after line %d: no end line (the run that wrote it was killed before it finished); a partial history would give false verdicts", ErrCorrupt, total)
	case ended >= 0 && ended != read:
		return h, nil, fmt.Errorf("%w: the end line counts %d operations, the file holds %d", ErrCorrupt, ended, read)
	}
	// Blank lines and the end line left their slots empty: close the gaps.
	w := 0
	for i := range ops {
		if ops[i].Kind == "" {
			continue
		}
		if w != i {
			ops[w] = ops[i]
		}
		w++
	}
	clear(ops[w:])
	if w == 0 {
		return h, nil, nil
	}
	return h, ops[:w:w], nil
}

// parseHeader parses line 1.
func parseHeader(b []byte, h *Header) error {
	if bytes.Contains(b, []byte(`"runs"`)) || string(b) == "{" {
		return fmt.Errorf("%w: line 1 is not a history header (a history has one JSON object per line); if this is a results.json, use lockbench report DIR", ErrCorrupt)
	}
	if err := strictUnmarshal(b, h); err != nil {
		return fmt.Errorf("%w: line 1 (header): %v", ErrCorrupt, err)
	}
	if h.SchemaVersion != SchemaVersion {
		return fmt.Errorf("%w: line 1: schema_version %d, this lockbench reads %d", ErrCorrupt, h.SchemaVersion, SchemaVersion)
	}
	if h.TTLMs < 0 || h.Clients < 0 || h.Keys < 0 {
		return fmt.Errorf("%w: line 1: negative ttl_ms, clients or keys in the header", ErrCorrupt)
	}
	return nil
}

func tooLong(line int) error {
	return fmt.Errorf("%w: line %d is longer than %d MiB: not a lockbench history line (a history has one short JSON object per line)", ErrCorrupt, line, maxLine>>20)
}

// part is a run of whole lines of a history, parsed by one goroutine.
type part struct {
	data []byte
	line int // the number of data's first line in the file (1-based)

	// Filled by parse.
	firstLine int   // the first non-blank line (0: none)
	n         int64 // operations decoded
	ended     bool  // an end line was read (end holds it)
	end       endLine
	err       error // the first error, naming its line; parsing stopped there

	intern map[string]string
	arena  []byte
}

// splitLines cuts data, whose first line is line number first, into one
// part per core at line boundaries (one part when data is small).
func splitLines(data []byte, first int) []part {
	n := 1
	if len(data) >= parallelFrom {
		n = runtime.GOMAXPROCS(0)
	}
	parts := make([]part, 0, n)
	line := first
	for i := n; i > 0 && len(data) > 0; i-- {
		cut := len(data)
		if i > 1 {
			cut = len(data) / i
			if j := bytes.IndexByte(data[cut:], '\n'); j >= 0 {
				cut += j + 1
			} else {
				cut = len(data)
			}
		}
		parts = append(parts, part{data: data[:cut], line: line})
		line += bytes.Count(data[:cut], []byte{'\n'})
		data = data[cut:]
	}
	if len(parts) == 0 {
		parts = append(parts, part{line: first})
	}
	return parts
}

// parse decodes p's lines into ops, the line numbered L into ops[L-2],
// leaving blank lines' and the end line's slots empty; it stops at the
// first error.
func (p *part) parse(ops []Operation) {
	p.intern = make(map[string]string, 64)
	data, line := p.data, p.line
	for len(data) > 0 {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(raw) >= maxLine {
			p.err = tooLong(line)
			return
		}
		b := bytes.TrimSpace(raw)
		if len(b) == 0 {
			line++
			continue
		}
		if p.firstLine == 0 {
			p.firstLine = line
		}
		if p.ended {
			p.err = fmt.Errorf("%w: line %d: an operation after the end line", ErrCorrupt, line)
			return
		}
		if bytes.HasPrefix(b, []byte(`{"end_operations":`)) {
			if err := strictUnmarshal(b, &p.end); err != nil {
				p.err = fmt.Errorf("%w: line %d (end line): %v", ErrCorrupt, line, err)
				return
			}
			p.ended = true
			line++
			continue
		}
		op := &ops[line-2]
		if err := decodeOperation(b, op); err != nil {
			p.err = fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
			return
		}
		if err := op.validate(); err != nil {
			p.err = fmt.Errorf("%w: line %d: %v", ErrCorrupt, line, err)
			return
		}
		p.own(op)
		p.n++
		line++
	}
}

// decodeOperation decodes one operation line into op (zero), as
// strictUnmarshal would; on success op's strings may point into b.
func decodeOperation(b []byte, op *Operation) error {
	if plain(b) {
		rest, err := segjson.Parse(b, op, fastFlags)
		if err == nil && len(rest) == 0 {
			return nil
		}
		*op = Operation{}
	}
	return strictUnmarshal(b, op)
}

// plain reports whether b is printable ASCII without a backslash: no
// escapes, no invalid UTF-8, no control characters, which are where JSON
// decoders differ in what they accept and how they decode it.
func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return false
		}
	}
	return true
}

// own moves op's strings out of the line they may point into: the
// constants of kinds, results and landings; interned keys, nodes,
// errors, reasons and notes; tokens copied into the part's blocks.
func (p *part) own(op *Operation) {
	op.Kind = Kind(p.internKind(string(op.Kind)))
	switch op.Result {
	case OK:
		op.Result = OK
	case Fail:
		op.Result = Fail
	case Info:
		op.Result = Info
	}
	switch op.Landing {
	case "":
	case Landed:
		op.Landing = Landed
	case Missed:
		op.Landing = Missed
	default:
		op.Landing = Landing(p.internString(string(op.Landing)))
	}
	op.Key = p.internString(op.Key)
	op.Node = p.internString(op.Node)
	op.Error = p.internString(op.Error)
	op.Reason = p.internString(op.Reason)
	op.Note = p.internString(op.Note)
	op.Token = p.copyString(op.Token)
}

func (p *part) internKind(s string) string {
	switch Kind(s) {
	case Acquire:
		return string(Acquire)
	case Release:
		return string(Release)
	case Read:
		return string(Read)
	case Write:
		return string(Write)
	case Observe:
		return string(Observe)
	}
	return p.internString(s)
}

// internString returns s, or the equal string seen before, never
// pointing into the file.
func (p *part) internString(s string) string {
	if s == "" {
		return ""
	}
	if c, ok := p.intern[s]; ok {
		return c
	}
	c := p.copyString(s)
	if len(p.intern) < maxInterned {
		p.intern[c] = c
	}
	return c
}

// copyString copies s into the part's current block (a new one when it
// is full; long strings get their own allocation).
func (p *part) copyString(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > arenaBlock/8:
		return strings.Clone(s)
	case len(p.arena)+len(s) > cap(p.arena):
		p.arena = make([]byte, 0, arenaBlock)
	}
	start := len(p.arena)
	p.arena = append(p.arena, s...)
	// The block's bytes up to len are never written again: the string
	// keeps them alive and unchanged.
	return unsafe.String(&p.arena[start], len(s))
}
