// Package parse holds the pure parsers of ctrld-install: the result file
// ctrld writes, the identifier line it prints, its version string, the
// output of released ctrld versions and the daemon's own log, and the table
// of which ctrld releases have the flags and commands ctrld-install uses.
//
// Parsers read only from the readers and byte slices they are given. They
// return registered codes or clean rejections and never return any part of
// their input: whatever ctrld printed or wrote may contain the provisioning
// token, so nothing parsed from it may reach an output.
package parse
