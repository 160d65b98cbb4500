package runner

// closeInherited has nothing to do: os/exec on Windows passes the child
// only the handles it is given.
func closeInherited() {}
