// Package fake exists only so that `go mod tidy` can resolve the import made
// by cert-manager's own (never built here) Venafi client tests.
package fake
