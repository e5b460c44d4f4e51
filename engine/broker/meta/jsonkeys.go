package meta

// quoteNumericKeys rewrites object keys written as bare integers
// ({0:12}, as fastjson writes non-String map keys) into JSON strings
// ({"0":12}) so encoding/json can read them. Everything else, strings
// included, is copied unchanged.
func quoteNumericKeys(in []byte) []byte {
	out := make([]byte, 0, len(in)+16)
	inString, escaped := false, false
	expectKey := false // after '{' or ',' inside an object
	var stack []byte   // '{' or '['
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			expectKey = false
		case '{', '[':
			stack = append(stack, c)
			expectKey = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ' ', '\t', '\n', '\r':
		default:
			if expectKey && (c == '-' || (c >= '0' && c <= '9')) {
				j := i + 1
				for j < len(in) && in[j] >= '0' && in[j] <= '9' {
					j++
				}
				out = append(out, '"')
				out = append(out, in[i:j]...)
				out = append(out, '"')
				i = j - 1
				expectKey = false
				continue
			}
			expectKey = false
		}
		out = append(out, c)
	}
	return out
}
