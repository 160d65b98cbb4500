// Package realsuite runs the real ctrld releases (../shared/real, named by
// CTRLD_INSTALL_REAL) against the built ctrld-install, each scenario in a
// private network, mount and PID namespace with only loopback, under SysV
// and under a real systemd, with the suite's own fake Control D (fake.go)
// on loopback. It proves on the real program what the stand-in can only
// repeat from the captures; without the releases, root or namespaces every
// test skips and says why.
package realsuite
