package guest

import (
	"fmt"
	"math/rand/v2"
	"testing"

	. "github.com/onsi/gomega"
)

func none(string) bool { return false }

func TestComputerName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ComputerName("win-0", none)).To(Equal("win-0"))
	g.Expect(ComputerName("Win_Node.01", none)).To(Equal("winnode01"))
	long := ComputerName("win-md-ltsc2022-7c9f8d5b6-x2x9z", none)
	g.Expect(long).To(HaveLen(15))
	g.Expect(long).To(HavePrefix("win-md-"))
	g.Expect(ComputerName("win-md-ltsc2022-7c9f8d5b6-x2x9z", none)).To(Equal(long), "deterministic")
	g.Expect(ComputerName("12345", none)).NotTo(Equal("12345"), "an all-numeric name is not a valid computer name")
	g.Expect(ComputerName("---", none)).To(MatchRegexp(`^w-[a-z][a-z0-9]{12}$`))
	// A taken name is salted, never reused.
	taken := map[string]bool{long: true}
	other := ComputerName("win-md-ltsc2022-7c9f8d5b6-x2x9z", func(s string) bool { return taken[s] })
	g.Expect(other).NotTo(Equal(long))
	g.Expect(other).To(HaveLen(15))
}

// TestComputerNamesNeverCollide names 100,000 Machines of one cluster, as a MachineDeployment's
// MachineSets would (shared prefixes, random suffixes).
func TestComputerNamesNeverCollide(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	used := map[string]string{}
	for i := range 100_000 {
		machine := fmt.Sprintf("win-md-%d-%08x-%05x", i%7, r.Uint32(), r.Uint32()&0xfffff)
		name := ComputerName(machine, func(s string) bool { _, ok := used[s]; return ok })
		if len(name) > MaxComputerName {
			t.Fatalf("%s -> %s: longer than 15", machine, name)
		}
		if prev, ok := used[name]; ok {
			t.Fatalf("%s and %s both got %s", prev, machine, name)
		}
		used[name] = machine
	}
}

func FuzzComputerName(f *testing.F) {
	f.Add("win-md-0-abcde-12345")
	f.Add("")
	f.Add("ÄÖÜ-ñ")
	f.Fuzz(func(t *testing.T, machine string) {
		name := ComputerName(machine, none)
		if len(name) == 0 || len(name) > MaxComputerName {
			t.Fatalf("%q -> %q", machine, name)
		}
		if sanitize(name) != name || allDigits(name) {
			t.Fatalf("%q -> %q is not a valid computer name", machine, name)
		}
	})
}
