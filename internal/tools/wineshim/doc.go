// Package wineshim holds what CI needs to run the Windows build under Wine:
// dll/bcryptprimitives.c, a stand-in for the DLL Wine 8.0 lacks and Go needs,
// wine-prefix.sh, which makes a prefix with it, and wine-tests.sh, which
// runs the Windows test binaries there. README.md says why.
package wineshim
