package release

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// The registry and tag the checked-in configuration names capwin's images with.
const (
	DefaultRegistry = "ghcr.io/capwin"
	DefaultVersion  = "dev"
)

// Stamp is what a release names: the registry capwin's images are pushed to and the release
// version, which is also the tag of the images capwin versions with itself (the managers,
// flanneld for Windows). Images tagged otherwise (kube-proxy for Windows, tagged with the
// cluster's ${KUBERNETES_VERSION}) keep their tag and get the registry only.
type Stamp struct {
	Registry string // default DefaultRegistry
	Version  string // vMAJOR.MINOR.PATCH[-PRE]; default DefaultVersion
}

var (
	// capwinImage matches a reference to one of capwin's images: name, then tag where it is a
	// plain tag (not a ${VARIABLE}).
	capwinImage = regexp.MustCompile(regexp.QuoteMeta(DefaultRegistry+"/") + `([a-z0-9][a-z0-9._-]*)(:[A-Za-z0-9_][A-Za-z0-9._-]*)?`)
	semver      = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)
)

func (s Stamp) registry() string {
	if s.Registry == "" {
		return DefaultRegistry
	}
	return strings.TrimSuffix(s.Registry, "/")
}

func (s Stamp) version() string {
	if s.Version == "" {
		return DefaultVersion
	}
	return s.Version
}

// validate rejects versions clusterctl could not map to a release series.
func (s Stamp) validate() error {
	if v := s.version(); v != DefaultVersion && !semver.MatchString(v) {
		return fmt.Errorf("version %q: want vMAJOR.MINOR.PATCH, as clusterctl reads it", v)
	}
	return nil
}

// images rewrites capwin's image references in a components file or template.
func (s Stamp) images(body []byte) []byte {
	return capwinImage.ReplaceAllFunc(body, func(ref []byte) []byte {
		m := capwinImage.FindSubmatch(ref)
		tag := string(m[2])
		if tag == ":"+DefaultVersion {
			tag = ":" + s.version()
		}
		return []byte(s.registry() + "/" + string(m[1]) + tag)
	})
}

// metadataFile is the clusterctl metadata.yaml of the release. clusterctl refuses a version whose
// major.minor has no release series, so the first release of a new minor adds its series with the
// newest series' contract (a new contract is a decision: edit metadata.yaml for it).
func (s Stamp) metadataFile(body []byte) ([]byte, error) {
	m := semver.FindStringSubmatch(s.version())
	if m == nil {
		return body, nil
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	var meta struct {
		ReleaseSeries []struct {
			Major    int    `json:"major"`
			Minor    int    `json:"minor"`
			Contract string `json:"contract"`
		} `json:"releaseSeries"`
	}
	if err := yaml.Unmarshal(body, &meta); err != nil {
		return nil, fmt.Errorf("metadata.yaml: %w", err)
	}
	if len(meta.ReleaseSeries) == 0 {
		return nil, fmt.Errorf("metadata.yaml: no releaseSeries")
	}
	newest := meta.ReleaseSeries[0]
	for _, r := range meta.ReleaseSeries {
		if r.Major == major && r.Minor == minor {
			return body, nil
		}
		if r.Major > newest.Major || r.Major == newest.Major && r.Minor > newest.Minor {
			newest = r
		}
	}
	series := fmt.Sprintf("  - major: %d\n    minor: %d\n    contract: %s\n", major, minor, newest.Contract)
	if !strings.HasSuffix(string(body), "\n") {
		body = append(body, '\n')
	}
	return append(body, series...), nil
}
