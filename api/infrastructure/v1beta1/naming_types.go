package v1beta1

// NamingStrategy says how a Windows machine's computer name is made: the name Windows, Active
// Directory and DNS know the node by, and its Kubernetes Node name. The VM keeps the Machine's
// name.
type NamingStrategy struct {
	// template is a Go template that gives the computer name. Data: .machine.name, .cluster.name,
	// .namespace, and .random (five letters and digits derived from the Machine's UID: the same on
	// every reconcile, drawn again when the name is taken in the cluster). Functions: lower,
	// trunc N (a negative N keeps the last characters), trimPrefix, trimSuffix, replace OLD NEW,
	// and eq, ne, and, or, not, len; text, actions, if and with only. The output is lowercased
	// and everything but letters, digits and '-' is dropped. The admission webhook refuses a
	// template that can give more than 15 characters (Windows' NetBIOS limit) for the longest
	// names Kubernetes allows, or the same name to two machines of one MachineDeployment, e.g.
	// "{{ .cluster.name | trunc 8 }}-w{{ .random }}".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	Template string `json:"template"`
}
