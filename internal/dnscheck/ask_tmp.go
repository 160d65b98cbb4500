package dnscheck

import "context"

type Answer int

const (
	NoAnswer Answer = iota
	Ctrld
	Other
)

func Ask(ctx context.Context, addr string) Answer {
	if Answers(ctx, addr) {
		return Ctrld
	}
	return NoAnswer
}
