package v1beta1

import "regexp"

// CollectLogsAnnotation on a VCenterMachine or HyperVMachine asks the infrastructure manager to
// collect the node's logs through the hypervisor's guest channel (VMware Tools guest operations,
// Hyper-V PowerShell Direct), which works whether or not the node ever joined. The value is a
// request id the requester chooses (lower-case letters, digits and inner hyphens, at most 40):
// the manager answers each id once, in the Secret NodeLogsSecretName, whose
// CollectLogsAnnotation then holds the same id. `render logs` sets it.
const CollectLogsAnnotation = "infrastructure.cluster.x-k8s.io/collect-logs"

// CollectLogsCredentialsAnnotation names a Secret in the machine's namespace (keys username and
// password: an administrator of the guest) to log in to the guest for CollectLogsAnnotation.
// Without it, the machine's spec.guestCredentialsRef is used. A hypervisor login is never sent.
const CollectLogsCredentialsAnnotation = "infrastructure.cluster.x-k8s.io/collect-logs-credentials"

// NodeLogsSecretType is the type of the Secret that holds a machine's collected logs.
const NodeLogsSecretType = "infrastructure.cluster.x-k8s.io/node-logs"

// Keys of the node logs Secret: the archive (a zip made in the guest; absent when nothing could
// be collected) and what the manager has to say about the collection.
const (
	NodeLogsArchiveKey = "logs.zip"
	NodeLogsMessageKey = "message"
)

// NodeLogsSecretName is the name of the Secret that holds the logs collected from a machine.
func NodeLogsSecretName(machine string) string { return machine + "-node-logs" }

var collectLogsID = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

// ValidCollectLogsID reports whether id may be the value of CollectLogsAnnotation (it becomes
// part of file names in the guest).
func ValidCollectLogsID(id string) bool { return collectLogsID.MatchString(id) }
