package history

import (
	"strconv"
	"unicode/utf8"
)

// appendOperation appends op's JSON form (one object, no newline) to b and
// returns the extended buffer. The output is byte-for-byte what
// encoding/json's Encoder writes for op (same field order, omitempty rules
// and string escaping, HTML characters included; TestAppendOperationMatchesJSON
// compares the two), without reflection and without allocating once b has
// grown to size: the Writer's hot path.
func appendOperation(b []byte, op Operation) []byte {
	b = append(b, `{"client":`...)
	b = strconv.AppendInt(b, int64(op.Client), 10)
	b = append(b, `,"stream":`...)
	b = strconv.AppendInt(b, int64(op.Stream), 10)
	b = append(b, `,"kind":`...)
	b = appendString(b, string(op.Kind))
	b = appendStringField(b, `,"key":`, op.Key)
	b = appendStringField(b, `,"node":`, op.Node)
	b = appendIntField(b, `,"hold":`, op.Hold)
	b = appendIntField(b, `,"depth":`, int64(op.Depth))
	b = appendIntField(b, `,"count":`, int64(op.Count))
	b = appendStringField(b, `,"token":`, op.Token)
	b = appendIntField(b, `,"fence":`, op.Fence)
	b = append(b, `,"invoke_ns":`...)
	b = strconv.AppendInt(b, op.Invoke, 10)
	b = append(b, `,"complete_ns":`...)
	b = strconv.AppendInt(b, op.Complete, 10)
	b = append(b, `,"result":`...)
	b = appendString(b, string(op.Result))
	b = appendIntField(b, `,"value":`, op.Value)
	b = appendIntField(b, `,"prev":`, op.Prev)
	b = appendIntField(b, `,"valid_until_ns":`, op.ValidUntil)
	b = appendStringField(b, `,"error":`, op.Error)
	b = appendStringField(b, `,"reason":`, op.Reason)
	b = appendIntField(b, `,"round_trips":`, int64(op.RoundTrips))
	b = appendStringField(b, `,"note":`, op.Note)
	b = appendStringField(b, `,"landing":`, string(op.Landing))
	return append(b, '}')
}

// appendIntField appends name and v unless v is 0 (omitempty).
func appendIntField(b []byte, name string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, name...), v, 10)
}

// appendStringField appends name and s unless s is empty (omitempty).
func appendStringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendString(append(b, name...), s)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string escaped as encoding/json does by
// default: quote, backslash and control characters escaped (\b \f \n \r \t
// short forms, others \u00XX), '<', '>' and '&' as \u003c \u003e \u0026,
// U+2028 and U+2029 as \u2028 \u2029, and invalid UTF-8 replaced by \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
