// Package explain is the registry for people: every code in each format
// (`codes`), and one input explained (`explain`): a code, a state word, an
// exit status as a tool prints it, or lines pasted from a log, including
// what the platforms' installers (msiexec, macOS Installer, dpkg), Intune,
// FileWave and the shell report about ctrld-install's packages and runs.
//
// Its invariant: what it prints is the registry's text and its own fixed
// text, never the input, which may carry a provisioning token; and no line
// it prints is one a log scanner (or summarize) counts as an outcome, so a
// Support transcript saved beside the logs does not skew a fleet report.
package explain
