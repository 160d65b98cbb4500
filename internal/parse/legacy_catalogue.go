package parse

import (
	"bytes"
	"sync"
)

// legacyRule is one catalogued ctrld message. docs/legacy-output.md is the
// reader's version of this table and must change with it.
type legacyRule struct {
	prefix string // lower case; the message must start with it
	levels logLevels
	tier   evidenceTier
	v      verdict
	// refine, when set, chooses the verdict from the rest of the message;
	// vNone means the rule does not apply after all.
	refine func(c *Classifier, rest []byte, lvl logLevel, owned bool) verdict
	// outcomes lists every verdict other than vNone that refine can give.
	// The documentation and the triage figure count them; a test checks
	// them against the catalogue's examples.
	outcomes []verdict
}

// legacyCatalogue lists every message the classifier acts on. Messages are
// matched at the start of the log message, so a phrase quoted inside some
// other message's error text does not count. Order matters only among rules
// whose prefixes overlap: the more specific comes first.
var legacyCatalogue = []legacyRule{
	// ctrld stops right after these, before touching anything.
	{prefix: "please relaunch process with admin/root privilege", levels: atError, tier: tierDecisive, v: vInstallerNotRoot},
	{prefix: "deactivation pin is required", levels: atError, tier: tierDecisive, v: vDeactivationPinRequired},
	// ctrld prints this one both when the daemon refused the PIN and when
	// the check got no answer at all; only the error it carries tells.
	{prefix: "deactivation pin is invalid", levels: atError, tier: tierDecisive, refine: refinePinInvalid, outcomes: pinOutcomes},

	// Bootstrap: the Control D API and the daemon's set-up.
	{prefix: "failed to fetch resolver uid with provision token", levels: atError, tier: tierCause, refine: refineProvisionToken, outcomes: tokenOutcomes},
	{prefix: "failed to fetch resolver uid:", levels: atError, tier: tierCause, refine: refineResolverUID, outcomes: resolverOutcomes},
	{prefix: "failed to fetch resolver config", levels: atError, tier: tierCause, refine: refineResolverConfig, outcomes: resolverOutcomes},
	{prefix: "network is not up yet", levels: atError, tier: tierCause, v: vAPIUnreachable},
	{prefix: "failed to perform router pre-run check", levels: atError, tier: tierCause, v: vBootstrapFailed},
	{prefix: "service was uninstalled because device", levels: atWarn, tier: tierCause, v: vAPIDeviceInvalid},
	// Not a fatal: the daemon retries network errors forever. Seen in the
	// replayed log without a fatal after it, it means the daemon was still
	// waiting for the API when the start command stopped waiting for it.
	{prefix: "could not fetch resolver using bootstrap dns", levels: atWarn, tier: tierHint, v: vAPIUnreachable},
	// 1.1.x and 1.2.x fetch the resolver config in the start command too,
	// log a failure as this warning and carry on with a default config; the
	// service then fails its self-check. The warning's error says why, read
	// as the later releases' fatal is read.
	{prefix: "could not fetch resolver config", levels: atWarn, tier: tierHint, refine: refineResolverConfig, outcomes: resolverOutcomes},

	// Listener.
	{prefix: "listener.", levels: atError, tier: tierCause, refine: refineListener, outcomes: listenerOutcomes},
	{prefix: "unable to start dns proxy on listener.", levels: atError, tier: tierCause, refine: refineBind, outcomes: bindOutcomes},
	{prefix: "dns intercept: cannot bind", levels: atError, tier: tierCause, v: vListenerBindFailed},
	{prefix: "dns intercept: cannot listen on configured address", levels: atError, tier: tierCause, v: vListenerConfiguredAddrUnavailable},
	{prefix: "invalid listener address", levels: atError, tier: tierCause, v: vListenerConfiguredAddrUnavailable},
	{prefix: "invalid port number", levels: atError, tier: tierCause, v: vListenerConfiguredAddrUnavailable},

	// Service fatals: a process died while preparing or running the service.
	{prefix: "failed create new service", levels: atError, tier: tierCause, v: vServiceFailed},
	{prefix: "failed to configure service on router", levels: atError, tier: tierCause, v: vServiceInstallFailed},
	{prefix: "failed to append intercept", levels: atError, tier: tierCause, v: vServiceFailed},

	// Service consequences: what the start command reports once the service
	// did not come up. A cause seen anywhere explains them better.
	{prefix: "error running task install:", levels: atError, tier: tierConsequence, v: vServiceInstallFailed},
	// 1.1.x-1.2.x: the service was not running, or did not answer the
	// self-check query, after its Start task; later versions print the
	// self-check block instead.
	{prefix: "service did not start", levels: atError, tier: tierConsequence, v: vServiceStartFailed},
	{prefix: "error running task start:", levels: atError, tier: tierConsequence, v: vServiceStartFailed},
	{prefix: "error running task ", levels: atError, tier: tierConsequence, v: vServiceFailed},
	{prefix: "failed to start existing ctrld service", levels: atError, tier: tierConsequence, v: vServiceStartFailed},
	{prefix: "failed to get socket directory", levels: atWarn, tier: tierConsequence, v: vServiceFailed},
	{prefix: "post installation failed", levels: atWarn, tier: tierConsequence, v: vServiceFailed},
	{prefix: "could not configure service", levels: atError, tier: tierConsequence, v: vServiceFailed},
	{prefix: "ctrld service may not have started", levels: atError, tier: tierConsequence, v: vServiceSelfcheckFailed},
	{prefix: "an error occurred while performing test query", levels: atError, tier: tierConsequence, v: vServiceSelfcheckFailed},
	{prefix: "ctrld service was running, but a dns query could not be sent", levels: atError, tier: tierConsequence, v: vServiceSelfcheckFailed},
	{prefix: "could not connect to control server", levels: atError, tier: tierConsequence, v: vServiceSelfcheckFailed},
	{prefix: "no response from ctrld listener", levels: atError, tier: tierConsequence, v: vServiceSelfcheckFailed},
	// 1.1.x-1.2.x on Linux: restoring DNS after "Service did not start"
	// (or setting it after a start) needs the default route, which is
	// missing exactly when the network is down. It follows the failure and
	// does not explain it; alone, no code fits it.
	{prefix: "failed to get default route interface", levels: atError, tier: tierConsequence, v: vUnmapped},

	// ctrld refusing a flag value. ctrld-install passes its own flags with
	// values it has checked, so the value came from the extra flags after
	// "--", which are part of ctrld-install's command line.
	{prefix: `flag "--`, levels: atError, tier: tierCause, v: vInstallerUsage},
	{prefix: "--", levels: atError, tier: tierCause, refine: refineFlagConflict, outcomes: []verdict{vInstallerUsage}},
	{prefix: "invalid --intercept-mode", levels: atError, tier: tierCause, v: vInstallerUsage},
	{prefix: "invalid custom hostname", levels: atError, tier: tierCause, v: vInstallerUsage},
	{prefix: `"listen" and "primary_upstream" flags must be set`, levels: atError, tier: tierCause, v: vInstallerUsage},

	// Configuration fatals: ctrld's config file, or the configuration it
	// fetched, cannot be read or used.
	{prefix: "failed to unmarshal config", levels: atError, tier: tierCause, v: vConfigInvalid},
	{prefix: "failed to unmarshal default config", levels: atError, tier: tierCause, v: vConfigInvalid},
	{prefix: "failed to decode config file", levels: atError, tier: tierCause, v: vConfigInvalid},
	{prefix: "failed to read base64 config", levels: atError, tier: tierCause, v: vConfigInvalid},
	{prefix: "invalid config:", levels: atError, tier: tierCause, v: vConfigInvalid},
	{prefix: "invalid dns stamps", levels: atError, tier: tierCause, v: vConfigInvalid},
	// Environment fatals: a file or directory ctrld needs on the device
	// cannot be found or written.
	{prefix: "failed to write default config file", levels: atError, tier: tierCause, v: vHostFilesFailed},
	{prefix: "failed to get default config file path", levels: atError, tier: tierCause, v: vHostFilesFailed},
	{prefix: "failed to write config file", levels: atError, tier: tierCause, v: vHostFilesFailed},
	{prefix: "failed to get user home dir", levels: atError, tier: tierCause, v: vHostFilesFailed},
	{prefix: "failed to create log path", levels: atError, tier: tierCause, v: vHostFilesFailed},
	{prefix: "failed to create log file", levels: atError, tier: tierCause, v: vHostFilesFailed},
	// The daemon refused to run detached; no registered code describes it.
	{prefix: "cannot run in daemon mode", levels: atError, tier: tierCause, v: vUnmapped},
}

// legacyRulesByFirst indexes the catalogue by the first byte of its prefix, so a
// message is compared with the few rules that can match it. It is built on
// first use, while ctrld runs, not as every command of ctrld-install starts.
var legacyRulesByFirst = sync.OnceValue(func() *[256][]legacyRule {
	var t [256][]legacyRule
	for _, r := range legacyCatalogue {
		t[r.prefix[0]] = append(t[r.prefix[0]], r)
	}
	return &t
})

// Outcomes shared by rules with the same refinement.
var (
	tokenOutcomes    = []verdict{vAPITLSFailed, vAPIUnreachable, vAPIResponseInvalid, vAPIRejected}
	resolverOutcomes = []verdict{vAPIDeviceInvalid, vAPITLSFailed, vAPIUnreachable, vAPIResponseInvalid, vBootstrapFailed}
	bindOutcomes     = []verdict{vListenerBindFailed, vListenerConfiguredAddrUnavailable}
	listenerOutcomes = []verdict{vListenerBindFailed, vListenerConfiguredAddrUnavailable, vListenerFailed}
	pinOutcomes      = []verdict{vDeactivationPinRequired, vAPIUnreachable}
)

// legacyDaemonNoAnswer are the errors of ctrld's control client, lower
// case, when its request to the running daemon got no HTTP answer: the
// client's 30 s timeout (the daemon was still waiting on the Control D API
// to learn whether a PIN is set), or a connection that was refused, cut or
// timed out. A bare EOF is legacyDaemonEOF.
var legacyDaemonNoAnswer = byteStrings(
	"context deadline exceeded", "client.timeout exceeded", "timeout awaiting response headers",
	"i/o timeout", "connection refused", "connection reset", "broken pipe",
)

// legacyDaemonEOF are the ways the control client's error ends in io.EOF
// (the daemon closed the connection without answering), quoted as
// zerolog's console (v1) and zap's JSON fields (v2) write it; unquoted, it
// ends the line.
var legacyDaemonEOF = byteStrings(`: eof"`, "unexpected eof")

// legacyNetworkErrors are texts of Go network and DNS errors, lower case. The
// first seven are the contract's list; the rest are the same failures as
// worded by other layers (timeouts of the HTTP client, resolver errors).
// "client.do" is ctrld's wrapper around every transport error, a failed
// certificate check included, so legacyTLSErrors must be tried first.
var legacyNetworkErrors = byteStrings(
	"client.do", "dial tcp", "network is unreachable", "no such host", "i/o timeout",
	"connection refused", "tls handshake timeout",
	"dial udp", "no route to host", "host is down", "connection reset",
	"context deadline exceeded", "client.timeout exceeded",
	"server misbehaving", "temporary failure in name resolution",
)

// legacyTLSErrors are Go's words for a server certificate that did not
// verify, lower case: what a TLS-inspecting proxy or a wrong clock gives.
// A handshake that timed out is a network error and matches none of them.
var legacyTLSErrors = byteStrings(
	"x509:", "tls: failed to verify certificate",
	"certificate signed by unknown authority", "certificate has expired or is not yet valid",
	"certificate is valid for", "certificate is not valid for any names", "certificate is not trusted",
)

// legacyDecodeErrors are encoding/json's errors for a body that is not
// the JSON ctrld expects, lower case, apart from the syntax errors
// (legacySyntaxContexts) and a body that is empty (legacyBareEOF). ctrld
// prints them alone: its HTTP client had an answer, so no transport
// wrapper is around them. "unexpected eof" is a body cut short; a
// connection that dropped before the answer says so inside "client.do",
// which is tried first.
var legacyDecodeErrors = byteStrings(
	"unexpected end of json input", "json: cannot unmarshal", "unexpected eof",
)

// legacySyntaxContexts are the ends encoding/json gives its "invalid
// character 'c'" errors ("looking for beginning of value", "after object
// key", "in string literal", ...). Requiring one keeps an API message that
// merely mentions an invalid character with the API.
var legacySyntaxContexts = byteStrings("' looking for beginning of ", "' after ", "' in ")

// legacyBareEOF are the ways an error field can hold nothing but io.EOF,
// which json.Decoder returns for an empty body: zerolog's console (v1,
// unquoted because it has no space, or quoted), zap's JSON fields (v2).
var legacyBareEOF = byteStrings(`error="eof"`, `"error":"eof"`, `"error": "eof"`)

// legacyDeviceGone are the API's ways of saying the resolver UID is unknown:
// error code 40402 (InvalidConfigCode) or its message.
var legacyDeviceGone = byteStrings("40402", "device does not exist")

// legacyAddrUnavailable are the bind errors that mean the address is not on this
// host (EADDRNOTAVAIL on Linux and macOS, WSAEADDRNOTAVAIL on Windows),
// rather than taken by another program.
var legacyAddrUnavailable = byteStrings("assign requested address", "requested address is not valid")

func byteStrings(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func containsAnyOf(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

// skipLegacySecret drops the token or resolver UID that follows the message's
// colon, so that a secret which happens to contain "40402" or "dial tcp"
// cannot steer the result. Only the one colon and space ctrld writes are
// separators: a secret may start with a colon itself.
func skipLegacySecret(rest []byte) []byte {
	rest = bytes.TrimPrefix(rest, []byte(":"))
	rest = bytes.TrimPrefix(rest, []byte(" "))
	if i := bytes.IndexAny(rest, " \t"); i >= 0 {
		return rest[i:]
	}
	return nil
}

// apiAnswer reads the error of a request to the Control D API that the API
// did not answer with its own error message: a certificate that does not
// verify, the network, or an answer that is not the API's JSON. It returns
// vNone when the error is none of these, which leaves the API's own
// message. low is lower case.
//
// The order matters: ctrld wraps a failed certificate check in the same
// "client.Do" as a network error, and a transport error can end in the
// decoder's words (a connection cut off: "unexpected EOF"), which a
// decoder error never wraps in "client.Do".
func apiAnswer(low []byte) verdict {
	switch {
	case containsAnyOf(low, legacyTLSErrors):
		return vAPITLSFailed
	case containsAnyOf(low, legacyNetworkErrors):
		return vAPIUnreachable
	case isDecodeError(low):
		return vAPIResponseInvalid
	}
	return vNone
}

// isDecodeError reports whether low holds one of encoding/json's errors.
func isDecodeError(low []byte) bool {
	if containsAnyOf(low, legacyDecodeErrors) || containsAnyOf(low, legacyBareEOF) {
		return true
	}
	const syntax = "invalid character '"
	if i := bytes.Index(low, []byte(syntax)); i >= 0 && containsAnyOf(low[i+len(syntax):], legacySyntaxContexts) {
		return true
	}
	// error=EOF unquoted: the value must end there.
	const bare = "error=eof"
	for rest := low; ; {
		i := bytes.Index(rest, []byte(bare))
		if i < 0 {
			return false
		}
		rest = rest[i+len(bare):]
		if len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' {
			return true
		}
	}
}

// refineProvisionToken follows the contract: an error that is not the
// API's own answer says what stood between ctrld and the API; the API's
// own error message is the API refusing the token.
func refineProvisionToken(c *Classifier, rest []byte, _ logLevel, owned bool) verdict {
	if v := apiAnswer(c.lowered(skipLegacySecret(rest), owned)); v != vNone {
		return v
	}
	return vAPIRejected
}

func refineResolverUID(c *Classifier, rest []byte, lvl logLevel, owned bool) verdict {
	return refineResolverConfig(c, skipLegacySecret(rest), lvl, owned)
}

// refineResolverConfig separates a deleted device from what stood between
// ctrld and the API (apiAnswer). Any other error is left to the bootstrap
// catch-all: the request carried a resolver UID, not the token, so
// API_REJECTED ("refused the provisioning token") would mislead.
func refineResolverConfig(c *Classifier, rest []byte, _ logLevel, owned bool) verdict {
	low := c.lowered(rest, owned)
	if containsAnyOf(low, legacyDeviceGone) {
		return vAPIDeviceInvalid
	}
	if v := apiAnswer(low); v != vNone {
		return v
	}
	return vBootstrapFailed
}

// refinePinInvalid separates the daemon refusing the PIN from a PIN check
// that could not complete. ctrld 1.5.0 prints "deactivation pin is invalid"
// with no error when the daemon answered that the PIN is wrong, and with the
// control client's error (`Post "http://unix/deactivation": ...`) when no
// answer came: then nothing says a PIN is set, and ctrld stopped nothing.
// The daemon answers only once it has asked the Control D API, so an
// answer that never came is the API not answering (retryable), not a PIN.
func refinePinInvalid(c *Classifier, rest []byte, _ logLevel, owned bool) verdict {
	low := c.lowered(rest, owned)
	if containsAnyOf(low, legacyDaemonNoAnswer) || containsAnyOf(low, legacyDaemonEOF) || bytes.HasSuffix(low, []byte(": eof")) {
		return vAPIUnreachable
	}
	return vDeactivationPinRequired
}

// refineBind separates "the address belongs to someone else" from "the
// address does not exist here".
func refineBind(c *Classifier, rest []byte, _ logLevel, owned bool) verdict {
	if containsAnyOf(c.lowered(rest, owned), legacyAddrUnavailable) {
		return vListenerConfiguredAddrUnavailable
	}
	return vListenerBindFailed
}

// refineListener handles the "listener.<n> <message>" family.
func refineListener(c *Classifier, rest []byte, lvl logLevel, owned bool) verdict {
	i := 0
	for i < len(rest) && asciiDigit(rest[i]) {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != ' ' {
		return vNone
	}
	msg := rest[i+1:]
	switch {
	case hasPrefixFoldASCII(msg, "could not find available listen ip and port"):
		return vListenerBindFailed
	case hasPrefixFoldASCII(msg, "failed to listen"):
		return refineBind(c, msg, lvl, owned)
	case hasPrefixFoldASCII(msg, "could not listen on address"), hasPrefixFoldASCII(msg, "error listening on address"):
		// Per-attempt INF lines; ctrld goes on to the next candidate.
		return vNone
	case hasPrefixFoldASCII(msg, "could not listen on "):
		return refineBind(c, msg, lvl, owned)
	case hasPrefixFoldASCII(msg, "could not use "):
		// systemd-resolved forwards only to 127.0.0.1; ctrld got another
		// loopback address because 127.0.0.1:53 was taken, and no interface
		// address could be bound either.
		return vListenerBindFailed
	case lvl == levelFatal:
		return vListenerFailed
	}
	return vNone
}

// refineFlagConflict recognises "--cd/--cd-org could not be used with
// --nextdns" without claiming every message that starts with two dashes.
func refineFlagConflict(c *Classifier, rest []byte, _ logLevel, owned bool) verdict {
	if bytes.Contains(c.lowered(rest, owned), []byte("could not be used with")) {
		return vInstallerUsage
	}
	return vNone
}
