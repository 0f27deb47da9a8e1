package cgroup

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Start starts cmd born inside pc (nil: in the host's own cgroups), from the one thread
// that starts every child (see spawner).
func Start(cmd *exec.Cmd, pc *Proc) error {
	done := make(chan error, 1)
	spawner() <- spawnReq{cmd: cmd, cg: pc, done: done}
	return <-done
}

// spawnReq asks the spawner thread to start a command in a cgroup.
type spawnReq struct {
	cmd  *exec.Cmd
	cg   *Proc
	done chan error
}

// spawner starts every process from one OS thread that never exits. The kernel sends the
// Pdeathsig when the thread that forked the child exits, not the process; the Go runtime
// may retire other threads, which would kill healthy children.
var spawner = sync.OnceValue(func() chan<- spawnReq {
	ch := make(chan spawnReq)
	go func() {
		runtime.LockOSThread()
		for req := range ch {
			req.done <- startIn(req.cmd, req.cg)
		}
	}()
	return ch
})

// startIn starts cmd with the process born inside cg, so that nothing it forks can start
// outside it. cgroup v2 clones it there (CLONE_INTO_CGROUP). cgroup v1 has no such call,
// so the spawner thread itself joins cg's folders for the fork and leaves them after: a
// child is born in its parent thread's cgroups, and moving it after the start would race
// with its first forks. Only the spawner runs on its thread, and a v1 memory cgroup
// charges a process's memory to its leader's cgroup, not this thread's.
func startIn(cmd *exec.Cmd, cg *Proc) error {
	if cg == nil {
		return cmd.Start()
	}
	if cg.v2 != "" {
		fd, err := unix.Open(cg.v2, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open the plugin's cgroup: %w", err)
		}
		defer unix.Close(fd)
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	}
	tid := strconv.Itoa(unix.Gettid())
	var errs []error
	joined := 0
	for _, d := range cg.v1 {
		if err := writeFile(filepath.Join(d, "tasks"), tid); err != nil {
			errs = append(errs, err)
			break
		}
		joined++
	}
	if len(errs) == 0 {
		errs = append(errs, cmd.Start())
	}
	for _, home := range cg.v1home[:joined] {
		if err := writeFile(filepath.Join(home, "tasks"), tid); err != nil {
			errs = append(errs, fmt.Errorf("the host's spawner thread could not return to its cgroup: %w", err))
		}
	}
	return errors.Join(errs...)
}
