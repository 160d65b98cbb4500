package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const input = `{"Action":"start","Package":"example.com/m/a"}
{"Action":"run","Package":"example.com/m/a","Test":"TestFast"}
{"Action":"output","Package":"example.com/m/a","Test":"TestFast","Output":"=== RUN   TestFast\n"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestFast","Elapsed":0.01}
{"Action":"pass","Package":"example.com/m/a","Test":"TestSlow/sub","Elapsed":2.5}
{"Action":"fail","Package":"example.com/m/a","Test":"TestSlow","Elapsed":3}
{"Action":"fail","Package":"example.com/m/a","Elapsed":3.2}
# example.com/m/b [build failed]
{"Action":"skip","Package":"example.com/m/b","Test":"TestGated","Elapsed":0}
{"Action":"pass","Package":"example.com/m/b","Elapsed":0.4}
`

func TestSlowest(t *testing.T) {
	var other, out bytes.Buffer
	s, err := read(strings.NewReader(input), &other)
	require.NoError(t, err)
	assert.Equal(t, "# example.com/m/b [build failed]\n", other.String(), "what is not an event is passed through")
	s.print(&out, 2)
	assert.Equal(t, ` seconds        package
    3.20  fail  example.com/m/a
    0.40  pass  example.com/m/b
    3.60        all packages, added up (they run side by side)

2 slowest tests:
    3.00  fail  example.com/m/a TestSlow
    2.50  pass  example.com/m/a TestSlow/sub
`, out.String())
}
