package bench

import (
	"context"
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// Scan does to each line what an install attempt does to each line of
// ctrld start's output (the Line callback in internal/install): look for
// the identifier line until one is found, and feed the classifier. It is a
// copy because that callback is not exported; keep the two alike.
type Scan struct {
	identifier *codes.Code
	classifier *parse.Classifier
	Lines      int64
}

// NewScan returns a scan that has seen nothing.
func NewScan() *Scan { return &Scan{classifier: parse.NewClassifier()} }

// Line takes one line of output without its newline.
func (s *Scan) Line(b []byte) {
	s.Lines++
	if s.identifier == nil {
		if c, ok := parse.IdentifierLine(b); ok {
			s.identifier = &c
		}
	}
	s.classifier.Line(b)
}

// Code is the code the output points to: the identifier line's, else the
// classifier's, else "" when nothing was understood.
func (s *Scan) Code() string {
	if s.identifier != nil {
		return s.identifier.Name
	}
	if c, ok := s.classifier.Result(); ok {
		return c.Name
	}
	return ""
}

// ScanThroughRunner runs `cat file` under internal/runner, exactly as
// ctrld-install runs ctrld, and scans its output.
func ScanThroughRunner(ctx context.Context, cat, file string) (*Scan, runner.Result, error) {
	s := NewScan()
	res, err := runner.Run(ctx, runner.Command{
		Path: cat, Args: []string{file}, Dir: os.TempDir(), Env: os.Environ(), Line: s.Line,
	})
	return s, res, err
}
