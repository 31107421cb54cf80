// Package vcenter is capwin's vCenter backend on govmomi: the VM services the machine lifecycle
// asks for (find, clone, deliver, power, delete, tasks), what a VM should look like (clone spec,
// placement cached per template, data disks, tags, anti-affinity rules, failure domain groups,
// GPUs, security, guest operations, templates and content libraries), the words of vSphere
// faults, and the Provider that builds a backend per reconcile. Talking to vCenter (sessions,
// logins, the watch, task slots, call metrics) is package session's.
package vcenter
