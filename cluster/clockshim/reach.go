package clockshim

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Reach reports whether the clock shim (Build) can step the
// wall clock of the processes in pid's process group, as they run now,
// and if not, why. The shim is an LD_PRELOAD library that replaces libc's
// clock_gettime, gettimeofday and time, so it reaches a process only when
// every process of the group is a dynamically linked ELF program (ld.so
// loads LD_PRELOAD; a static one never does) that is not a Go program: Go
// reads its clocks through the vDSO and raw system calls, never through
// libc, even when it is linked against libc (cgo). Python, the JVM, Node
// and C or Rust programs linked against libc read it through libc. The
// answer comes from /proc/PID/exe of each process (its ELF program
// headers and Go build information), so it holds for the programs
// running at the call: an adapter that starts another program later is
// not covered. why names the program of the first process that cannot be
// stepped and the reason, e.g. "its program /usr/local/bin/adapter is a
// Go program (go1.26.1): ..." (no pid: the reason stays the same from run
// to run).
func Reach(pid int) (ok bool, why string) {
	pids, err := processGroup(pid)
	if err != nil {
		return false, fmt.Sprintf("its processes cannot be listed (%v): the clock shim's reach cannot be told", err)
	}
	for _, p := range pids {
		if why := clockUnreachable(p); why != "" {
			return false, why
		}
	}
	return true, ""
}

// clockUnreachable says why the clock shim cannot step process pid's wall
// clock, "" when it can (see Reach).
func clockUnreachable(pid int) string {
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	name, err := os.Readlink(exe)
	if err != nil {
		return fmt.Sprintf("its executable cannot be read (%v): the clock shim's reach cannot be told", err)
	}
	who := "its program " + name
	f, err := elf.Open(exe)
	if err != nil {
		return fmt.Sprintf("%s is not an ELF program the clock shim can be preloaded into (%v)", who, err)
	}
	interp := false
	for _, p := range f.Progs {
		interp = interp || p.Type == elf.PT_INTERP
	}
	f.Close()
	if !interp {
		return who + " is statically linked: ld.so never loads LD_PRELOAD into it, so the clock shim cannot step its clock"
	}
	if bi, err := buildinfo.ReadFile(exe); err == nil {
		return fmt.Sprintf("%s is a Go program (%s): Go reads its clocks through the vDSO and raw system calls, never libc's clock_gettime, so the clock shim (an LD_PRELOAD of libc's clock calls) cannot step them", who, bi.GoVersion)
	}
	return ""
}

// processGroup returns the process ids whose process group is pgid, in
// ascending order (pgid itself first when it is alive), read from
// /proc/*/stat.
func processGroup(pgid int) ([]int, error) {
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, pid)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no process in group %d", pgid)
	}
	sort.Ints(out)
	return out, nil
}
