package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// capNames are the Linux capabilities by number, as OCI specs name them.
var capNames = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
	"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
	"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
	"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
	"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// missingCaps are the capabilities this kernel knows that are not in this process's bounding set.
func missingCaps() map[string]bool {
	bnd, err := boundingSet()
	if err != nil {
		return nil
	}
	last := len(capNames) - 1
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n < last {
			last = n
		}
	}
	missing := map[string]bool{}
	for i := 0; i <= last; i++ {
		if bnd&(1<<uint(i)) == 0 {
			missing[capNames[i]] = true
		}
	}
	return missing
}

func boundingSet() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "CapBnd:"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("no CapBnd in /proc/self/status")
}

// dropCaps removes the missing capabilities from every capability set of the process in file
// (an OCI runtime config.json, whose process is under "process", or a process.json) and, without
// CAP_SYS_RESOURCE, raises an oomScoreAdj below this process's own to it: lowering it needs that
// capability, and runc fails the whole container when it cannot ("can't get final child's PID
// from pipe"; the kubelet asks -998 for every pod sandbox). The rest of the document is kept.
func dropCaps(file string, missing map[string]bool) error {
	data, err := os.ReadFile(file) //nolint:gosec // G304: the bundle or process file that dockerd or containerd gave runc
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	process := doc
	if p, ok := doc["process"].(map[string]any); ok {
		process = p
	}
	changed := false
	if caps, ok := process["capabilities"].(map[string]any); ok {
		changed = filterCaps(caps, missing)
	}
	if missing["CAP_SYS_RESOURCE"] && raiseOOMScoreAdj(process) {
		changed = true
	}
	if !changed {
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	st, err := os.Stat(file) //nolint:gosec // G703: the same file, given by dockerd or containerd
	if err != nil {
		return err
	}
	return os.WriteFile(file, out, st.Mode().Perm()) //nolint:gosec // G703: the same file, given by dockerd or containerd
}

// filterCaps drops the missing capabilities from each set; it reports whether anything changed.
func filterCaps(caps map[string]any, missing map[string]bool) bool {
	changed := false
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := list[:0:0]
		for _, c := range list {
			if name, ok := c.(string); ok && missing[name] {
				changed = true
				continue
			}
			kept = append(kept, c)
		}
		caps[set] = kept
	}
	return changed
}

// raiseOOMScoreAdj sets the process's oomScoreAdj to this process's own where it asks for less;
// it reports whether it changed anything.
func raiseOOMScoreAdj(process map[string]any) bool {
	want, ok := process["oomScoreAdj"].(float64)
	if !ok {
		return false
	}
	b, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		return false
	}
	own, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || int(want) >= own {
		return false
	}
	process["oomScoreAdj"] = own
	return true
}
