package results

import (
	"os"
	"runtime"
	"strings"

	"github.com/lockbench/lockbench/internal/noise"
)

// ThisHost describes the machine lockbench runs on: CPUs, OS/architecture,
// Go version, CPU model (first "model name" of /proc/cpuinfo), kernel
// release (/proc/sys/kernel/osrelease), and what bears on noise
// (noise.HostStatic: a hypervisor, memory, a CPU quota); a text value that
// cannot be read is "unknown", a number 0.
func ThisHost() Host {
	st := noise.HostStatic("", "")
	return Host{
		CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(),
		CPUModel: cpuModel("/proc/cpuinfo"), Kernel: kernelRelease("/proc/sys/kernel/osrelease"),
		Hypervisor: st.Hypervisor, MemoryMB: st.MemoryMB, CPUQuotaCores: st.CPUQuotaCores,
	}
}

// cpuModel returns the first "model name" (x86) or "Model"/"Hardware"
// (Arm) value of a /proc/cpuinfo file, or "unknown".
func cpuModel(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	fallback := ""
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case v == "":
		case k == "model name":
			return v
		case (k == "Model" || k == "Hardware") && fallback == "":
			fallback = v
		}
	}
	if fallback != "" {
		return fallback
	}
	return "unknown"
}

// kernelRelease returns the trimmed content of an osrelease file, or "unknown".
func kernelRelease(path string) string {
	data, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(data)); err == nil && s != "" {
		return s
	}
	return "unknown"
}
