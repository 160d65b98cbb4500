package support

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// A fleet is a folder of a hundred thousand device folders, each a few
// small files: listing and opening them is most of a summary's time, and
// almost all of it waits on system calls. So a few goroutines list each
// device's folder and read its small files ahead of the counter, which
// still counts the devices and their files one at a time in the order a
// plain walk would (ReadPath), so the result is the same.
const (
	prefetchWorkers = 4
	prefetchWindow  = 256       // devices listed ahead of the counter at most
	prefetchMaxFile = 256 << 10 // larger files are read by the counter itself
	prefetchBudget  = 8 << 20   // bytes read ahead at most, across files
)

// prefetchedFile is one regular file of a device, read ahead or not.
type prefetchedFile struct {
	path   string
	data   []byte
	ahead  bool // data holds the whole file
	failed bool // it could not be opened or read
}

// prefetched is one entry of the fleet's folder, ready to count.
type prefetched struct {
	files      []prefetchedFile
	unreadable int // folders under it that could not be listed
}

// readEntries counts the entries of root (see ReadPath) with read-ahead.
func (c *Counter) readEntries(root string, entries []dirEntry) error {
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	var (
		ring     [prefetchWindow]prefetched
		ready    [prefetchWindow]chan struct{}
		tokens   = make(chan struct{}, prefetchWindow)
		jobs     = make(chan int)
		buffered atomic.Int64
		wg       sync.WaitGroup
	)
	for i := range ready {
		ready[i] = make(chan struct{}, 1)
	}
	// The feeder ends after the last entry or when ctx ends; the workers
	// when jobs is closed. readEntries waits for all of them before it
	// returns: nothing of a summary outlives it. A worker's send on ready
	// never blocks: tokens keep each slot's one value taken before the
	// next is fetched.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		for i := range entries {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range prefetchWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				var p prefetched
				if ctx.Err() == nil {
					p = fetchEntry(filepath.Join(root, entries[i].name), entries[i], &buffered)
				}
				ring[i%prefetchWindow] = p
				ready[i%prefetchWindow] <- struct{}{}
			}
		}()
	}
	defer wg.Wait()
	for i, e := range entries {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		<-ready[i%prefetchWindow]
		p := ring[i%prefetchWindow]
		ring[i%prefetchWindow] = prefetched{}
		if e.dir {
			c.device(e.name)
		}
		for range p.unreadable {
			c.Unreadable()
		}
		// A file directly under the folder is a device of its own.
		c.own = !e.dir
		for _, f := range p.files {
			switch {
			case f.failed:
				c.Unreadable()
			case f.ahead:
				c.ReadDevice(e.name, rotationGen(filepath.Base(f.path)), bytes.NewReader(f.data))
				buffered.Add(-int64(len(f.data)))
			default:
				c.readFile(e.name, f.path)
			}
		}
		c.own = false
		<-tokens
	}
	return c.ctx.Err()
}

// fetchEntry lists a device's folder as walkDevice would, or takes a file
// directly under the fleet's folder, and reads each small file while the
// budget allows.
func fetchEntry(path string, e dirEntry, buffered *atomic.Int64) prefetched {
	var p prefetched
	var walk func(dir string)
	walk = func(dir string) {
		entries, err := readDir(dir)
		if err != nil {
			p.unreadable++
		}
		for _, e := range entries {
			switch {
			case e.regular:
				p.files = append(p.files, fetchFile(filepath.Join(dir, e.name), buffered))
			case e.dir:
				walk(filepath.Join(dir, e.name))
			}
		}
	}
	switch {
	case e.regular:
		p.files = append(p.files, fetchFile(path, buffered))
	case e.dir:
		walk(path)
	}
	return p
}
