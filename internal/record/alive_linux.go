package record

import (
	"os"
	"strconv"
	"strings"
)

func processIsInstaller(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return false
	}
	return strings.HasPrefix(strings.TrimSpace(string(b)), installerName)
}
