package noise

import (
	"os"
	"strconv"
	"strings"
)

// Static is what does not change during a run but bears on its noise.
type Static struct {
	// Hypervisor is true when the CPU reports running under a hypervisor
	// (the "hypervisor" flag of /proc/cpuinfo): other guests can steal CPU
	// time (Summary.StealShare).
	Hypervisor bool
	// MemoryMB is the machine's memory (MemTotal of /proc/meminfo), in
	// MiB; 0 when unknown.
	MemoryMB int
	// CPUQuotaCores is the CPU limit of lockbench's control group (cgroup
	// v2 cpu.max or v1 cpu.cfs_quota_us / cpu.cfs_period_us), in cores;
	// 0 when there is none or it cannot be read.
	CPUQuotaCores float64
}

// HostStatic reads Static from the proc file system mounted at proc
// ("": /proc) and the cgroup file system mounted at cgroup (""
// : /sys/fs/cgroup). What cannot be read is left zero.
func HostStatic(proc, cgroup string) Static {
	if proc == "" {
		proc = "/proc"
	}
	if cgroup == "" {
		cgroup = "/sys/fs/cgroup"
	}
	var s Static
	if b, err := os.ReadFile(proc + "/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "flags" {
				s.Hypervisor = strings.Contains(" "+v+" ", " hypervisor ")
				break
			}
		}
	}
	if b, err := os.ReadFile(proc + "/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.Atoi(f[1])
				s.MemoryMB = kb / 1024
				break
			}
		}
	}
	s.CPUQuotaCores = cpuQuota(cgroup)
	return s
}

// cpuQuota reads the CPU limit in cores of the cgroup file system at
// root: v2's cpu.max ("max 100000" is none), else v1's
// cpu/cpu.cfs_quota_us (-1 is none) over cpu/cpu.cfs_period_us.
func cpuQuota(root string) float64 {
	if b, err := os.ReadFile(root + "/cpu.max"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			q, err1 := strconv.ParseFloat(f[0], 64)
			p, err2 := strconv.ParseFloat(f[1], 64)
			if err1 == nil && err2 == nil && p > 0 {
				return q / p
			}
		}
		return 0
	}
	qb, err1 := os.ReadFile(root + "/cpu/cpu.cfs_quota_us")
	pb, err2 := os.ReadFile(root + "/cpu/cpu.cfs_period_us")
	if err1 != nil || err2 != nil {
		return 0
	}
	q, err1 := strconv.ParseFloat(strings.TrimSpace(string(qb)), 64)
	p, err2 := strconv.ParseFloat(strings.TrimSpace(string(pb)), 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0
	}
	return q / p
}
