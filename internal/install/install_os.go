package install

import "runtime"

const isWindows = runtime.GOOS == "windows"
