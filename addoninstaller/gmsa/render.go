package gmsa

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// placeholder is a ${NAME} of the upstream template.
var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]*)\}`)

// tolerations is inserted after the Deployment's nodeSelector (`kubernetes.io/os: linux${TOLERATIONS}`):
// the Linux nodes of most capwin clusters are control-plane nodes only.
const tolerations = `
      tolerations:
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule`

// values are the template's placeholders, as the upstream deploy script fills them in.
func values(image string, p keyPair) map[string]string {
	return map[string]string{
		"NAMESPACE":       Namespace,
		"NAME":            Name,
		"RBAC_ROLE_NAME":  Namespace + "-" + Name + "-rbac-role",
		"IMAGE_NAME":      image,
		"TOLERATIONS":     tolerations,
		"TLS_CERTIFICATE": base64.StdEncoding.EncodeToString(p.cert),
		"TLS_PRIVATE_KEY": base64.StdEncoding.EncodeToString(p.key),
		"CA_BUNDLE":       base64.StdEncoding.EncodeToString(p.cert),
	}
}

// render fills in tpl. A placeholder it has no value for fails the installation, naming it: a
// new release may need a setting this installer does not know.
func render(tpl []byte, vals map[string]string) ([]byte, error) {
	unknown := map[string]bool{}
	out := placeholder.ReplaceAllStringFunc(string(tpl), func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v, ok := vals[name]
		if !ok {
			unknown[name] = true
			return m
		}
		return v
	})
	if len(unknown) > 0 {
		var names []string
		for n := range unknown {
			names = append(names, "${"+n+"}")
		}
		return nil, fmt.Errorf("placeholders this installer does not know: %s", strings.Join(sorted(names), ", "))
	}
	return []byte(out), nil
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}
