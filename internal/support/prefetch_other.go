//go:build !unix

package support

import (
	"io"
	"sync/atomic"
)

// fetchFile reads a small file ahead, opened as the walk opens it.
func fetchFile(path string, buffered *atomic.Int64) prefetchedFile {
	f, fi, err := openRegularInfo(path)
	if err != nil {
		return prefetchedFile{path: path, failed: true}
	}
	defer f.Close()
	size := fi.Size()
	if size > prefetchMaxFile || buffered.Add(size) > prefetchBudget {
		if size <= prefetchMaxFile {
			buffered.Add(-size)
		}
		// The counter opens it again and streams it.
		return prefetchedFile{path: path}
	}
	data := make([]byte, size)
	n, err := io.ReadFull(f, data)
	if err != nil && err != io.ErrUnexpectedEOF {
		buffered.Add(-size)
		return prefetchedFile{path: path, failed: true}
	}
	// A file that shrank since it was opened is read as it now is.
	buffered.Add(int64(n) - size)
	return prefetchedFile{path: path, data: data[:n], ahead: true}
}
