package v1beta1

// DefaultRegistryHost is the registry entry that applies to every registry without an entry of
// its own (containerd's certs.d\_default).
const DefaultRegistryHost = "_default"

// Registry configures how containerd on the node reaches one registry: the mirrors it tries
// first, the CA that signs the registry's certificate and the credentials for node-level pulls.
// It becomes containerd's hosts.toml in C:\Program Files\containerd\certs.d\<host>.
// +kubebuilder:validation:XValidation:rule="self.host != '_default' || !has(self.credentials)",message="credentials are sent to a host by name: _default has no host of its own; set them on its mirrors"
// +kubebuilder:validation:XValidation:rule="!has(self.mirrors) || self.mirrors.all(m, self.mirrors.exists_one(n, n.url == m.url))",message="mirrors: each url may appear only once"
type Registry struct {
	// host is the registry as image names spell it, e.g. "docker.io", "registry.k8s.io" or
	// "registry.corp.example:5000", or "_default" for every registry without an entry of its own.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(_default|[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?)$`
	Host string `json:"host"`

	// mirrors are tried in this order before the registry itself.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	Mirrors []RegistryMirror `json:"mirrors,omitempty"`

	// RegistryAccess is how containerd connects to the registry itself (not to its mirrors).
	RegistryAccess `json:",inline"`
}

// RegistryMirror is an endpoint containerd tries before the registry itself.
type RegistryMirror struct {
	// url of the mirror, e.g. https://mirror.corp.example:5000. containerd appends /v2 unless
	// overridePath is true, for mirrors that serve a registry under a path of their own
	// (e.g. Harbor or Artifactory proxy projects).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:Pattern=`^https?://[^\s/?#@]+(/[^\s?#]*)?$`
	URL string `json:"url"`

	// capabilities of the mirror: pull (fetch content) and resolve (turn a tag into a digest).
	// The default is both; a mirror with pull only is used for content addressed by digest.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	Capabilities []MirrorCapability `json:"capabilities,omitempty"`

	// overridePath uses the url's path as the registry API root instead of appending /v2.
	// +optional
	OverridePath bool `json:"overridePath,omitempty"`

	// RegistryAccess is how containerd connects to this mirror.
	RegistryAccess `json:",inline"`
}

// MirrorCapability is what containerd may use a mirror for.
// +kubebuilder:validation:Enum=pull;resolve
type MirrorCapability string

// Mirror capabilities.
const (
	MirrorPull    MirrorCapability = "pull"
	MirrorResolve MirrorCapability = "resolve"
)

// RegistryAccess is how containerd connects to one registry endpoint.
// +kubebuilder:validation:XValidation:rule="!(has(self.ca) && has(self.insecureSkipVerify) && self.insecureSkipVerify)",message="set either ca or insecureSkipVerify, not both: with insecureSkipVerify the ca is not used"
type RegistryAccess struct {
	// ca is the PEM bundle of the CA(s) that sign the endpoint's certificate. containerd 2.x adds
	// it to Windows' trusted roots; containerd 1.7 on Windows uses it instead of them.
	// +optional
	CA *CABundle `json:"ca,omitempty"`

	// insecureSkipVerify turns off the verification of the endpoint's certificate. Anyone on the
	// network path can then serve the node's images; the config records a Warning event.
	// +optional
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`

	// credentials name a Secret in the config's namespace with the keys username and password
	// (type kubernetes.io/basic-auth) that containerd sends to this endpoint for every pull that
	// brings no credentials of its own: the pause image, HostProcess CNI and kube-proxy images,
	// and Pods without imagePullSecrets.
	// +optional
	Credentials *SecretName `json:"credentials,omitempty"`
}

// CABundle is PEM certificate data given inline or read from a Secret or ConfigMap key in the
// config's namespace.
// +kubebuilder:validation:XValidation:rule="[has(self.content), has(self.secret), has(self.configMap)].filter(x, x).size() == 1",message="ca: set exactly one of content, secret and configMap"
type CABundle struct {
	// content is the PEM data.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=65536
	Content string `json:"content,omitempty"`
	// secret holding the PEM data.
	// +optional
	Secret *SecretKey `json:"secret,omitempty"`
	// configMap holding the PEM data.
	// +optional
	ConfigMap *ConfigMapKey `json:"configMap,omitempty"`
}

// SecretName names a Secret in the config's namespace.
type SecretName struct {
	// name of the Secret.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// ConfigMapKey names a key of a ConfigMap.
type ConfigMapKey struct {
	// name of the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// key within the ConfigMap.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}
