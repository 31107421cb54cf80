package localpods

import (
	"fmt"
	"strings"
)

// Program is a local binary that stands in for an image, and how its ports are moved.
type Program struct {
	// Path is the binary.
	Path string
	// Ports are the program's flags that choose a listening port, by the container port they
	// serve; %d is the local port given instead.
	Ports map[int32]string
	// CertDirFlag, when set, names the flag that points the webhook server at its certificate
	// folder: the folder of the Secret volume mounted at CertDirMount is given instead.
	CertDirFlag, CertDirMount string
	// Flags replace the Deployment's flags of the same names.
	Flags []string
}

// ManagerProgram is a Cluster API provider's manager (Cluster API's own and capwin's share the
// flags of controller-runtime managers): webhook 9443, health 9440, metrics 8443, certificates in
// /tmp/k8s-webhook-server/serving-certs, no leader election.
func ManagerProgram(path string) Program {
	return Program{Path: path, Ports: map[int32]string{
		9443: "--webhook-port=%d", 9440: "--health-addr=127.0.0.1:%d", 8443: "--diagnostics-address=127.0.0.1:%d",
	}, CertDirFlag: "--webhook-cert-dir", CertDirMount: "/tmp/k8s-webhook-server/serving-certs",
		// Leader election finds its namespace in the service account's folder of a pod, which a
		// process here has not; with one process per Deployment there is nothing to elect.
		Flags: []string{"--leader-elect=false"}}
}

// CertManagerPrograms are cert-manager's controller, webhook and cainjector (hack/e2e/certmanager's
// builds) in dir, by image name.
func CertManagerPrograms(dir string) map[string]Program {
	return map[string]Program{
		"cert-manager-controller": {Path: dir + "/cert-manager-controller", Ports: map[int32]string{
			9402: "--metrics-listen-address=127.0.0.1:%d", 9403: "--internal-healthz-listen-address=127.0.0.1:%d"}},
		"cert-manager-webhook": {Path: dir + "/cert-manager-webhook", Ports: map[int32]string{
			10250: "--secure-port=%d", 6080: "--healthz-port=%d", 9402: "--metrics-listen-address=127.0.0.1:%d"}},
		"cert-manager-cainjector": {Path: dir + "/cert-manager-cainjector", Ports: map[int32]string{
			9402: "--metrics-listen-address=127.0.0.1:%d"}},
	}
}

// imageName is the name part of an image reference: registry.example.com/capwin/x:v1 -> x.
func imageName(image string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		image = image[:i]
	}
	name := image[strings.LastIndex(image, "/")+1:]
	if i := strings.Index(name, ":"); i >= 0 {
		name = name[:i]
	}
	return name
}

// withFlag replaces every --name or --name=value of args by flag (--name=value), or appends it.
func withFlag(args []string, flag string) []string {
	name, _, _ := strings.Cut(flag, "=")
	out := make([]string, 0, len(args)+1)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == name && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			i++ // --name value
		case a == name || strings.HasPrefix(a, name+"="):
		default:
			out = append(out, a)
		}
	}
	return append(out, flag)
}

// portFlag is the flag that moves the program's container port to local.
func (p Program) portFlag(container, local int32) (string, bool) {
	f, ok := p.Ports[container]
	if !ok {
		return "", false
	}
	return fmt.Sprintf(f, local), true
}
