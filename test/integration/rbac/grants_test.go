package rbac_test

import (
	"slices"
	"strings"
	"testing"
)

// unexercised are the grants no request of this test makes, each with the code path that needs
// it. Some paths the scenarios do not reach; others are authorization checks inside another
// request, never a request of their own: the OwnerReferencesPermissionEnforcement admission
// plugin admits an ownerReferences change only from who may delete the object, and
// blockOwnerDeletion only from who may update the owner's finalizers subresource.
var unexercised = map[string]map[string]string{
	"capwin-bootstrap-windows-manager": {
		"update secrets": "a data Secret whose content changed is replaced (secret.go)",
		"update bootstrap.cluster.x-k8s.io/windowsconfigs/finalizers": "the data Secret's controller reference blocks owner deletion",
		"patch events":               "the event recorder patches a repeated event's count",
		"patch events.k8s.io/events": "the event recorder patches a repeated event's series",
	},
	"capwin-infrastructure-manager": {
		"delete secrets": "adding an owner to an identity Secret (ownerReferences change)",
		"create secrets": "the node logs Secret of a log request (reconcilers/machine/nodelogs.go)",
		"update secrets": "a later log request replaces the node logs Secret (reconcilers/machine/nodelogs.go)",
		"update infrastructure.cluster.x-k8s.io/vcentermachines/finalizers": "an IPAddressClaim's controller reference blocks owner deletion",
		"update infrastructure.cluster.x-k8s.io/hypervmachines/finalizers":  "an IPAddressClaim's controller reference blocks owner deletion",
		"get ipam.cluster.x-k8s.io/ipaddressclaims":                         "IP address claims (no IPAM pool in this test)",
		"create ipam.cluster.x-k8s.io/ipaddressclaims":                      "IP address claims (no IPAM pool in this test)",
		"patch ipam.cluster.x-k8s.io/ipaddressclaims":                       "IP address claims (no IPAM pool in this test)",
		"delete ipam.cluster.x-k8s.io/ipaddressclaims":                      "IP address claims (no IPAM pool in this test)",
		"get ipam.cluster.x-k8s.io/ipaddresses":                             "the address bound to a claim",
		"list ipam.cluster.x-k8s.io/ipaddresses":                            "the address bound to a claim",
		"watch ipam.cluster.x-k8s.io/ipaddresses":                           "the address bound to a claim",
		"patch events":               "the event recorder patches a repeated event's count",
		"patch events.k8s.io/events": "the event recorder patches a repeated event's series",
	},
}

// checkGrants fails when the release's roles and the managers' requests drift apart: a verb the
// release grants that no request of this test used and that unexercised does not explain, or an
// entry of unexercised that is no longer granted or is now exercised.
func checkGrants(t *testing.T, comps map[string]*components, s *suite) {
	for name, m := range map[string]*running{"bootstrap": s.boot, "infrastructure": s.infra} {
		rules, err := comps[name].rules()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if m == nil {
			continue
		}
		explained := unexercised[m.name]
		granted := map[string]bool{}
		var idle []string
		for _, r := range rules {
			for _, group := range r.APIGroups {
				for _, res := range r.Resources {
					for _, verb := range r.Verbs {
						key := strings.TrimSuffix(verb+" "+strings.TrimPrefix(group+"/"+res, "/"), " ")
						granted[key] = true
						if !m.rec.used(verb, group, res) && explained[key] == "" {
							idle = append(idle, key)
						}
					}
				}
			}
		}
		slices.Sort(idle)
		if len(idle) > 0 {
			t.Errorf("%s: granted, never used, and no code path named in unexercised (trim the kubebuilder:rbac marker or explain it):\n    %s",
				m.name, strings.Join(slices.Compact(idle), "\n    "))
		}
		for key := range explained {
			verb, res, _ := strings.Cut(key, " ")
			group, resource := "", res
			if g, r, ok := strings.Cut(res, "/"); ok && strings.Contains(g, ".") {
				group, resource = g, r
			}
			if !granted[key] || m.rec.used(verb, group, resource) {
				t.Errorf("%s: unexercised[%q] is stale (granted %v, used %v)", m.name, key, granted[key], m.rec.used(verb, group, resource))
			}
		}
	}
}
