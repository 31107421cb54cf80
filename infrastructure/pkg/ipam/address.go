package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// boundAddress reads the address bound to a claim, or says why the claim still waits.
func boundAddress(ctx context.Context, c client.Client, claim *ipamv1.IPAddressClaim) (Address, string, error) {
	ref := claim.Status.AddressRef.Name
	if ref == "" {
		if why := claimProblem(claim); why != "" {
			return Address{}, fmt.Sprintf("%s (%s)", claim.Name, why), nil
		}
		return Address{}, claim.Name, nil
	}
	key := client.ObjectKey{Namespace: claim.Namespace, Name: ref}
	ip := &ipamv1.IPAddress{}
	if err := c.Get(ctx, key, ip); apierrors.IsNotFound(err) {
		return Address{}, fmt.Sprintf("%s (IPAddress %s not found)", claim.Name, ref), nil
	} else if err != nil {
		return Address{}, "", fmt.Errorf("get IPAddress %s of IPAddressClaim %s: %w", key, claim.Name, err)
	}
	if ip.Spec.ClaimRef.Name != claim.Name {
		return Address{}, "", fmt.Errorf("IPAddress %s, bound to IPAddressClaim %s, was made for claim %q", key, claim.Name, ip.Spec.ClaimRef.Name)
	}
	addr, err := toAddress(ip)
	if err != nil {
		return Address{}, "", fmt.Errorf("IPAddress %s of IPAddressClaim %s: %w", key, claim.Name, err)
	}
	return addr, "", nil
}

// toAddress checks an IPAddress and converts it, IPv4 or IPv6.
func toAddress(ip *ipamv1.IPAddress) (Address, error) {
	a, err := netip.ParseAddr(ip.Spec.Address)
	if err != nil {
		return Address{}, fmt.Errorf("address: %w", err)
	}
	if a.Zone() != "" {
		return Address{}, fmt.Errorf("address %q has a zone", ip.Spec.Address)
	}
	if ip.Spec.Prefix == nil {
		return Address{}, fmt.Errorf("address %s has no prefix", a)
	}
	prefix := int(*ip.Spec.Prefix)
	if prefix < 0 || prefix > a.BitLen() {
		return Address{}, fmt.Errorf("prefix %d is out of range for %s (0-%d)", prefix, a, a.BitLen())
	}
	out := Address{CIDR: netip.PrefixFrom(a, prefix).String()}
	if ip.Spec.Gateway != "" {
		g, err := netip.ParseAddr(ip.Spec.Gateway)
		if err != nil {
			return Address{}, fmt.Errorf("gateway: %w", err)
		}
		if g.Is4() != a.Is4() {
			return Address{}, fmt.Errorf("gateway %s is not of the family of address %s", g, a)
		}
		out.Gateway = g.String()
	}
	return out, nil
}

// claimProblem is the failure an IPAM provider reported on a claim (Ready=False), if any.
func claimProblem(claim *ipamv1.IPAddressClaim) string {
	if cond := meta.FindStatusCondition(claim.Status.Conditions, ipamv1.IPAddressClaimReadyCondition); cond != nil {
		if cond.Status == metav1.ConditionFalse {
			return describeProblem(cond.Reason, cond.Message)
		}
		return ""
	}
	// Providers still on v1beta1 report through the deprecated conditions.
	for _, cond := range claim.GetV1Beta1Conditions() {
		if cond.Type == clusterv1.ReadyCondition && cond.Status == corev1.ConditionFalse {
			return describeProblem(cond.Reason, cond.Message)
		}
	}
	return ""
}

func describeProblem(reason, message string) string {
	message = strings.Join(strings.Fields(message), " ")
	if r := []rune(message); len(r) > maxReasonLen {
		message = string(r[:maxReasonLen]) + "…"
	}
	switch {
	case reason != "" && message != "":
		return reason + ": " + message
	case message != "":
		return message
	default:
		return reason
	}
}
