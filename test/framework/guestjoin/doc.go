// Package guestjoin holds what a simulated guest does the same way wherever it runs (the
// in-process harness guest in test/framework/harness/guest and the kind e2e's guest simulator): reading
// the kubelet's flags, kubeadm's bootstrap-token discovery checks on cluster-info, the bootstrap
// signer's detached JWS, and decoding guestinfo values. It depends on client-go and the kubeadm
// types only, so a CGO_ENABLED=0 simulator binary can import it.
package guestjoin
