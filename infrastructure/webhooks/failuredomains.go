package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// failureDomainProblems checks a vCenter failure domain's zone and region (the schema checks
// them too; the webhook says it in words where a template's schema may be older): both or
// neither, and of two categories (a tag of each goes on the domain's VMs).
func failureDomainProblems(fd infrav1.VCenterFailureDomain, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case fd.Zone != nil && fd.Region == nil:
		errs = append(errs, field.Required(path.Child("region"), "set both zone and region, or neither: the domain's VMs get both tags"))
	case fd.Zone == nil && fd.Region != nil:
		errs = append(errs, field.Required(path.Child("zone"), "set both zone and region, or neither: the domain's VMs get both tags"))
	case fd.Zone != nil && fd.Zone.Category == fd.Region.Category:
		errs = append(errs, field.Invalid(path.Child("region", "category"), fd.Region.Category, "must differ from the zone's category"))
	}
	return errs
}

// failureDomainChanges refuses a change of a failure domain's zone or region: the domain's VMs
// carry the tags they had when they were created, and capwin does not move them.
func failureDomainChanges(old, spec infrav1.VCenterClusterSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, fd := range spec.FailureDomains {
		was := old.FailureDomain(fd.Name)
		if was == nil {
			continue
		}
		for _, t := range []struct {
			name     string
			now, had *infrav1.VCenterTag
		}{{"zone", fd.Zone, was.Zone}, {"region", fd.Region, was.Region}} {
			if !sameTag(t.now, t.had) {
				errs = append(errs, field.Invalid(path.Child("failureDomains").Index(i).Child(t.name), t.now,
					"field is immutable: the domain's VMs carry its tag; add a new failure domain instead"))
			}
		}
	}
	return errs
}

func sameTag(a, b *infrav1.VCenterTag) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
