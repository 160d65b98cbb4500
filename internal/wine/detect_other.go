//go:build !windows

package wine

const detected = false
