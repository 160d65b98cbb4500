package plan

import (
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

var (
	sames = []parse.Same{parse.SameUnknown, parse.SameYes, parse.SameNo}
	lasts = []Last{LastNone, LastOK, LastFailed}
	bools = []bool{false, true}
)

// every calls f with every observation and request there is.
func every(f func(Observation, Request)) {
	for _, registered := range bools {
		for _, running := range bools {
			for _, binary := range sames {
				for _, resolver := range sames {
					for _, token := range sames {
						for _, flags := range sames {
							for _, path := range sames {
								for _, last := range lasts {
									for _, secret := range bools {
										for _, force := range bools {
											for _, extra := range []int{0, 1, 2, 3, 4, 5, 6, 7} {
												f(Observation{Registered: registered, Running: running, Binary: binary, Resolver: resolver, Token: token, Flags: flags, Path: path, Last: last,
													Silent: running && extra&1 != 0, RefusedBuild: extra&2 != 0, RefusedRequest: extra&4 != 0},
													Request{Secret: secret, Force: force})
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

func changed(o Observation) bool {
	return o.Resolver == parse.SameNo || o.Token == parse.SameNo || o.Flags == parse.SameNo || o.Path == parse.SameNo
}

// What must hold of every one of the combinations.
func TestEveryCombination(t *testing.T) {
	n := 0
	every(func(o Observation, r Request) {
		n++
		p := Decide(o, r)
		fail := func(why string) { t.Errorf("%+v %+v: %v (%q): %s", o, r, p.Action, p.Reason, why) }
		if p.Reason == "" {
			fail("no reason")
		}
		if p.NeedsSecret != (p.Action == Provision) {
			fail("only a provisioning needs the token")
		}
		if p.Transaction != (p.Action != Nothing && o.Healthy()) {
			fail("a transaction is exactly an action over a healthy device")
		}
		if p.Fallback && (p.Action != Repair || !r.Secret || o.Silent) {
			fail("only a repair of a daemon that does not run may fall back to ctrld start")
		}
		if p.BuildFirst && (!p.Transaction || p.Action != Provision || o.Binary != parse.SameNo || o.Path == parse.SameNo || p.RestoreBinary) {
			fail("the build goes first only when a healthy device gets a new build and a new request")
		}
		if p.RestoreBinary && (!o.Healthy() || !o.RefusedBuild || r.Force) {
			fail("the kept build goes back only over a refused build on a healthy device, unforced")
		}
		if p.Refused && (p.Action != Nothing || !o.Healthy() || r.Force) {
			fail("only a healthy device refuses, and only what was not forced")
		}
		if p.Refused && o.RefusedBuild && !o.RefusedRequest && r.Secret && changed(o) {
			fail("a refused build blocked a change of configuration")
		}
		switch p.Action {
		case Nothing:
			// Skipped only when healthy, current, unchanged, not failed, not
			// forced; or refused.
			if !p.Refused && (!o.Healthy() || o.Binary == parse.SameNo || changed(o) || o.Last == LastFailed || r.Force) {
				fail("left alone although something is to do")
			}
		case Upgrade:
			if !o.Healthy() || o.Binary != parse.SameNo || changed(o) || o.Last == LastFailed || r.Force || o.RefusedBuild {
				fail("an upgrade needs a healthy service whose binary changed to a build not refused, and nothing else to do")
			}
		case Repair:
			if !o.Registered || (o.Running && !o.Silent) {
				fail("only a registered service that does not run or answer is repaired")
			}
			if r.Secret && (r.Force || changed(o) || o.Last == LastFailed) {
				fail("repaired although a provisioning was asked for and possible")
			}
		case Provision:
			if !r.Force && o.Registered && !changed(o) && o.Last != LastFailed {
				fail("provisioned a registered service with no reason")
			}
			if !r.Secret && o.Registered && !o.Running {
				fail("a provisioning without a token where a repair could help")
			}
		}
		// Forced with a token: always provisioned.
		if r.Force && r.Secret && p.Action != Provision {
			fail("--force did not provision")
		}
		// Nothing installed: always provisioned.
		if !o.Registered && p.Action != Provision {
			fail("nothing installed, not provisioned")
		}
	})
	if n != 2*2*3*3*3*3*3*3*2*2*8 {
		t.Fatalf("%d combinations", n)
	}
}

func TestReasons(t *testing.T) {
	healthy := Observation{Registered: true, Running: true, Binary: parse.SameYes, Resolver: parse.SameYes, Token: parse.SameUnknown, Flags: parse.SameYes, Last: LastOK}
	with := func(f func(*Observation)) Observation { o := healthy; f(&o); return o }
	for _, tc := range []struct {
		name   string
		o      Observation
		r      Request
		action Action
		reason string
	}{
		{"healthy", healthy, Request{Secret: true}, Nothing, "ctrld is running the binary on disk with the configuration asked for"},
		{"healthy, no token", healthy, Request{}, Nothing, "ctrld is running the binary on disk with the configuration asked for"},
		{"healthy, nothing recorded", with(func(o *Observation) { o.Last = LastNone }), Request{Secret: true}, Nothing, "ctrld is running the binary on disk with the configuration asked for"},
		{"healthy, the binary unknown", with(func(o *Observation) { o.Binary = parse.SameUnknown }), Request{Secret: true}, Nothing, "ctrld is running the binary on disk with the configuration asked for"},
		{"forced", healthy, Request{Secret: true, Force: true}, Provision, "--force was given"},
		{"nothing installed", Observation{}, Request{Secret: true}, Provision, "nothing is installed"},
		{"nothing installed, no token", Observation{}, Request{}, Provision, "nothing is installed"},
		{"stopped", with(func(o *Observation) { o.Running = false }), Request{}, Repair, "the service is registered but not running"},
		{"stopped, with a token", with(func(o *Observation) { o.Running = false }), Request{Secret: true}, Repair, "the service is registered but not running"},
		{"upgraded binary", with(func(o *Observation) { o.Binary = parse.SameNo }), Request{}, Upgrade, "the ctrld binary on disk is not the one the running daemon was started from"},
		{"another resolver", with(func(o *Observation) { o.Resolver = parse.SameNo }), Request{Secret: true}, Provision, "configuration changed: resolver"},
		{"another token and flags", with(func(o *Observation) { o.Token, o.Flags = parse.SameNo, parse.SameNo }), Request{Secret: true}, Provision, "configuration changed: token, extra flags"},
		{"another ctrld binary", with(func(o *Observation) { o.Path = parse.SameNo }), Request{Secret: true}, Provision, "configuration changed: ctrld binary"},
		{"changed flags, stopped, no token", with(func(o *Observation) { o.Flags, o.Running = parse.SameNo, false }), Request{}, Repair,
			"the service is registered but not running, and no token or resolver was given to provision it again"},
		{"the last provisioning failed", with(func(o *Observation) { o.Last = LastFailed }), Request{Secret: true}, Provision, "the last provisioning failed"},
		{"the last provisioning failed, the binary changed", with(func(o *Observation) { o.Last, o.Binary = LastFailed, parse.SameNo }), Request{Secret: true}, Provision, "the last provisioning failed"},
	} {
		p := Decide(tc.o, tc.r)
		if p.Action != tc.action || p.Reason != tc.reason {
			t.Errorf("%s: %v (%q), want %v (%q)", tc.name, p.Action, p.Reason, tc.action, tc.reason)
		}
	}
}

// What was rolled back on a healthy device is not tried again unless
// forced; on a device that is not healthy, nothing is protected.
func TestRefused(t *testing.T) {
	healthy := Observation{Registered: true, Running: true, Binary: parse.SameNo, Resolver: parse.SameNo, Last: LastOK}
	for _, tc := range []struct {
		name    string
		o       Observation
		r       Request
		want    Action
		reason  string
		refused bool
		restore bool
	}{
		{"refused build pushed again", with(healthy, func(o *Observation) { o.RefusedBuild, o.Resolver = true, parse.SameYes }), Request{Secret: true}, Nothing, ReasonRefusedBuild, true, true},
		{"refused build, a new request", with(healthy, func(o *Observation) { o.RefusedBuild = true }), Request{Secret: true}, Provision, "configuration changed: resolver", false, true},
		{"refused build, no token", with(healthy, func(o *Observation) { o.RefusedBuild = true }), Request{}, Nothing, ReasonRefusedBuild, true, true},
		{"refused build, forced", with(healthy, func(o *Observation) { o.RefusedBuild = true }), Request{Secret: true, Force: true}, Provision, "--force was given", false, false},
		{"a new build and a new request", healthy, Request{Secret: true}, Provision, "configuration changed: resolver", false, false},
		{"refused request again", with(healthy, func(o *Observation) { o.Binary = parse.SameYes; o.RefusedRequest = true }), Request{Secret: true}, Nothing, ReasonRefusedRequest, true, false},
		{"refused request the device already runs", with(healthy, func(o *Observation) { o.Binary, o.Resolver = parse.SameYes, parse.SameYes; o.RefusedRequest = true }), Request{Secret: true}, Nothing, "ctrld is running the binary on disk with the configuration asked for", false, false},
		{"refused request, forced", with(healthy, func(o *Observation) { o.Binary = parse.SameYes; o.RefusedRequest = true }), Request{Secret: true, Force: true}, Provision, "--force was given", false, false},
		{"another request", with(healthy, func(o *Observation) { o.Binary = parse.SameYes }), Request{Secret: true}, Provision, "configuration changed: resolver", false, false},
		{"refused build on a stopped service is repaired", with(healthy, func(o *Observation) { o.Running = false; o.RefusedBuild = true }), Request{}, Repair, "the service is registered but not running, and no token or resolver was given to provision it again", false, false},
	} {
		p := Decide(tc.o, tc.r)
		if p.Action != tc.want || p.Reason != tc.reason || p.Refused != tc.refused || p.RestoreBinary != tc.restore {
			t.Errorf("%s: %+v, want %v %q refused=%v restore=%v", tc.name, p, tc.want, tc.reason, tc.refused, tc.restore)
		}
		if wantTx := p.Action != Nothing && tc.o.Healthy(); p.Transaction != wantTx {
			t.Errorf("%s: transaction %v, want %v", tc.name, p.Transaction, wantTx)
		}
	}
}

func with(o Observation, f func(*Observation)) Observation {
	f(&o)
	return o
}
