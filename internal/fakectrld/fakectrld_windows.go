//go:build windows

package fakectrld

func pgid() int                    { return 0 }
func signalPIDFile(string, string) {}
