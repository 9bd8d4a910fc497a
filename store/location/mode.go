package location

import "io/fs"

// Kind names what a file of mode m is, for an error that refuses anything
// but a regular file: "a directory", "a FIFO (named pipe)", "a socket", "a
// character device", "a block device", "a symbolic link", "an irregular
// file"; "a regular file" for one.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}
