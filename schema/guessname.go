package schema

import "bytes"

// GuessAgentName is roleTemplate.name read from an agent file's text
// without parsing it, for work that may start before the parse ends (a
// cold render reads the agent's memories while its file parses). It
// understands only the plain block form
//
//	roleTemplate:
//	  name: support-bot
//
// (a top-level roleTemplate key, name one of its keys, the value a plain
// or simply quoted scalar of letters, digits, '.', '_' and '-' that YAML
// reads as a string) and returns "" for anything else: flow mappings, tabs,
// escapes, anchors, JSON. It is a guess: a caller must check it against the
// name the parse found (LoadAgentEarly's parsed callback) before using work
// done for it.
func GuessAgentName(data []byte) string {
	inRole := false // inside the top-level roleTemplate mapping
	childIndent := -1
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if bytes.IndexByte(line, '\t') >= 0 {
			return ""
		}
		indent := 0
		for indent < len(line) && line[indent] == ' ' {
			indent++
		}
		rest := line[indent:]
		if len(rest) == 0 || rest[0] == '#' {
			continue // blank or comment
		}
		if indent == 0 {
			if inRole {
				return "" // the mapping ended without a name
			}
			key, val, ok := guessKey(rest)
			inRole = ok && key == "roleTemplate" && val == ""
			continue
		}
		if !inRole {
			continue
		}
		if childIndent < 0 {
			childIndent = indent
		}
		if indent < childIndent {
			return "" // not block YAML this guess understands
		}
		if indent > childIndent {
			continue // deeper: a child's own value
		}
		if key, val, ok := guessKey(rest); ok && key == "name" {
			return guessScalar(val)
		}
	}
	return ""
}

// guessKey splits "key: value  # comment" into key and value (both
// trimmed; the comment dropped). ok is false when the line is not a plain
// key of identifier characters followed by ':'.
func guessKey(s []byte) (key, val string, ok bool) {
	i := 0
	for i < len(s) && guessIdentByte(s[i]) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' {
		return "", "", false
	}
	key, s = string(s[:i]), s[i+1:]
	if len(s) > 0 && s[0] != ' ' {
		return "", "", false
	}
	if j := bytes.Index(s, []byte(" #")); j >= 0 {
		s = s[:j]
	}
	return key, string(bytes.Trim(s, " ")), true
}

// guessScalar is the string a value of identifier characters, plain or in
// quotes, reads as ("" when it is anything else, or a plain scalar YAML
// reads as a boolean or null).
func guessScalar(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
		if !guessIdent(v) {
			return ""
		}
		return v
	}
	if !guessIdent(v) || !(v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z') {
		return ""
	}
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return ""
	}
	return v
}

func guessIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !guessIdentByte(s[i]) {
			return false
		}
	}
	return true
}

func guessIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}
