package hyperv

import (
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

func TestOutcomeLabelIsBounded(t *testing.T) {
	g := NewWithT(t)
	g.Expect(outcome(nil)).To(Equal("ok"))
	g.Expect(outcome(&HostError{Kind: wire.KindUnreachable})).To(Equal("Unreachable"))
	g.Expect(outcome(&HostError{Kind: wire.KindNotFound})).To(Equal("NotFound"))
	g.Expect(outcome(&HostError{Kind: "SomethingTheScriptMadeUp"})).To(Equal("Failed"))
	g.Expect(outcome(errors.New("plain"))).To(Equal("Failed"))
}
