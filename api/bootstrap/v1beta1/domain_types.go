package v1beta1

// ActiveDirectory joins the node to an Active Directory domain before it joins the cluster, so
// that containers can run as a group Managed Service Account (gMSA). An empty object ({}, what
// the cluster templates pass when no domain is set) means no domain join.
// +kubebuilder:validation:XValidation:rule="has(self.domain) == has(self.credentials) && (has(self.domain) || (!has(self.organizationalUnit) && !has(self.dnsServers)))",message="activeDirectory: set domain and credentials ({} means no domain join)"
// +kubebuilder:validation:XValidation:rule="has(self.directory) || ((!has(self.groups) || size(self.groups) == 0) && (!has(self.computerAccounts) || !has(self.computerAccounts.deletePolicy) || self.computerAccounts.deletePolicy != 'Delete'))",message="activeDirectory: groups and computerAccounts.deletePolicy Delete need directory (the manager's LDAP access)"
// +kubebuilder:validation:XValidation:rule="!has(self.directory) || (has(self.domain) && has(self.organizationalUnit))",message="activeDirectory.directory needs domain and organizationalUnit (the OU the manager may act in)"
type ActiveDirectory struct {
	// domain is the DNS name of the domain, e.g. corp.example.com.
	// +optional
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$`
	Domain string `json:"domain,omitempty"`

	// organizationalUnit is the distinguished name of the OU the computer account is created in,
	// e.g. OU=Kubernetes,DC=corp,DC=example,DC=com. Unset: the domain's default Computers
	// container.
	// +optional
	// +kubebuilder:validation:MinLength=4
	// +kubebuilder:validation:MaxLength=1024
	OrganizationalUnit string `json:"organizationalUnit,omitempty"`

	// dnsServers are set on the node's network adapters before the join: the domain's DNS
	// servers, which find its domain controllers. Unset keeps the adapters' DNS servers (from
	// the machine's network settings or DHCP).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MinLength=2
	// +kubebuilder:validation:items:MaxLength=45
	DNSServers []string `json:"dnsServers,omitempty"`

	// credentials name a Secret in the config's namespace with the keys username (DOMAIN\user or
	// user@domain) and password (type kubernetes.io/basic-auth) of an account allowed to join
	// computers to the domain (in the OU). Use an account with only that right: the password is
	// part of the node's bootstrap data.
	// +optional
	Credentials *SecretName `json:"credentials,omitempty"`

	// computerAccounts says what happens to the node's computer account before the join and
	// after the Machine is deleted. Unset: the join refuses an existing account, and the account
	// stays in the domain after the Machine is deleted.
	// +optional
	ComputerAccounts *ComputerAccounts `json:"computerAccounts,omitempty"`

	// groups are distinguished names of Active Directory groups the node's computer account is
	// added to as soon as the join creates it, e.g. the group allowed to retrieve a gMSA's
	// password (PrincipalsAllowedToRetrieveManagedPassword). The bootstrap manager adds it over
	// LDAP (directory), the node waits until it is a member before it joins the cluster, and the
	// Machine's deletion removes it. Needs directory.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=4
	// +kubebuilder:validation:items:MaxLength=1024
	Groups []string `json:"groups,omitempty"`

	// directory is how the bootstrap manager reaches the domain over LDAP, to delete computer
	// accounts (computerAccounts.deletePolicy: Delete) and to manage group membership (groups). It
	// acts only inside organizationalUnit and on the groups listed.
	// +optional
	Directory *Directory `json:"directory,omitempty"`
}

// ComputerAccounts is what capwin does with a node's computer account.
type ComputerAccounts struct {
	// deletePolicy is what the Machine's deletion does to the computer account the node's join
	// created: Delete removes it (with its child objects, e.g. BitLocker recovery information)
	// through directory; Keep (the default) leaves it. An account the join reused (reuse: Allow)
	// is never deleted, only removed from groups.
	// +optional
	// +kubebuilder:validation:Enum=Delete;Keep
	DeletePolicy string `json:"deletePolicy,omitempty"`

	// reuse is what the join step does when the domain already has a computer account of the
	// node's name created before the Machine: Refuse (the default) stops the bootstrap with an
	// error naming the account (a stale account of a deleted node, or another computer's); Allow
	// joins with it (Windows' own account-reuse rules still apply). An account created after the
	// Machine (its own earlier join, e.g. before its VM was made again) is always used.
	// +optional
	// +kubebuilder:validation:Enum=Refuse;Allow
	Reuse string `json:"reuse,omitempty"`
}

// Directory is an LDAP connection to the domain's domain controllers, used by the bootstrap
// manager (never by the node).
type Directory struct {
	// url is ldaps://HOST[:PORT] (TLS from the start, port 636 by default) or ldap://HOST[:PORT]
	// (port 389, always upgraded with StartTLS: no bind is ever sent in clear text).
	// +required
	// +kubebuilder:validation:MinLength=8
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^ldaps?://[A-Za-z0-9.:\[\]-]+$`
	URL string `json:"url"`

	// ca verifies the domain controller's certificate (PEM). Unset: the manager's system roots.
	// +optional
	CA *CABundle `json:"ca,omitempty"`

	// credentials name a Secret in the config's namespace with the keys username (DOMAIN\user
	// or user@domain) and password (type kubernetes.io/basic-auth) of an account that may delete
	// computer objects in organizationalUnit (with their subtree) and write the members of the
	// groups listed. It stays in the management cluster: the node never sees it.
	// +required
	Credentials SecretName `json:"credentials"`
}

// Computer account policies.
const (
	ComputerAccountDelete = "Delete"
	ComputerAccountKeep   = "Keep"
	ComputerAccountRefuse = "Refuse"
	ComputerAccountAllow  = "Allow"
)

// ActiveDirectoryStatus is the node's computer account as the bootstrap manager found it.
type ActiveDirectoryStatus struct {
	// computerName is the node's computer name (the Machine's Hostname address).
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	ComputerName string `json:"computerName,omitempty"`

	// distinguishedName is the computer account's DN when found.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	DistinguishedName string `json:"distinguishedName,omitempty"`

	// objectGUID identifies the account (the Machine's deletion acts on this object only, even if
	// it was renamed or moved).
	// +optional
	// +kubebuilder:validation:MinLength=36
	// +kubebuilder:validation:MaxLength=36
	ObjectGUID string `json:"objectGUID,omitempty"`

	// createdByJoin is true when the account was created after the Machine (by the node's join),
	// false when the join reused an older account. Only an account created by the join is deleted.
	// +optional
	CreatedByJoin *bool `json:"createdByJoin,omitempty"`

	// groups are the groups the account was added to.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MinLength=4
	// +kubebuilder:validation:items:MaxLength=1024
	Groups []string `json:"groups,omitempty"`
}
