package runner

// Windows has no watcher: a job object ends ctrld with ctrld-install.
func watcherMain([]string) int { return 2 }
