package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/workspace"
)

// readChecked reads a file a command checks (an agent file, the workspace
// config, a JSONL record file), reading at most one byte more than
// schema.SizeLimit: a file over the limit is returned as its size and no
// data, so memory stays bounded by the limit whatever the file's size (a
// 100 MB line is refused without being read). size is the file's size when
// it is known (a regular file), else the bytes read.
func readChecked(path, name string) (data []byte, size int64, err error) {
	f, err := workspace.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	limit := schema.SizeLimit(name)
	if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, st.Size(), nil
		}
		// Sized to the file (plus the byte that shows it grew past the
		// limit since the stat).
		data = make([]byte, 0, st.Size()+1)
	}
	data, err = readAllInto(data, io.LimitReader(f, limit+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, int64(len(data)), nil
	}
	return data, int64(len(data)), nil
}

// readAllInto reads r to its end, appending to buf. When buf has room for
// all of it (a regular file, sized by its stat) nothing else is allocated;
// otherwise the data is read in 64 KiB chunks joined once at the end, so at
// most about twice the data is allocated (append's growth would allocate
// several times it).
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	var chunks [][]byte
	total := len(buf)
	for {
		if len(buf) == cap(buf) {
			if len(buf) > 0 {
				chunks = append(chunks, buf)
			}
			buf = make([]byte, 0, 64<<10)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		total += n
		if err != nil && err != io.EOF {
			return nil, err
		}
		if err == io.EOF {
			if len(chunks) == 0 {
				return buf, nil
			}
			out := make([]byte, 0, total)
			for _, c := range chunks {
				out = append(out, c...)
			}
			return append(out, buf...), nil
		}
	}
}

// ruleWorkspace is the rule of the finding that refuses a file outside its
// workspace.
const ruleWorkspace = "workspace"

// outsideProblem is the one problem of an agent file or a workspace config
// that resolves outside its workspace root (workspace.ConfineFile: a
// symbolic link or .. leading out), which is then not read at all; nil for
// a file inside it, and for a JSONL record file (record files are data a
// human imports from anywhere, not the workspace's own files). path is the
// file, name as the user gave it.
func outsideProblem(path, name string) ([]schema.Problem, error) {
	if schema.KindOf(name) == schema.FileRecords {
		return nil, nil
	}
	err := workspace.ConfineFile(path)
	var oe *workspace.OutsideError
	if errors.As(err, &oe) {
		return []schema.Problem{{Rule: ruleWorkspace, Severity: schema.SeverityError, Message: oe.Reason()}}, nil
	}
	return nil, err
}
