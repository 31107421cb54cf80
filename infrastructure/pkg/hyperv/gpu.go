package hyperv

import (
	"cmp"
	"slices"
	"strings"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/hyperv/wire"
)

// The MMIO space of a VM with an assigned GPU when the spec sets none: the values Microsoft's DDA
// guide gives for one GPU, "Deploy graphics devices by using Discrete Device Assignment",
// https://learn.microsoft.com/windows-server/virtualization/hyper-v/deploy/deploying-graphics-devices-using-dda
// (Set-VM -LowMemoryMappedIoSpace 3Gb, -HighMemoryMappedIoSpace 33280Mb).
const (
	ddaLowMMIOMiB  = 3 * 1024
	ddaHighMMIOMiB = 33280
)

// gpuInput renders spec.gpu for create.ps1 (nil: no GPU).
func gpuInput(g *infrav1.HyperVGPU) *wire.GPUInput {
	if g == nil {
		return nil
	}
	in := &wire.GPUInput{Mode: string(g.Mode), Count: max(g.Count, 1), LocationPath: g.LocationPath,
		LowMMIOBytes: int64(g.LowMMIOSpaceMiB) << 20, HighMMIOBytes: g.HighMMIOSpaceMiB << 20}
	if g.Mode == infrav1.GPUAssign {
		in.LowMMIOBytes = cmp.Or(in.LowMMIOBytes, ddaLowMMIOMiB<<20)
		in.HighMMIOBytes = cmp.Or(in.HighMMIOBytes, ddaHighMMIOMiB<<20)
	}
	if p := g.Partition; p != nil && g.Mode == infrav1.GPUPartition {
		in.Partition = p
	}
	return in
}

// maxAssignable and maxLocationPath are the CRD's limits on status.hosts[].gpu.assignableDevices.
const (
	maxAssignable   = 64
	maxLocationPath = 512
)

// GPUStatus is what host.ps1 reports of the host's GPUs, made fit for status: free partitions never
// below zero, location paths trimmed, non-empty, unique, sorted and within the CRD's limits (a path
// too long to keep could not be asked for by spec.gpu.locationPath either). nil when the host has
// no free GPU.
func GPUStatus(info wire.HostInfo) *infrav1.HyperVHostGPUStatus {
	free := min(max(info.GPUPartitions-info.GPUPartitionsInUse, 0), 1<<20)
	var paths []string
	for _, p := range info.AssignableDevices {
		if p = strings.TrimSpace(p); p != "" && len(p) <= maxLocationPath {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	if len(paths) > maxAssignable {
		paths = paths[:maxAssignable]
	}
	if free == 0 && len(paths) == 0 {
		return nil
	}
	return &infrav1.HyperVHostGPUStatus{FreePartitions: int32(free), AssignableDevices: paths} //nolint:gosec // bounded above
}

// hasFreeGPU reports whether a host, as last probed, has what spec.gpu asks for.
func hasFreeGPU(st *infrav1.HyperVHostGPUStatus, g *infrav1.HyperVGPU) bool {
	if g == nil {
		return true
	}
	if st == nil {
		return false
	}
	if g.Mode == infrav1.GPUPartition {
		return st.FreePartitions > 0
	}
	if g.LocationPath != "" {
		return slices.ContainsFunc(st.AssignableDevices, func(p string) bool { return strings.EqualFold(p, g.LocationPath) })
	}
	return len(st.AssignableDevices) >= int(max(g.Count, 1))
}

// gpuWords name what spec.gpu asks for, for the placement's error.
func gpuWords(g *infrav1.HyperVGPU) string {
	switch {
	case g.Mode == infrav1.GPUPartition:
		return "a free GPU partition"
	case g.LocationPath != "":
		return "assignable device " + g.LocationPath + " free"
	}
	return "free assignable GPUs"
}
