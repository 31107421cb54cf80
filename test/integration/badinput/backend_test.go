package badinput_test

import (
	"testing"

	. "github.com/onsi/gomega"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/internal/test/badinput"
)

// backend is one provider in the tests that run over both: its cluster and machine kinds, the
// rows that break them, and its VMs.
type backend struct {
	name string
	// fixture is a cluster whose infrastructure is provisioned, for machines.
	fixture func(t *testing.T) *fixture
	// machineRows and clusterRows break the provider's machine and cluster specs.
	machineRows []testCase[machineObjects]
	clusterRows []testCase[clusterObjects]
	// machine is a machine of a valid spec.
	machine func() badinput.Object
	// undefaulted is a machine the defaulting webhook would change; unwritten checks, on the
	// stored machine, the defaults of the provider's own fields.
	undefaulted func() (machine, func(g Gomega))
	// vms counts the hypervisor's VMs of the object uid.
	vms func(uid string) int
}

// machine is a VCenterMachine or a HyperVMachine.
type machine interface {
	badinput.Object
	hypervisor.Object
}

// machineObjects are a template and a machine of one spec, and their webhooks' answers.
type machineObjects struct {
	template       badinput.Object
	templateStatus *infrav1.MachineTemplateStatus
	machine        badinput.Object
	// templateErr and machineErr are what the validating webhooks answer at create.
	templateErr, machineErr error
}

// clusterObjects are a cluster of one spec, and the webhooks' answers for it and for a cluster
// template of that spec.
type clusterObjects struct {
	cluster                 badinput.Object
	clusterErr, templateErr error
}

// testCase is a row of one provider's spec S with S put away: objects breaks a valid spec and
// returns the objects of the broken spec.
type testCase[O any] struct {
	name, field string
	objects     func() O
}

func cases[S, O any](rows []row[S], valid func() S, objects func(S) O) []testCase[O] {
	out := make([]testCase[O], len(rows))
	for i, r := range rows {
		out[i] = testCase[O]{r.name, r.field, func() O {
			s := valid()
			r.mutate(&s)
			return objects(s)
		}}
	}
	return out
}

// backends are the providers the tests run over, as subtests named after them.
var backends = []backend{vcenterBackend, hypervBackend}
