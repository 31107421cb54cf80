package v1beta1

import clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

// Conditions of VCenterMachine and HyperVMachine (v1beta2 contract: []metav1.Condition).
const (
	// ReadyCondition summarises VMProvisioned and BootstrapSucceeded.
	ReadyCondition = clusterv1.ReadyCondition

	// VMProvisionedCondition is true once the VM exists, runs and reports its addresses.
	VMProvisionedCondition = "VMProvisioned"
	// BootstrapSucceededCondition mirrors the guest's bootstrap report (step, state, log tail).
	BootstrapSucceededCondition = "BootstrapSucceeded"
)

// Reasons of VMProvisioned.
const (
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	WaitingForBootstrapDataReason         = "WaitingForBootstrapData"
	// WaitingForIPAddressesReason: an IPAddressClaim of an addressesFromPools entry has no address yet.
	WaitingForIPAddressesReason = "WaitingForIPAddresses"
	CloningReason               = "Cloning"
	ConfiguringReason           = "Configuring"
	PoweringOnReason            = "PoweringOn"
	WaitingForAddressesReason   = "WaitingForAddresses"
	ProvisionedReason           = "Provisioned"
	// BootstrapDataTooLargeReason: a guestinfo value (or KVP item) would exceed its limit; no VM
	// is created with truncated data.
	BootstrapDataTooLargeReason = "BootstrapDataTooLarge"
	// InvalidSpecReason: the spec cannot be realised (template missing, disk smaller than the
	// template's, network not found ...); the message names the field.
	InvalidSpecReason = "InvalidSpec"
	// TaskFailedReason: a hypervisor task failed; the next reconcile retries.
	TaskFailedReason = "TaskFailed"
	// HypervisorErrorReason: the hypervisor could not be reached or refused a call.
	HypervisorErrorReason = "HypervisorError"
	// WaitingForTaskSlotReason: the manager already runs as many tasks on this vCenter as
	// --vcenter-max-tasks allows; the machine's next task starts when one of them ends.
	WaitingForTaskSlotReason = "WaitingForTaskSlot"
	// VMMissingReason: a provisioned VM is gone from the hypervisor; it is not re-created.
	VMMissingReason = "VMMissing"
	// VMNotOwnedReason: the VM that spec.providerID (or a lookup) points at does not carry
	// capwin's ownership mark for this very object. capwin never adopts, changes or deletes it;
	// deleting the object leaves the VM alone.
	VMNotOwnedReason = "VMNotOwned"
	DeletingReason   = clusterv1.DeletingReason
)

// Reasons of BootstrapSucceeded.
const (
	WaitingForGuestReason         = "WaitingForGuest"
	BootstrapRunningReason        = "Running"
	BootstrapRebootingReason      = "Rebooting"
	BootstrapFailedReason         = "Failed"
	BootstrapSucceededReason      = "Succeeded"
	GuestScriptNotStartedReason   = "GuestScriptNotStarted"
	GuestCredentialsMissingReason = "GuestCredentialsMissing"
)

// Conditions of VCenterCluster and HyperVCluster.
const (
	// HypervisorAvailableCondition is true when capwin could log in to vCenter (or reach every
	// Hyper-V host) and find the datacenter / failure domains.
	HypervisorAvailableCondition = "HypervisorAvailable"

	HypervisorAvailableReason   = "Available"
	CredentialsNotFoundReason   = "CredentialsNotFound"
	LoginFailedReason           = "LoginFailed"
	TLSVerificationFailedReason = "TLSVerificationFailed"
	PlacementNotFoundReason     = "PlacementNotFound"
	WaitingForEndpointReason    = "WaitingForControlPlaneEndpoint"

	// AuthenticationFailedReason: the server refused the credentials of the Secret; they are not
	// tried again until the Secret changes, so a directory account is not locked out. Machines
	// show it on VMProvisioned, too.
	AuthenticationFailedReason = "AuthenticationFailed"

	// CredentialsInUseReason: the credentials Secret belongs to another VCenterCluster,
	// HyperVCluster or cluster identity (its first capwin owner); capwin neither takes it over nor
	// logs in with it. Machines show it on VMProvisioned, too.
	CredentialsInUseReason = "CredentialsInUse"
	// NamespaceNotAllowedReason: the cluster identity named by the cluster does not allow the
	// cluster's namespace (its spec.allowedNamespaces); nothing is sent to the server.
	NamespaceNotAllowedReason = "NamespaceNotAllowed"
	// EndpointNotLentReason: the cluster identity does not lend its login to the server or host
	// the cluster names, or not with the cluster's settings (its spec.servers or spec.hosts);
	// nothing is sent there. An identity shows it when it lists no endpoint at all.
	EndpointNotLentReason = "EndpointNotLent"
	// ResourceNotLentReason: a cluster or machine names a hypervisor resource (template, folder,
	// pool, datastore, network, parent disk or its source, path, switch, VLAN) the cluster
	// identity does not lend (its spec.allowed); nothing is created with it. Machines show it on
	// VMProvisioned.
	ResourceNotLentReason = "ResourceNotLent"
	// SecretNotALoginReason: the Secret a cluster or identity names is no login (a TLS key, a
	// service account token, a registry's docker config, or another controller's Secret); capwin
	// neither takes it over nor sends anything with it.
	SecretNotALoginReason = "SecretNotALogin"
)

// ForgetVMAnnotation on a VCenterMachine or HyperVMachine being deleted drops its finalizer
// without contacting the hypervisor: the way out when the vCenter or Hyper-V host holding the VM
// is gone for good. The VM, if it still exists, is left behind for the operator to remove (an
// event names it). Like CAPI's cluster.x-k8s.io/skip-remediation, the value is ignored.
const ForgetVMAnnotation = "infrastructure.cluster.x-k8s.io/forget-vm"
