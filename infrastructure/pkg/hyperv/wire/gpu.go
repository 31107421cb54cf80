package wire

import infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"

// GPUInput is create.ps1's GPU: a partition (mode Partition, with optional resource bounds) or
// Count assigned devices (mode Assign, LocationPath to name the one). A partition's bounds are the
// spec's as they are (each resource's min, max and optimal become Add-VMGpuPartitionAdapter's
// -MinPartition<Resource>, -MaxPartition<Resource> and -OptimalPartition<Resource>). The MMIO sizes
// are in bytes, 0 for Hyper-V's own.
type GPUInput struct {
	Mode          string                      `json:"mode"`
	Count         int32                       `json:"count"`
	LocationPath  string                      `json:"locationPath,omitempty"`
	Partition     *infrav1.HyperVGPUPartition `json:"partition,omitempty"`
	LowMMIOBytes  int64                       `json:"lowMmioBytes"`
	HighMMIOBytes int64                       `json:"highMmioBytes"`
}
