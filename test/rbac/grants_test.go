package rbac_test

import (
	"slices"
	"strings"
	"testing"
)

// logUnexercised lists, per resource, the verbs the release grants that no request of this test
// used. It only logs: a grant the scenarios do not reach (an IPAM claim's delete, a Secret update
// on an identity change) is no proof that the code never needs it, and what the
// OwnerReferencesPermissionEnforcement admission plugin checks (delete on an object whose
// ownerReferences change, update on the finalizers subresource of a blockOwnerDeletion owner) is
// an authorization check inside another request, never a request of its own.
func logUnexercised(t *testing.T, comps map[string]*components, s *suite) {
	for name, m := range map[string]*running{"bootstrap": s.boot, "infrastructure": s.infra} {
		rules, err := comps[name].rules()
		if err != nil || m == nil {
			continue
		}
		idle := map[string][]string{}
		for _, r := range rules {
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					for _, verb := range r.Verbs {
						key := strings.TrimPrefix(group+"/"+res, "/")
						if !m.rec.used(verb, group, res) && !slices.Contains(idle[key], verb) {
							idle[key] = append(idle[key], verb)
						}
					}
				}
			}
		}
		var lines []string
		for res, verbs := range idle {
			lines = append(lines, res+": "+strings.Join(verbs, ", "))
		}
		slices.Sort(lines)
		if len(lines) > 0 {
			t.Logf("%s: granted, not exercised by this test:\n    %s", m.name, strings.Join(lines, "\n    "))
		}
	}
}
