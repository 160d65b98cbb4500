// Package fleet reads what a fleet's devices left (logs, rotated logs,
// outcome records, inventory exports) and counts, for each device, its
// newest outcome: what `summarize` reads before fleetreport prints it.
//
// Its invariant: no byte of the input reaches the report except through
// the registry. Input is only ever matched against registry values, state
// words, fixed lines, dates and versions parsed as parse.DisplayVersion
// writes them, because logs and pasted lines may carry a provisioning
// token; the one exception is a device's name, the folder or file name
// given, which fleetreport prints with control characters replaced. Files
// are opened only through safefile and records decoded only through
// record, so the rules for both are written once. Reading is linear in the
// input, and memory is one entry per device and per day, however much is
// read.
//
// # What summarize reads
//
// Every input is read as lines of at most MaxLine bytes; a longer line is
// skipped whole and counted in Stats.LongLines. gzip-compressed input (a
// rotated log) and UTF-16 text with a byte-order mark (Windows PowerShell's
// default for redirected output) are decoded first, recognised by their
// leading bytes rather than their names.
//
// An outcome is counted from fixed grammars:
//
//   - the final lines of the commands that change the device, install and
//     uninstall (the table finalLines): the failure line, anywhere in a
//     line, after "provisioning failed: " or "uninstall failed: ":
//     "stage=<stage> code=<CODE> (exit <N>)" with the triple agreeing with
//     the registry; and their success lines, prefix included: install's as
//     OK, uninstall's as the state UNINSTALLED. verify's lines ("verify
//     failed: ...", "verify succeeded (exit 0)", "not installed (exit 54)")
//     describe a device without changing it and are not outcomes, nor are
//     retry lines ("attempt 1 failed: ...");
//   - what status prints where there is no outcome, as states;
//   - a Jamf extension attribute value, "<result>WORD</result>", with a
//     registered code or a state word, and "<result></result>" as the
//     empty state;
//   - an outcome record or --json summary: a JSON object with "result" "ok"
//     or "failed" (agreeing with the code), "stage", "code" and "exit_code"
//     agreeing with the registry, "version" 1 when present, and "action",
//     when present, one of an outcome's. Records of a run in progress
//     ("result": "running") are the state RUNNING; status's JSON of a home
//     without a record is its state.
//
// Each outcome has a date (its record's timestamp, its line's leading
// timestamp, or the last date earlier in its input), ctrld's version when
// known, and the action it implies. Inputs belong to devices (see
// ReadPath). An input's outcome is the last one in it, whatever the dates
// of the lines before it (a log is written in the order its runs ended,
// and a clock that ran ahead for a while must not outrank what came
// after); a device's inputs are then ranked by those outcomes' dates (see
// newer). A Counter from NewLatestCounter counts only the newest outcome
// of each device, and every Summary lists each device with its newest
// outcome.
//
// Reading is linear in the input: text1 looks for three anchors, each
// searched again only once the scan has passed its last match, and the
// JSON scanner visits each byte once.
//
// # One record or a log
//
// A file is not classified as a whole, so a record, a directory of records,
// a log, or a log with records pasted into it all read the same way. JSON
// starts where a line's first non-blank character is "{", or "[" followed by
// "{" (a compact array of records). It ends at the end of the line where its
// braces balance, so an outcome record (written indented over many lines), a
// file of concatenated records, JSON Lines and arrays all work. A JSON
// region longer than MaxObject, or one in which no object is a record, is
// read as text lines instead, so a stray brace or a structured log with a
// failure line in its message loses nothing.
//
// JSON that does not start a line is not read as a record: the --log file
// repeats the --json summary after a timestamp next to the text failure line
// of the same run, which is already counted.
package fleet
