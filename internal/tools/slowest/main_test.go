package main

import (
	"bytes"
	"strings"
	"testing"
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
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if got, want := other.String(), "# example.com/m/b [build failed]\n"; got != want {
		t.Errorf("read passed through %q, want %q: what is not an event is passed through", got, want)
	}
	s.print(&out, 2)
	if got, want := out.String(), ` seconds        package
    3.20  fail  example.com/m/a
    0.40  pass  example.com/m/b
    3.60        all packages, added up (they run side by side)

2 slowest tests:
    3.00  fail  example.com/m/a TestSlow
    2.50  pass  example.com/m/a TestSlow/sub
`; got != want {
		t.Errorf("print(2) wrote:\n%s\nwant:\n%s", got, want)
	}
}
