// Command hello is the smallest Go program that needs ProcessPrng at start; it also reports
// whether the Linux root is reachable (it must not be).
package main

import (
	"crypto/rand"
	"fmt"
	"os"
)

func main() {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	_, err := os.Stat(`Z:\`)
	fmt.Printf("random %x z-drive-error %t args %q\n", b, err != nil, os.Args[1:])
	os.Exit(3)
}
