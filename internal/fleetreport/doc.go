// Package fleetreport is the fleet report: one model of what summarize
// counted (Summary: the codes and states seen, each device with its newest
// outcome, the days) and one renderer of it per format, text, JSON, CSV,
// markdown and HTML. The model is built by package fleet; nothing here
// reads input.
//
// Its invariant: everything a renderer writes is built from registry
// values, state words, fixed text, numbers, dates and ctrld versions, and
// the device names it was given, with control characters replaced
// (SafeName) and escaped for each format, so a file name cannot start a
// new line, a formula, markup or a script.
package fleetreport
