package v1beta1

import clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

// Conditions and reasons of a WindowsConfig (v1beta2 contract: []metav1.Condition).
const (
	// ReadyCondition summarises the WindowsConfig: true once its bootstrap data Secret exists.
	ReadyCondition = clusterv1.ReadyCondition

	// DataSecretAvailableCondition is true when the bootstrap data Secret has been written.
	DataSecretAvailableCondition = "DataSecretAvailable"

	// DataSecretAvailableReason: the Secret exists and status.dataSecretName points at it.
	DataSecretAvailableReason = clusterv1.AvailableReason
	// WaitingForClusterInfrastructureReason: the Cluster's infrastructure is not provisioned yet.
	WaitingForClusterInfrastructureReason = "WaitingForClusterInfrastructure"
	// WaitingForControlPlaneInitializedReason: workers can join only after the control plane is up.
	WaitingForControlPlaneInitializedReason = "WaitingForControlPlaneInitialized"
	// WaitingForControlPlaneEndpointReason: Cluster.spec.controlPlaneEndpoint is not set yet.
	WaitingForControlPlaneEndpointReason = "WaitingForControlPlaneEndpoint"
	// WaitingForMachineVersionReason: the owner Machine has no spec.version.
	WaitingForMachineVersionReason = "WaitingForMachineVersion"
	// WorkloadClusterNotReachableReason: the bootstrap token cannot be created yet.
	WorkloadClusterNotReachableReason = "WorkloadClusterNotReachable"
	// ClusterCANotAvailableReason: the <cluster>-ca Secret is missing or not a valid certificate.
	ClusterCANotAvailableReason = "ClusterCANotAvailable"
	// FileSecretNotAvailableReason: a file's contentFrom Secret or key is missing.
	FileSecretNotAvailableReason = "FileSecretNotAvailable"
	// RegistryReferenceNotAvailableReason: a registry's CA Secret/ConfigMap or credentials Secret
	// is missing, lacks its key, or holds no valid data (the message names it, never its content).
	RegistryReferenceNotAvailableReason = "RegistryReferenceNotAvailable"
	// DomainCredentialsNotAvailableReason: the activeDirectory credentials Secret is missing or
	// lacks username or password (the message names it, never its content).
	DomainCredentialsNotAvailableReason = "DomainCredentialsNotAvailable" //nolint:gosec // G101: a condition reason, not a credential
	// InsecureRegistryReason (a Warning event): a registry endpoint's certificate is not verified.
	InsecureRegistryReason = "InsecureRegistry"
	// InvalidSpecReason: the spec breaks a rule of the admission webhook (stored while the webhook
	// was not running); no bootstrap token or data is made until it is corrected.
	InvalidSpecReason = "InvalidSpec"
	// KubeletFlagNotSupportedReason: the kubelet of the Machine's version has no flag of a name in
	// nodeRegistration.kubeletExtraArgs (it would exit with "unknown flag"); no bootstrap token or
	// data is made until the flag is removed or the Machine gets a version that has it.
	KubeletFlagNotSupportedReason = "KubeletFlagNotSupported"
	// RenderFailedReason: the configuration could not be turned into user data.
	RenderFailedReason = "RenderFailed"
	// DataSecretNotCreatedReason: a generic failure writing the Secret; the message says why.
	DataSecretNotCreatedReason = "DataSecretNotCreated"
	// BootstrapTokenExpiredReason: the Machine got no Node within the join timeout, so its
	// bootstrap token was revoked unused; the data cannot join a node any more and the Machine
	// must be replaced (a MachineHealthCheck's nodeStartupTimeout, or deleting the Machine).
	BootstrapTokenExpiredReason = "BootstrapTokenExpired"
	// WaitingForOwnerReason: no Machine (or MachinePool) owns this config yet.
	WaitingForOwnerReason = "WaitingForOwner"
	// ComputerAccountReadyCondition (only with spec.activeDirectory.directory) is true once the
	// manager found the node's computer account and added it to the groups; false while it waits
	// for the join or cannot reach the directory. It is not part of Ready.
	ComputerAccountReadyCondition = "ComputerAccountReady"
	// ComputerAccountFoundReason: the account exists and is in every group listed.
	ComputerAccountFoundReason = "ComputerAccountFound"
	// ComputerAccountReusedReason: the join reused an account older than the Machine (reuse: Allow);
	// it is in the groups but is never deleted by capwin.
	ComputerAccountReusedReason = "ComputerAccountReused"
	// WaitingForComputerAccountReason: the Machine has no computer name yet, or the join has not
	// created the account yet.
	WaitingForComputerAccountReason = "WaitingForComputerAccount"
	// StaleComputerAccountReason: the domain has an account of the node's name older than the
	// Machine and reuse is Refuse: the node's join stops, and capwin does not touch the account.
	StaleComputerAccountReason = "StaleComputerAccount"
	// DirectoryNotAvailableReason: the directory's Secret, CA or server cannot be used (the message
	// says which; retried).
	DirectoryNotAvailableReason = "DirectoryNotAvailable"
	// ComputerAccountNotDeletedReason (a Warning event): the Machine's deletion could not delete
	// the account or remove it from a group within the cleanup deadline; the operator must.
	ComputerAccountNotDeletedReason = "ComputerAccountNotDeleted"
	// ComputerAccountDeletedReason (a Normal event): the account was deleted.
	ComputerAccountDeletedReason = "ComputerAccountDeleted"
	// DeletingReason: the config is being deleted.
	DeletingReason = clusterv1.DeletingReason
)
