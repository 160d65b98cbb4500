package wine

import "golang.org/x/sys/windows"

// Wine's ntdll exports wine_get_version; Windows' never has.
var detected = windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
