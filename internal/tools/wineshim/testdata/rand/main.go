// Command rand prints 32 bytes from crypto/rand in hex: a Go program that
// starts at all under Wine needed ProcessPrng, and this one uses it.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

func main() {
	b := make([]byte, 32)
	rand.Read(b)
	fmt.Println(hex.EncodeToString(b))
}
