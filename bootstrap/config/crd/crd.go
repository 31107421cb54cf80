// Package crd holds the bootstrap provider's generated CustomResourceDefinitions, so tools that
// run without an API server (the render CLI) validate with exactly the schema a cluster uses.
package crd

import "embed"

// Bases are the CRDs controller-gen writes into bases/.
//
//go:embed bases/*.yaml
var Bases embed.FS
