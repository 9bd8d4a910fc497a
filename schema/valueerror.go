package schema

import "fmt"

// ValueError is a value its parameter does not take. Name is a neutral
// noun for the parameter ("since", "target", "conversation id"); a surface
// whose parameter is named otherwise (the CLI's --since, MCP's at) words
// the error with its own name in place of Name (Named), never before it:
// `--since "x": want ...`, not `--since: since "x": want ...`.
type ValueError struct {
	Name  string
	Value string // as given (quoted and shortened when shown)
	Why   string // what the parameter wants; "" is Err's text
	Err   error  // the cause, if any (Unwrap)
}

func (e *ValueError) Error() string {
	why := e.Why
	if why == "" && e.Err != nil {
		why = e.Err.Error()
	}
	s := e.Name + " " + quoteShort(e.Value)
	if e.Value == "" {
		s = "empty " + e.Name
	}
	if why == "" {
		return s
	}
	return s + ": " + why
}

func (e *ValueError) Unwrap() error { return e.Err }

// Named words err, an error about the value of the parameter name, with
// that name once: a *ValueError or *LimitError has name in place of its
// own noun; any other error is prefixed by name. Only err itself is
// renamed: an error that wraps one has context of its own and is prefixed.
func Named(name string, err error) error {
	if err == nil {
		return nil
	}
	switch e := err.(type) {
	case *ValueError:
		c := *e
		c.Name = name
		return &c
	case *LimitError:
		c := *e
		c.Field = name
		return &c
	}
	return fmt.Errorf("%s: %w", name, err)
}
