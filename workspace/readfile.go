package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/agent-ls/agent-ls/schema"
	"github.com/agent-ls/agent-ls/store/location"
)

// ErrNotRegular is the error for a path that names something other than a
// regular file (a FIFO, a device, a socket, a directory): agent-ls reads
// agent files, configs and record files only from regular files, so a
// FIFO cannot hang a command and a device cannot feed it without end.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading only if it is a regular file. The open does
// not block (a FIFO without a writer would block a plain open forever); the
// file's type is checked on the open descriptor, so it cannot be swapped
// between the check and the read.
func Open(path string) (*os.File, error) {
	f, err := openNoBlock(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: it is %s", ErrNotRegular, location.Kind(st.Mode()))}
	}
	return f, nil
}

// ReadFile reads a regular file (Open) of at most schema.SizeLimit(path)
// bytes: the one way every surface reads an agent file, a workspace config
// or a record file. A larger file is an error naming its size and the
// limit.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	limit := schema.SizeLimit(path)
	// Read into a buffer of the file's size (and one byte more, to see the
	// end or a file grown past the limit): io.ReadAll's doubling allocated
	// about 2.5 times a 119 KB agent file on each cold render.
	size := int64(512)
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		size = min(st.Size(), limit) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if int64(len(data)) > limit {
			break
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("more than the limit of %d bytes", limit)}
	}
	return data, nil
}
