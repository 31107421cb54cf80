// Package sharding tests sharding by CAPI's watch filter with two capwin infrastructure managers
// as real processes (the binary of ./infrastructure, built by the test), each with
// --watch-filter, leader election on and its own Lease, against the harness's management
// cluster (test/framework/harness), whose in-process manager runs CAPI core and the bootstrap provider but
// no infrastructure reconcilers.
//
// The test lives in sharding_test.go; there is no non-test code here.
package sharding
