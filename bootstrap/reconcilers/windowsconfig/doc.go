// Package windowsconfig reconciles WindowsConfig objects: once the control plane is initialized it
// creates a bootstrap token in the workload cluster, computes the CA discovery hash, renders the
// Windows user data and stores it in the bootstrap data Secret the Machine consumes.
package windowsconfig
