package parse

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// MaxResultFileSize is the largest result file ctrld-install reads. ctrld's
// file is a few hundred bytes; anything bigger was not written by ctrld.
const MaxResultFileSize = 64 << 10

// Fixed texts: no error may carry a byte of the file, which can hold the
// token in its message and detail fields.
var (
	ErrResultTooLarge   = errors.New("result file is larger than 64 KiB")
	ErrResultNotJSON    = errors.New("result file is not one JSON object")
	ErrResultVersion    = errors.New("result file schema version is not 1")
	ErrResultUnknown    = errors.New("result file names no registered ctrld failure")
	ErrResultIncomplete = errors.New("result file lacks stage, code or exit_code")
)

// resultFileV1 holds only the fields ctrld-install acts on. message and
// detail are free text that may contain secrets, so they are never decoded.
type resultFileV1 struct {
	Version  *int    `json:"version"`
	Stage    *string `json:"stage"`
	Code     *string `json:"code"`
	ExitCode *int    `json:"exit_code"`
}

// ResultFile parses the result file ctrld writes on a terminal provisioning
// failure (schema version 1). It returns the registered code the file names
// when its stage and exit_code agree with the registry. It does no trust
// checks on the file itself; the caller does those before handing it over.
func ResultFile(r io.Reader) (codes.Code, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxResultFileSize+1))
	if err != nil {
		return codes.Code{}, ErrResultNotJSON
	}
	if len(data) > MaxResultFileSize {
		return codes.Code{}, ErrResultTooLarge
	}
	var rf resultFileV1
	if err := json.Unmarshal(data, &rf); err != nil {
		return codes.Code{}, ErrResultNotJSON
	}
	if rf.Version == nil || *rf.Version != 1 {
		return codes.Code{}, ErrResultVersion
	}
	if rf.Stage == nil || rf.Code == nil || rf.ExitCode == nil {
		return codes.Code{}, ErrResultIncomplete
	}
	c, ok := codes.Agrees(*rf.Stage, *rf.Code, *rf.ExitCode)
	if ok {
		c, ok = ctrldCode(c)
	}
	if !ok {
		return codes.Code{}, ErrResultUnknown
	}
	return c, nil
}
