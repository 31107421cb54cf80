package wire

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/capwin/capwin/internal/test/pscheck"
)

// TestScriptsParse checks every host script with the PowerShell grammar, and that the runner fits
// on a command line (cmd.exe allows 8191 characters).
func TestScriptsParse(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	var paths []string
	for _, s := range Scripts() {
		paths = append(paths, filepath.Join("ps", s.Name+".ps1"))
		for i, c := range s.Text {
			if c > 127 {
				t.Errorf("%s: non-ASCII character at %d", s.Name, i)
				break
			}
		}
	}
	results, err := pscheck.Files(paths...)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(paths) {
		t.Fatalf("parsed %d files, want %d", len(results), len(paths))
	}
	for _, r := range results {
		if len(r.Errors) > 0 {
			t.Error(r.String())
		}
	}
	if n := len(RunnerCommand); n > 8000 {
		t.Errorf("runner command line is %d characters", n)
	}
}

// TestScriptsTakeOnlyInput: operation scripts declare one parameter, the JSON document.
func TestScriptsTakeOnlyInput(t *testing.T) {
	for _, s := range Scripts() {
		if s.Name == "runner" || s.Name == "common" {
			continue
		}
		if !strings.Contains(s.Text, "\nparam($In)\n") {
			t.Errorf("%s: does not start with param($In)", s.Name)
		}
	}
	if _, err := os.Stat(filepath.Join("ps", "runner.ps1")); err != nil {
		t.Fatal(err)
	}
}

// TestCreateDiskOrder reads create.ps1's calls: data disks are made with New-VHD's -SizeBytes and
// -Dynamic or -Fixed sets, attached at the locations $In gives on SCSI controller 0, and the config
// drive goes at its own location after them, so the guest addresses follow the documented rule.
func TestCreateDiskOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	calls, err := pscheck.Calls(filepath.Join("ps", "create.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	named := func(name string, args ...string) func(pscheck.Call) bool {
		return func(c pscheck.Call) bool {
			return c.Name == name && slices.ContainsFunc(c.Args, func(a string) bool { return slices.Contains(args, a) })
		}
	}
	for _, set := range []string{"-Dynamic", "-Fixed"} {
		if c, i := pscheck.Find(calls, named("New-VHD", set)); i < 0 || !slices.Contains(c.Args, "-SizeBytes") || slices.Contains(c.Args, "-ParentPath") {
			t.Errorf("New-VHD %s: %v", set, c.Args)
		}
	}
	data, d := pscheck.Find(calls, named("Add-VMHardDiskDrive", "$data.location"))
	dvd, v := pscheck.Find(calls, named("Add-VMDvdDrive", "$In.configDriveLocation"))
	want := []string{"-ControllerType", "SCSI", "-ControllerNumber", "0", "-ControllerLocation", "$data.location"}
	if d < 0 || v < 0 || d > v || len(data.Args) < 8 || !slices.Equal(data.Args[2:8], want) || !slices.Contains(dvd.Args, "-ControllerNumber") {
		t.Errorf("data disks attached by call %d %v, config drive by call %d %v; want the data disks first, at SCSI 0:$data.location", d, data.Args, v, dvd.Args)
	}
}

// TestCreateTPMCalls reads create.ps1's calls: the TPM is checked first (Get-VMSecurity), a local
// key protector is set only where Get-VMKeyProtector found none, and Enable-VMTPM comes after it.
func TestCreateTPMCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	calls, err := pscheck.Calls(filepath.Join("ps", "create.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	index := func(name string) int {
		_, i := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == name && c.Function == "Enable-CapwinTpm" })
		return i
	}
	security, protector, set, enable := index("Get-VMSecurity"), index("Get-VMKeyProtector"), index("Set-VMKeyProtector"), index("Enable-VMTPM")
	if security < 0 || security > protector || protector > set || set > enable {
		t.Errorf("Enable-CapwinTpm calls Get-VMSecurity %d, Get-VMKeyProtector %d, Set-VMKeyProtector %d, Enable-VMTPM %d; want them in this order", security, protector, set, enable)
	}
	if c, _ := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == "Set-VMKeyProtector" }); !slices.Equal(c.Args, []string{"-VM", "$VM", "-NewLocalKeyProtector"}) {
		t.Errorf("Set-VMKeyProtector %v, want -VM $VM -NewLocalKeyProtector", c.Args)
	}
}

// TestGPUCalls reads the GPU calls of create.ps1 and remove.ps1 against the parameter sets of
// Microsoft's cmdlet docs: the free GPU is checked before New-VM makes anything; the VM gets
// Set-VM -GuestControlledCacheTypes with the MMIO space, then Add-VMGpuPartitionAdapter (VMObject
// set, bounds splatted) or Add-VMAssignableDevice -VM -LocationPath; remove.ps1 gives the devices
// back with Remove-VMAssignableDevice's Object set (it has no -VM) and the partition with
// Remove-VMGpuPartitionAdapter -VM, before Remove-VM.
func TestGPUCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	create, err := pscheck.Calls(filepath.Join("ps", "create.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	at := func(calls []pscheck.Call, name, function string) (pscheck.Call, int) {
		return pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == name && c.Function == function })
	}
	test, tested := at(create, "Test-CapwinGpu", "")
	_, newVM := at(create, "New-VM", "")
	if tested < 0 || newVM < 0 || tested > newVM || !slices.Equal(test.Args, []string{"$vm", "$In.gpu"}) {
		t.Errorf("Test-CapwinGpu is call %d %v, New-VM call %d: want the GPU checked first", tested, test.Args, newVM)
	}
	want := map[string][]string{
		"Set-VM":                    {"-VM", "$VM", "-GuestControlledCacheTypes", "$true", "@mmio"},
		"Add-VMGpuPartitionAdapter": {"-VM", "$VM", "@bounds"},
		"Add-VMAssignableDevice":    {"-VM", "$VM", "-LocationPath", "$device.LocationPath"},
	}
	for name, args := range want {
		if c, i := at(create, name, "Add-CapwinGpu"); i < 0 || !slices.Equal(c.Args, args) {
			t.Errorf("Add-CapwinGpu calls %s %v, want %v", name, c.Args, args)
		}
	}
	remove, err := pscheck.Calls(filepath.Join("ps", "remove.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	devices, d := at(remove, "Remove-VMAssignableDevice", "")
	partition, p := at(remove, "Remove-VMGpuPartitionAdapter", "")
	_, removed := at(remove, "Remove-VM", "")
	if d < 0 || p < 0 || d > removed || p > removed || !slices.Equal(devices.Args, []string{"-VMAssignableDevice", "$devices"}) ||
		!slices.Equal(partition.Args, []string{"-VM", "$vm"}) {
		t.Errorf("remove.ps1: Remove-VMAssignableDevice %d %v, Remove-VMGpuPartitionAdapter %d %v, Remove-VM %d", d, devices.Args, p, partition.Args, removed)
	}
}

// TestClusterRoleCalls reads the scripts' calls on a failover cluster: create.ps1 registers the
// role (Add-ClusterVirtualMachineRole -VMId -Name, only where Get-ClusterGroup found none) before it
// writes the complete line, and remove.ps1 unregisters it (Remove-ClusterGroup -RemoveResources)
// before it stops and removes the VM.
func TestClusterRoleCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	create, err := pscheck.Calls(filepath.Join("ps", "create.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	in := func(fn, name string) func(pscheck.Call) bool {
		return func(c pscheck.Call) bool { return c.Name == name && (fn == "" || c.Function == fn) }
	}
	get, g := pscheck.Find(create, in("Register-CapwinClusterRole", "Get-ClusterGroup"))
	add, a := pscheck.Find(create, in("Register-CapwinClusterRole", "Add-ClusterVirtualMachineRole"))
	_, r := pscheck.Find(create, in("", "Register-CapwinClusterRole"))
	last := -1
	for i, c := range create {
		if c.Name == "Set-VM" && slices.Contains(c.Args, "-Notes") {
			last = i
		}
	}
	if g < 0 || g > a || !slices.Equal(get.Args, []string{"-Name", "$In.uid", "-ErrorAction", "SilentlyContinue"}) ||
		!slices.Equal(add.Args, []string{"-VMId", "$VM.Id", "-Name", "$In.uid"}) {
		t.Errorf("Get-ClusterGroup %d %v, Add-ClusterVirtualMachineRole %d %v", g, get.Args, a, add.Args)
	}
	if r < 0 || r > last {
		t.Errorf("the role is registered by call %d, the complete line written by call %d", r, last)
	}
	remove, err := pscheck.Calls(filepath.Join("ps", "remove.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	unregister, u := pscheck.Find(remove, in("Remove-CapwinClusterRole", "Remove-ClusterGroup"))
	_, call := pscheck.Find(remove, in("", "Remove-CapwinClusterRole"))
	_, stop := pscheck.Find(remove, in("", "Stop-VM"))
	_, rm := pscheck.Find(remove, in("", "Remove-VM"))
	if u < 0 || !slices.Equal(unregister.Args, []string{"-Name", "$In.uid", "-RemoveResources", "-Force"}) || call < 0 || call > stop || call > rm {
		t.Errorf("Remove-ClusterGroup %v, called by %d, before Stop-VM %d and Remove-VM %d", unregister.Args, call, stop, rm)
	}
}

// TestParentCalls reads parent.ps1's calls: the task's copy is hashed before it is renamed into
// place, and the task runs as LocalSystem (the host's computer account on the network).
func TestParentCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	calls, err := pscheck.Calls(filepath.Join("ps", "parent.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	index := func(fn, name string) int {
		_, i := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == name && c.Function == fn })
		return i
	}
	hash, move := index("Invoke-CapwinFetch", "Get-FileHash"), index("Invoke-CapwinFetch", "Move-Item")
	if hash < 0 || move < hash {
		t.Errorf("Invoke-CapwinFetch calls Get-FileHash %d, Move-Item %d; want the hash first", hash, move)
	}
	if c, _ := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == "New-ScheduledTaskPrincipal" }); !slices.Contains(c.Args, "'S-1-5-18'") {
		t.Errorf("New-ScheduledTaskPrincipal %v, want LocalSystem (S-1-5-18)", c.Args)
	}
	register, start := index("Start-CapwinFetch", "Register-ScheduledTask"), index("Start-CapwinFetch", "Start-ScheduledTask")
	if register < 0 || start < register {
		t.Errorf("Start-CapwinFetch calls Register-ScheduledTask %d, Start-ScheduledTask %d; want the lock first", register, start)
	}
}

// TestCreateVMSettingsCalls: create.ps1 sets the automatic stop action and checkpoints only in
// Set-CapwinVMSettings, from $In.settings.
func TestCreateVMSettingsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("node parser in -short mode")
	}
	calls, err := pscheck.Calls(filepath.Join("ps", "create.ps1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if c.Name == "Set-VM" && c.Function != "Set-CapwinVMSettings" && slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "-Automatic") }) {
			t.Errorf("line %d: Set-VM %v sets an automatic setting outside Set-CapwinVMSettings", c.Line, c.Args)
		}
	}
	if c, i := pscheck.Find(calls, func(c pscheck.Call) bool { return c.Name == "Set-CapwinVMSettings" }); i < 0 || !slices.Equal(c.Args, []string{"$vm", "$In.settings"}) {
		t.Errorf("Set-CapwinVMSettings called with %v, want $vm $In.settings", c.Args)
	}
}
