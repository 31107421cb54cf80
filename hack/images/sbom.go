package main

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"time"
)

// spdxOf is an SPDX 2.3 document of a Go program, from the module list the Go toolchain records
// in it (what `go version -m` prints, and what ko's SBOMs are made from).
func spdxOf(exe string, src goSource, created time.Time) ([]byte, error) {
	info, err := buildinfo.ReadFile(exe)
	if err != nil {
		return nil, err
	}
	type pkg struct {
		ID       string `json:"SPDXID"`
		Name     string `json:"name"`
		Version  string `json:"versionInfo"`
		Download string `json:"downloadLocation"`
		Refs     []any  `json:"externalRefs"`
	}
	type rel struct {
		A    string `json:"spdxElementId"`
		Type string `json:"relationshipType"`
		B    string `json:"relatedSpdxElement"`
	}
	purl := func(path, version string) []any {
		return []any{map[string]string{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
			"referenceLocator": fmt.Sprintf("pkg:golang/%s@%s", path, version)}}
	}
	main := pkg{ID: "SPDXRef-Package-main", Name: src.pkg, Version: src.version, Download: "NOASSERTION", Refs: purl(src.module, src.version)}
	pkgs := []pkg{main}
	rels := []rel{{"SPDXRef-DOCUMENT", "DESCRIBES", main.ID}}
	for i, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		p := pkg{ID: fmt.Sprintf("SPDXRef-Package-%d", i), Name: d.Path, Version: d.Version, Download: "NOASSERTION", Refs: purl(d.Path, d.Version)}
		pkgs = append(pkgs, p)
		rels = append(rels, rel{main.ID, "DEPENDS_ON", p.ID})
	}
	doc := map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              src.pkg + "@" + src.version,
		"documentNamespace": fmt.Sprintf("https://capwin.local/spdx/%s@%s", src.pkg, src.version),
		"creationInfo": map[string]any{
			"created":  created.UTC().Format(time.RFC3339),
			"creators": []string{"Tool: capwin hack/images", "Tool: " + info.GoVersion},
		},
		"packages":      pkgs,
		"relationships": rels,
	}
	return json.MarshalIndent(doc, "", "  ")
}
