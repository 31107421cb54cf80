package machine

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
	"github.com/capwin/capwin/infrastructure/pkg/hypervisor"
	"github.com/capwin/capwin/infrastructure/pkg/ipam"
)

// computerName returns the machine's guest hostname, choosing it once: Windows names are
// NetBIOS-safe and unique among this kind's machines of the cluster; Linux keeps the Machine name.
func (r *Reconciler) computerName(ctx context.Context, s *hypervisor.Scope) (string, error) {
	st := s.InfraMachine.GetMachineStatus()
	if st.ComputerName != "" {
		return st.ComputerName, nil
	}
	if s.Linux() {
		return s.Machine.Name, nil
	}
	var err error
	taken := r.namesTaken(ctx, s, &err)
	var name string
	if naming := hypervisor.SpecOf(s.InfraMachine).NamingStrategy; naming != nil {
		var nameErr error
		name, nameErr = guest.TemplateName(naming.Template, guest.NameData{Machine: s.Machine.Name, Cluster: s.Cluster.Name,
			Namespace: s.Machine.Namespace, UID: string(s.Machine.UID)}, taken)
		if nameErr != nil && err == nil {
			return "", hypervisor.Errorf(infrav1.InvalidSpecReason, "namingStrategy: %v", nameErr)
		}
	} else {
		name = guest.ComputerName(s.Machine.Name, taken)
	}
	if err != nil {
		return "", fmt.Errorf("choose the computer name of %s: list the machines of cluster %s: %w", s.Machine.Name, s.Cluster.Name, err)
	}
	return name, nil
}

// namesTaken reports whether another machine of this kind and cluster has a computer name; the
// first error of a lookup is stored in errp. With the field index (SetupWithManager) each name
// is one index lookup; without it (a reconciler driven by hand), the cluster's machines are
// listed once.
func (r *Reconciler) namesTaken(ctx context.Context, s *hypervisor.Scope, errp *error) func(string) bool {
	ns, cluster, self := s.Machine.Namespace, s.Cluster.Name, s.InfraMachine.GetUID()
	// Read only: the cache's own objects, not copies.
	others := func(opts ...client.ListOption) ([]string, error) {
		list := r.Kind.NewList()
		opts = append(opts, client.InNamespace(ns), client.UnsafeDisableDeepCopy)
		if err := r.Client.List(ctx, list, opts...); err != nil {
			return nil, err
		}
		var names []string
		err := meta.EachListItem(list, func(it runtime.Object) error {
			if o, ok := it.(hypervisor.Object); ok && o.GetUID() != self {
				names = append(names, strings.ToLower(o.GetMachineStatus().ComputerName))
			}
			return nil
		})
		return names, err
	}
	if r.indexed {
		return func(n string) bool {
			names, err := others(client.MatchingFields{computerNameField: computerNameKey(cluster, n)})
			if err != nil && *errp == nil {
				*errp = err
			}
			return len(names) > 0
		}
	}
	names, err := others(client.MatchingLabels{clusterv1.ClusterNameLabel: cluster})
	*errp = err
	return func(n string) bool { return slices.Contains(names, strings.ToLower(n)) }
}

// computerNameField indexes machines by cluster and lower-case computer name.
const computerNameField = "capwin.computerName"

func computerNameKey(cluster, name string) string { return cluster + "/" + strings.ToLower(name) }

// indexComputerName is the computerNameField of a machine (none until it has a name).
func indexComputerName(o client.Object) []string {
	m, ok := o.(hypervisor.Object)
	cluster := o.GetLabels()[clusterv1.ClusterNameLabel]
	if !ok || cluster == "" || m.GetMachineStatus().ComputerName == "" {
		return nil
	}
	return []string{computerNameKey(cluster, m.GetMachineStatus().ComputerName)}
}

// bootstrapData reads the Machine's bootstrap Secret (keys value and format).
func (r *Reconciler) bootstrapData(ctx context.Context, s *hypervisor.Scope) ([]byte, string, error) {
	name := s.Machine.Spec.Bootstrap.DataSecretName
	if name == nil {
		return nil, "", nil
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.Machine.Namespace, Name: *name}, secret); err != nil {
		return nil, "", fmt.Errorf("bootstrap data Secret %s: %w", *name, err)
	}
	value, ok := secret.Data["value"]
	if !ok || len(value) == 0 {
		return nil, "", fmt.Errorf("bootstrap data Secret %s has no value", *name)
	}
	format := string(secret.Data["format"])
	if format == "" {
		format = "cloud-config"
	}
	return value, format, nil
}

// nics resolves every network device's addresses: static ones from the spec and those of its
// IPAM pools. ready is false while a claim waits for its address; waiting names the claims.
func (r *Reconciler) nics(ctx context.Context, s *hypervisor.Scope) (nics []guest.NIC, ready bool, waiting string, err error) {
	devices := s.Spec.Network
	pooled, ready, pending, err := ipam.EnsureClaims(ctx, r.Client, s.InfraMachine, s.Cluster.Name, devices)
	if err != nil || !ready {
		return nil, false, strings.Join(pending, ", "), err
	}
	for i, d := range devices {
		n := guest.NIC{
			MAC: d.MACAddr, DHCP4: d.DHCP4, DHCP6: d.DHCP6, Addresses: append([]string(nil), d.IPAddrs...),
			Gateway4: d.Gateway4, Gateway6: d.Gateway6, Nameservers: d.Nameservers,
			MTU: ptr.Deref(d.MTU, 0), SearchDomains: d.SearchDomains,
		}
		for _, r := range d.Routes {
			n.Routes = append(n.Routes, guest.Route{To: r.To, Via: r.Via, Metric: ptr.Deref(r.Metric, 0)})
		}
		if i < len(pooled) {
			for _, a := range pooled[i] {
				n.Addresses = append(n.Addresses, a.CIDR)
				addGateway(&n, a.Gateway)
			}
		}
		nics = append(nics, n)
	}
	return nics, true, "", nil
}

// addGateway takes a pool's gateway when the spec names none for that address family.
func addGateway(n *guest.NIC, gw string) {
	a, err := netip.ParseAddr(gw)
	if err != nil {
		return
	}
	if a.Is4() && n.Gateway4 == "" {
		n.Gateway4 = gw
	} else if a.Is6() && n.Gateway6 == "" {
		n.Gateway6 = gw
	}
}
